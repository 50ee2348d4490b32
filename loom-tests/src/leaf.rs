//! A value for the arena that finishes once another thread fires it.

use core::pin::Pin;
use core::task::{Context, Poll};

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use pinfold_arena::{Arena, Key, Step, Storage};

/// A value stored in an arena: pending until its [`Probe`] is fired, then done. It stands for
/// a future waiting on another thread (a channel's receiver), minus the channel: the firing
/// thread wakes the slot's waker from [`Arena::waker`](pinfold_arena::Arena::waker) itself.
#[derive(Debug)]
pub struct Leaf {
    id: usize,
    probe: Arc<Probe>,
}

/// What a [`Leaf`] shares with the test: whether it was fired, how often it was polled and
/// dropped.
#[derive(Debug)]
pub struct Probe {
    fired: AtomicBool,
    polls: AtomicUsize,
    drops: AtomicUsize,
}

impl Leaf {
    /// A leaf that outputs `id`, and the probe that fires and watches it.
    pub fn new(id: usize) -> (Self, Arc<Probe>) {
        let probe = Arc::new(Probe {
            fired: AtomicBool::new(false),
            polls: AtomicUsize::new(0),
            drops: AtomicUsize::new(0),
        });
        (
            Self {
                id,
                probe: Arc::clone(&probe),
            },
            probe,
        )
    }

    /// Another leaf, outputting `id`, on the same probe (cheap filler for a big arena).
    pub fn sharing(&self, id: usize) -> Self {
        Self {
            id,
            probe: Arc::clone(&self.probe),
        }
    }

    /// The output this leaf gives.
    pub fn id(&self) -> usize {
        self.id
    }

    /// Whether the leaf's probe was fired, as the owner sees it now.
    pub fn is_fired(&self) -> bool {
        // Relaxed on purpose: the firing thread wrote the flag before waking, and the arena
        // promises that a value polled after a wake sees what the waker did before it
        // (`ready_set::wake`'s Release, the drain's Acquire). Nothing else orders this load.
        self.probe.fired.load(Ordering::Relaxed)
    }

    /// Polls the leaf, counting the poll: [`Step::Done`] with the id once fired.
    pub fn poll(self: Pin<&mut Self>) -> Step<usize> {
        self.probe.polls.fetch_add(1, Ordering::Relaxed);
        if self.is_fired() {
            Step::Done(self.id)
        } else {
            Step::Pending
        }
    }
}

/// [`Leaf::poll`] in the shape [`Arena::poll_next`](pinfold_arena::Arena::poll_next) takes.
pub fn poll_leaf(_key: Key, leaf: Pin<&mut Leaf>, _cx: &mut Context<'_>) -> Step<usize> {
    leaf.poll()
}

impl Drop for Leaf {
    fn drop(&mut self) {
        self.probe.drops.fetch_add(1, Ordering::Relaxed);
    }
}

impl Probe {
    /// Fires the leaf. Relaxed: the wake that follows must publish it (see [`Leaf::is_fired`]).
    pub fn fire(&self) {
        self.fired.store(true, Ordering::Relaxed);
    }

    /// How many times the leaf was polled. Read by the owner, who polls it.
    pub fn polls(&self) -> usize {
        self.polls.load(Ordering::Relaxed)
    }

    /// How many times the leaf was dropped. Read by the owner, who drops it.
    pub fn drops(&self) -> usize {
        self.drops.load(Ordering::Relaxed)
    }
}

/// One [`Arena::poll_next`](pinfold_arena::Arena::poll_next) of an arena of leaves, giving the
/// output without its key.
pub fn poll_arena(arena: &mut Arena<Leaf>, cx: &mut Context<'_>) -> Poll<Option<usize>> {
    arena
        .poll_next(cx, poll_leaf)
        .map(|next| next.map(|(_key, id)| id))
}

/// Inserts a fired leaf with output `id` into `arena` and polls it: the poll clones the waker it
/// is given and the leaf finishes. Returns the leaf's key and probe, and the clone: an owned
/// waker of a value that has left.
pub fn finish_keeping_a_waker(
    arena: &mut Arena<Leaf>,
    cx: &mut Context<'_>,
    id: usize,
) -> (Key, Arc<Probe>, core::task::Waker) {
    let (leaf, probe) = Leaf::new(id);
    probe.fire();
    let key = arena.insert(leaf).unwrap();
    let mut stash = None;
    let done = arena.poll_next(cx, |_, leaf, cx| {
        stash = Some(cx.waker().clone());
        leaf.poll()
    });
    assert_eq!(done, Poll::Ready(Some((key, id))));
    assert_eq!((probe.polls(), probe.drops()), (1, 1));
    (key, probe, stash.take().unwrap())
}

/// Inserts a leaf with output `id` into `arena` and polls it once, the leaf not fired: the
/// poll clones the waker it is given and the leaf stays pending. Returns the leaf's key and
/// probe, and the clone: an owned waker of a value the arena holds.
pub fn pend_keeping_a_waker(
    arena: &mut Arena<Leaf>,
    cx: &mut Context<'_>,
    id: usize,
) -> (Key, Arc<Probe>, core::task::Waker) {
    let (leaf, probe) = Leaf::new(id);
    let key = arena.insert(leaf).unwrap();
    let mut stash = None;
    let pending = arena.poll_next(cx, |polled, _, cx| -> Step<()> {
        assert_eq!(polled, key, "the only value woken");
        stash = Some(cx.waker().clone());
        Step::Pending
    });
    assert_eq!(pending, Poll::Pending);
    (key, probe, stash.take().unwrap())
}

/// A value that wakes itself, polled through a [`Spinner`] instead of [`poll_leaf`].
#[derive(Debug)]
pub struct Spinner {
    /// The spinning value's key.
    pub key: Key,
    /// It finishes (with its leaf's id) on this poll.
    pub spins: usize,
    /// How often it wakes itself in each poll before that one.
    pub wakes: usize,
    /// Its polls so far.
    pub polled: usize,
}

impl Spinner {
    /// One [`Arena::poll_next`](pinfold_arena::Arena::poll_next) of an arena of leaves, in
    /// which the leaf at `self.key` wakes itself `self.wakes` times and is pending until its
    /// `self.spins`th poll, the others polled by [`poll_leaf`]; fails if the call polls the
    /// spinning value twice.
    pub fn poll(&mut self, arena: &mut Arena<Leaf>, cx: &mut Context<'_>) -> Poll<Option<usize>> {
        let mut polled_now = 0;
        let next = arena.poll_next(cx, |key, leaf, cx| {
            if key != self.key {
                return poll_leaf(key, leaf, cx);
            }
            polled_now += 1;
            self.polled += 1;
            if self.polled == self.spins {
                return Step::Done(leaf.id());
            }
            for _ in 0..self.wakes {
                cx.waker().wake_by_ref();
            }
            Step::Pending
        });
        assert!(
            polled_now <= 1,
            "one poll call polled the self-waking value {polled_now} times"
        );
        next.map(|next| next.map(|(_, id)| id))
    }
}
