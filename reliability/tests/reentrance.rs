//! Re-entrance: a parent waker whose `wake` polls the primitive, through `Mutex::try_lock`
//! from any thread (futures-buffered deadlocked here), or through `RefCell::try_borrow_mut` on
//! the owning thread. It must not deadlock (a watchdog aborts the run), no borrow error may
//! come out of pinfold, and every output must arrive. And a parent waker that drops the
//! primitive from inside `wake`, with the primitive's wake path still on the stack: nothing
//! may be used after it is freed (`cargo xtask valgrind` runs this file under memcheck to see
//! that), every future is dropped once, and the parent waker is released.
//!
//! The parent wakers and the primitives under test are the crate's
//! ([`reentrance`](pinfold_reliability::reentrance)); this file holds the cases.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};
use std::thread;
use std::time::{Duration, Instant};

use pinfold_reliability::ctl::{Out, Outcome, World};
use pinfold_reliability::reentrance::{
    DOOMED, DroppingParent, HOOK, KINDS, LockingParent, RefCellParent, futures, primitive,
};
use pinfold_reliability::sizes::time_limit;
use pinfold_reliability::wake_threads::WakeThreads;
use pinfold_reliability::watchdog::Watchdog;

#[test]
fn a_parent_waker_that_locks_and_polls_from_wake_does_not_deadlock() {
    let _watchdog = Watchdog::arm("locking parent", Duration::from_secs(120));
    const N: usize = 64;
    for kind in KINDS {
        let mut world = World::new(kind);
        let (futures, handles) = futures(&mut world, N);
        let parent = Arc::new(LockingParent {
            primitive: Mutex::new(Some(primitive(kind, futures))),
            outputs: Mutex::new(Vec::new()),
            woken: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            reentered: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
        });
        parent.run(false);
        // Three quarters from other threads at once (their wakes race the polls they cause),
        // the rest from here, each polling the primitive from inside its wake.
        thread::scope(|scope| {
            for t in 0..3 {
                let handles = &handles;
                scope.spawn(move || {
                    for ctl in handles.iter().skip(t).step_by(4) {
                        ctl.complete(Outcome::Ok);
                    }
                });
            }
        });
        for ctl in handles.iter().skip(3).step_by(4) {
            ctl.complete(Outcome::Ok);
        }
        let deadline = Instant::now() + time_limit(Duration::from_secs(30));
        while parent.outputs.lock().unwrap().len() < N {
            assert!(
                Instant::now() < deadline,
                "{kind}: {} of {N} outputs, woken {}: a wake was lost",
                parent.outputs.lock().unwrap().len(),
                parent.woken.load(Ordering::SeqCst)
            );
            thread::sleep(Duration::from_millis(1));
        }
        let mut outputs = parent.outputs.lock().unwrap().clone();
        if kind == "join_all" || kind.starts_with("ordered") {
            assert!(outputs.iter().copied().eq(0..N as u32), "{kind}: order");
        }
        outputs.sort_unstable();
        assert!(outputs.iter().copied().eq(0..N as u32), "{kind}: outputs");
        assert!(
            parent.reentered.load(Ordering::SeqCst) > 0,
            "{kind}: no wake re-entered the primitive"
        );
        let primitive = parent.primitive.lock().unwrap().take();
        drop(primitive);
        assert_eq!(
            Arc::strong_count(&parent),
            1,
            "{kind}: the dropped primitive kept its parent waker"
        );
        world
            .check_all_dropped_once()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

#[test]
fn a_parent_waker_that_polls_through_a_refcell_from_wake_gets_every_output() {
    let _watchdog = Watchdog::arm("refcell parent", Duration::from_secs(120));
    const N: usize = 48;
    let threads = WakeThreads::new(1);
    for kind in KINDS {
        let mut world = World::new(kind);
        let (futures, handles) = futures(&mut world, N);
        let parent = Arc::new(RefCellParent {
            owner: thread::current().id(),
            woken: AtomicBool::new(true),
            reentered: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
        });
        let outputs = Rc::new(RefCell::new(Vec::new()));
        let mut primitive = primitive(kind, futures);
        let waker = Waker::from(parent.clone());
        let hook_parent = parent.clone();
        let hook_outputs = outputs.clone();
        HOOK.with(|hook| {
            *hook.borrow_mut() = Some(Box::new(move || {
                let mut cx = Context::from_waker(&waker);
                let mut taken = Vec::new();
                loop {
                    hook_parent.woken.store(false, Ordering::SeqCst);
                    if primitive.poll_into(&mut cx, &mut taken).is_ready()
                        || !hook_parent.woken.load(Ordering::SeqCst)
                    {
                        break;
                    }
                }
                hook_outputs.borrow_mut().extend(taken.iter().map(Out::id));
            }));
        });
        let poll_if_woken = || {
            if parent.woken.load(Ordering::SeqCst) {
                HOOK.with(|hook| (hook.borrow_mut().as_mut().expect("hook set"))());
            }
        };
        poll_if_woken();
        for (i, ctl) in handles.iter().enumerate() {
            if i % 5 == 4 {
                // From another thread: only recorded; the owner polls after.
                let ctl = ctl.clone();
                threads.run_on(0, move || {
                    ctl.complete(Outcome::Ok);
                });
                poll_if_woken();
            } else {
                // Here: the wake polls the primitive from inside itself.
                ctl.complete(Outcome::Ok);
            }
        }
        poll_if_woken();
        let got = outputs.borrow().clone();
        assert_eq!(got.len(), N, "{kind}: outputs {got:?}");
        let mut sorted = got.clone();
        sorted.sort_unstable();
        assert!(sorted.iter().copied().eq(0..N as u32), "{kind}: outputs");
        if kind == "join_all" || kind.starts_with("ordered") {
            assert!(got.iter().copied().eq(0..N as u32), "{kind}: order");
        }
        assert!(
            parent.reentered.load(Ordering::SeqCst) > 0,
            "{kind}: no wake re-entered the primitive"
        );
        HOOK.with(|hook| drop(hook.borrow_mut().take()));
        world
            .check_all_dropped_once()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

#[test]
fn a_parent_waker_that_drops_the_primitive_from_wake_is_safe() {
    let _watchdog = Watchdog::arm("dropping parent", Duration::from_secs(120));
    const N: usize = 40;
    let threads = WakeThreads::new(1);
    for kind in KINDS {
        let mut world = World::new(kind);
        let (futures, handles) = futures(&mut world, N);
        let parent = Arc::new(DroppingParent {
            owner: thread::current().id(),
            dropped: AtomicBool::new(false),
        });
        let waker = Waker::from(parent.clone());
        let mut primitive = primitive(kind, futures);
        let mut taken = Vec::new();
        assert!(
            primitive
                .poll_into(&mut Context::from_waker(&waker), &mut taken)
                .is_pending(),
            "{kind}: nothing was completed yet"
        );
        DOOMED.with(|doomed| *doomed.borrow_mut() = Some(primitive));
        // The first completion wakes the parent, which drops everything; the rest are wakes of
        // futures that are gone, from here and from another thread.
        for (i, ctl) in handles.iter().enumerate() {
            if i % 3 == 2 {
                let ctl = ctl.clone();
                threads.run_on(0, move || {
                    ctl.complete(Outcome::Ok);
                });
            } else {
                ctl.complete(Outcome::Ok);
                ctl.wake();
            }
        }
        assert!(
            parent.dropped.load(Ordering::SeqCst),
            "{kind}: the parent was never woken"
        );
        world
            .check_all_dropped_once()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        // The futures' shared state (the world and the handles) may hold the parent's waker
        // too: a join's first polls hand the task's waker to the futures themselves. Once they
        // are gone, nothing else may.
        drop((world, handles));
        drop(waker);
        assert_eq!(
            Arc::strong_count(&parent),
            1,
            "{kind}: the primitive kept its parent waker after it was dropped"
        );
    }
}
