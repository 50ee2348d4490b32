//! Allocations: `new` allocates at most twice, and nothing is allocated after it: not by
//! acquiring, writing, freezing, cloning, slicing or dropping, and not by waiting in `acquire`
//! beyond what the task's own waker allocates when the pool clones it.
//!
//! The counting allocator counts per thread, and every test here runs on one thread.
// They write through `std::io::Write`.
#![cfg(feature = "std")]

mod support;

use std::io::Write;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Poll, RawWaker, RawWakerVTable, Waker};

use pinfold_pool::{BufferPool, Packet};
use pinfold_testkit::alloc::{CountingAlloc, measure, measure_bytes};
use support::{counting_waker, poll_once, poll_with};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// The counter counts: a `Vec` made inside the window is seen.
fn assert_the_counter_counts() {
    let (_, seen) = measure(|| Vec::<u8>::with_capacity(1));
    assert_eq!(seen, 1, "the counting allocator does not count");
}

#[test]
fn new_allocates_at_most_twice() {
    assert_the_counter_counts();
    for (count, size) in [
        (0, 0),
        (0, 64),
        (1, 0),
        (1, 1),
        (3, 100),
        (16, 4096),
        (1000, 7),
    ] {
        let (pool, made) = measure(|| BufferPool::new(count, size));
        assert!(made <= 2, "new({count}, {size}) made {made} allocations");
        assert_eq!(pool.capacity(), count);
        assert_eq!(pool.available(), count);
    }
}

#[test]
fn acquire_write_freeze_clone_slice_and_drop_cycles_allocate_nothing() {
    assert_the_counter_counts();
    let cycles: u64 = if cfg!(miri) { 1_000 } else { 1_000_000 };
    let pool = BufferPool::new(4, 64);
    let (checksum, made) = measure(|| {
        let mut checksum = 0u64;
        // A packet kept from the previous cycle, so that buffers take turns.
        let mut kept: Option<Packet> = None;
        for cycle in 0..cycles {
            let mut buf = if cycle % 2 == 0 {
                pool.try_acquire().expect("a free buffer")
            } else {
                match poll_once(&mut pin!(pool.acquire())) {
                    Poll::Ready(buf) => buf,
                    Poll::Pending => panic!("acquire waited with buffers free"),
                }
            };
            buf.write_all(&cycle.to_le_bytes()).unwrap();
            let packet = buf.freeze();
            let clone = packet.clone();
            let slice = clone.slice(1..5);
            assert_eq!(slice[..], cycle.to_le_bytes()[1..5]);
            checksum += u64::from(slice[0]);
            // Drop in an order that changes with the cycle, so each of them is sometimes last.
            match cycle % 3 {
                0 => drop((packet, clone)),
                1 => drop((slice.clone(), clone, packet)),
                _ => kept = Some(packet),
            }
            drop(slice);
            if cycle % 3 == 0 {
                kept = None;
            }
        }
        drop(kept);
        checksum
    });
    assert_eq!(
        made, 0,
        "{cycles} acquire/write/freeze/clone/slice/drop cycles made {made} allocations"
    );
    assert!(checksum > 0);
    assert_eq!(pool.available(), pool.capacity());
}

#[test]
fn waiting_in_acquire_allocates_nothing_with_a_waker_whose_clone_does_not() {
    assert_the_counter_counts();
    let pool = BufferPool::new(1, 8);
    let (first, first_wakes) = counting_waker();
    let (second, _) = counting_waker();
    let (third, third_wakes) = counting_waker();
    let held = pool.try_acquire().unwrap();
    let mut waiter = Box::pin(pool.acquire());
    let mut cancelled = Box::pin(pool.acquire());
    let (got, made) = measure(|| {
        assert!(poll_with(&mut waiter, &first).is_pending());
        assert!(poll_with(&mut cancelled, &third).is_pending());
        // Polled again: with the same waker, then with another.
        assert!(poll_with(&mut waiter, &first).is_pending());
        assert!(poll_with(&mut waiter, &second).is_pending());
        drop(cancelled);
        drop(held); // hands the buffer over and wakes `second`
        let Poll::Ready(got) = poll_with(&mut waiter, &second) else {
            panic!("the waiter was not handed the released buffer");
        };
        got
    });
    assert_eq!(made, 0, "waiting in acquire made {made} allocations");
    assert_eq!(first_wakes.count(), 0);
    assert_eq!(third_wakes.count(), 0);
    drop(got);
    assert_eq!(pool.available(), 1);
}

#[test]
fn waiting_in_acquire_allocates_only_what_the_wakers_clones_allocate() {
    assert_the_counter_counts();
    let pool = BufferPool::new(1, 8);
    let counts = Arc::new(WakerCounts::default());
    let waker = boxing_waker(&counts);
    let held = pool.try_acquire().unwrap();
    let mut waiter = Box::pin(pool.acquire());
    let polls = 3;
    let ((), made) = measure(|| {
        for _ in 0..polls {
            assert!(poll_with(&mut waiter, &waker).is_pending());
        }
        drop(held);
        assert!(poll_with(&mut waiter, &waker).is_ready());
    });
    let clones = counts.clones.load(Ordering::SeqCst);
    assert!(clones >= 1, "the pool kept no waker to wake the task with");
    assert!(
        clones <= polls,
        "{clones} waker clones in {polls} pending polls"
    );
    assert_eq!(
        made, clones,
        "waiting made {made} allocations, of which {clones} were the waker's clones"
    );
    assert_eq!(
        counts.wakes.load(Ordering::SeqCst),
        1,
        "the release woke the task once"
    );
    drop(waiter);
    drop(waker);
    assert_eq!(
        counts.drops.load(Ordering::SeqCst),
        clones + 1,
        "every clone the pool made, and the waker itself, was dropped or consumed once"
    );
}

