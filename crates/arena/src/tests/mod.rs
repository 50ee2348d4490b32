//! Unit tests of the arena, mostly through its public API, a file per topic; what several
//! files use (one poll of an arena, a value that counts its drops, the counting allocator) is
//! here.

mod auto_traits;
mod drain_tail;
mod fairness;
mod first_mark;
mod growable;
mod growable_regrowth;
mod growable_unwind;
mod growable_worst;
mod keys;
mod memory;
mod order;
mod panics;
mod ready_edges;
mod rounds;
mod stale_wakers;
mod table_refs;
mod values;
mod wakes;
mod watch;
mod watch_edges;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_testkit::alloc::CountingAlloc;

use crate::{GrowableArena, Key, Step, Storage};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// One `poll_next` of an arena of futures (of either kind), with `waker` as the task's waker;
/// the output without its key.
fn next<F: Future, S: Storage<F>>(arena: &mut S, waker: &Waker) -> Poll<Option<F::Output>> {
    let mut cx = Context::from_waker(waker);
    arena
        .poll_next(&mut cx, |_, fut, cx| Step::of_future(fut.poll(cx)))
        .map(|next| next.map(|(_, out)| out))
}

/// [`next`] for a growable arena, with the output's key.
fn next_growable<F: Future>(
    arena: &mut GrowableArena<F>,
    waker: &Waker,
) -> Poll<Option<(Key, F::Output)>> {
    let mut cx = Context::from_waker(waker);
    arena.poll_next(&mut cx, |_, fut, cx| Step::of_future(fut.poll(cx)))
}

/// Counts drops of its instances.
#[derive(Debug)]
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