/// What a [`boxing_waker`] and its clones did.
#[derive(Debug, Default)]
struct WakerCounts {
    clones: AtomicUsize,
    wakes: AtomicUsize,
    /// Wakers dropped or woken by value.
    drops: AtomicUsize,
}

/// A waker whose every clone allocates (a new `Box`), as some executors' wakers do, and
/// counts in `counts` what is done with it.
fn boxing_waker(counts: &Arc<WakerCounts>) -> Waker {
    let data = Box::into_raw(Box::new(counts.clone()))
        .cast_const()
        .cast::<()>();
    // SAFETY: `data` is a leaked `Box<Arc<WakerCounts>>`, which is what every function of
    // `BOXING` takes; each of them keeps the `RawWaker` contract (see their comments).
    unsafe { Waker::from_raw(RawWaker::new(data, &BOXING)) }
}

const BOXING: RawWakerVTable =
    RawWakerVTable::new(boxing_clone, boxing_wake, boxing_wake_by_ref, boxing_drop);

/// # Safety
/// `data` is a live `Box<Arc<WakerCounts>>` leaked by [`boxing_waker`] or a clone.
unsafe fn boxing_clone(data: *const ()) -> RawWaker {
    // SAFETY: the caller's contract; the box is only read here.
    let counts = unsafe { &*data.cast::<Arc<WakerCounts>>() };
    counts.clones.fetch_add(1, Ordering::SeqCst);
    let clone = Box::into_raw(Box::new(counts.clone()))
        .cast_const()
        .cast::<()>();
    RawWaker::new(clone, &BOXING)
}

/// # Safety
/// As [`boxing_clone`]; the waker is not used again.
unsafe fn boxing_wake(data: *const ()) {
    // SAFETY: the caller's contract: the waker is consumed, so its box is freed once.
    unsafe { boxing_wake_by_ref(data) };
    // SAFETY: as above.
    unsafe { boxing_drop(data) };
}

/// # Safety
/// As [`boxing_clone`].
unsafe fn boxing_wake_by_ref(data: *const ()) {
    // SAFETY: the caller's contract; the box is only read here.
    let counts = unsafe { &*data.cast::<Arc<WakerCounts>>() };
    counts.wakes.fetch_add(1, Ordering::SeqCst);
}

/// # Safety
/// As [`boxing_clone`]; the waker is not used again.
unsafe fn boxing_drop(data: *const ()) {
    // SAFETY: the caller's contract: the box was leaked by `boxing_waker` or `boxing_clone`
    // and is freed once, here.
    let counts = unsafe { Box::from_raw(data.cast_mut().cast::<Arc<WakerCounts>>()) };
    counts.drops.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn batches_between_the_caches_and_the_shared_list_allocate_nothing() {
    assert_the_counter_counts();
    // 200 buffers move in batches of several: holding all of them and giving them back
    // refills this thread's cache from the shared list, and returns batches to it, many times.
    let rounds = if cfg!(miri) { 2 } else { 100 };
    let pool = BufferPool::new(200, 8);
    let mut held = Vec::with_capacity(200);
    let ((), made) = measure(|| {
        for _ in 0..rounds {
            while let Some(buf) = pool.try_acquire() {
                held.push(buf);
            }
            assert_eq!(held.len(), 200);
            held.clear();
        }
    });
    assert_eq!(made, 0, "moving batches made {made} allocations");
    assert_eq!(pool.available(), 200);
}

/// The pool's memory is freed with the last of its handles, buffers and packets, whatever the
/// order they go in, and also when the last handle goes while released buffers sit in the
/// thread's cache or a batch of them went back to the shared list.
#[test]
fn the_memory_goes_with_the_last_handle_buffer_or_packet() {
    for order in 0..4 {
        let ((), bytes) = measure_bytes(|| {
            let pool = BufferPool::new(64, 256);
            // More than two batches: releasing them fills the cache and returns batches.
            let bufs: Vec<_> = (0..40)
                .map(|_| pool.try_acquire().expect("a free buffer"))
                .collect();
            let mut kept = pool.try_acquire().expect("a free buffer");
            kept.write_all(b"kept").unwrap();
            let packet = kept.freeze();
            let copy = packet.slice(1..);
            drop(bufs);
            let held = pool.try_acquire().expect("a free buffer");
            match order {
                0 => drop((pool, packet, held, copy)),
                1 => drop((copy, held, packet, pool)),
                2 => {
                    drop((held, pool, packet));
                    assert_eq!(&copy[..], b"ept", "the last packet still reads its bytes");
                    drop(copy);
                }
                _ => {
                    drop((packet, copy, pool));
                    drop(held);
                }
            }
        });
        assert_eq!(
            bytes.change, 0,
            "order {order}: the pool's memory was not freed"
        );
        assert!(
            bytes.peak > 64 * 256,
            "order {order}: the pool was allocated"
        );
    }
}

/// The last handle's drop frees the pool's memory when nothing else is out, with none, one or
/// two released buffers in the thread's stock (which the drop takes back).
#[test]
fn the_memory_goes_with_the_last_handle_whatever_the_stock_holds() {
    for stocked in 0..3 {
        let ((), bytes) = measure_bytes(|| {
            let pool = BufferPool::new(64, 256);
            let bufs: Vec<_> = (0..stocked)
                .map(|_| pool.try_acquire().expect("a free buffer"))
                .collect();
            drop(bufs);
            assert_eq!(pool.available(), 64);
            drop(pool);
        });
        assert_eq!(
            bytes.change, 0,
            "{stocked} buffers in the stock: the pool's memory was not freed"
        );
    }
}
