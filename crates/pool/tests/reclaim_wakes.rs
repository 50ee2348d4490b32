//! `Buf::poll_reclaim`: a `Buf` waits for the packets split off it to be dropped. It is ready
//! at once when none is left, is woken once by the last drop (on any thread, with the last
//! poll's waker), keeps no waker once it is split, frozen, reclaimed or dropped, and a waker
//! that panics in any call leaves the buffer whole: it goes back to the pool exactly once.

mod support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::{Context, Poll, Waker};
use std::thread;

use pinfold_pool::{Buf, BufferPool, Packet};
use pinfold_testkit::panicking_waker::{WakerOps, panicking_waker};
use support::{block_on, counting_waker};

fn poll(buf: &mut Buf, waker: &Waker) -> Poll<()> {
    buf.poll_reclaim(&mut Context::from_waker(waker))
}

/// The pool's one buffer with `abcdef` written and `abcd` split off.
fn split(pool: &BufferPool) -> (Buf, Packet) {
    let mut buf = pool.try_acquire().unwrap();
    assert!(buf.try_extend_from_slice(b"abcdef"));
    let packet = buf.split_to(4);
    (buf, packet)
}

#[test]
fn a_buf_with_no_packet_left_is_reclaimed_at_once() {
    let pool = BufferPool::new(1, 8);
    let (waker, wakes) = counting_waker();
    let mut buf = pool.try_acquire().unwrap();
    assert!(buf.try_extend_from_slice(b"ab"));
    assert!(poll(&mut buf, &waker).is_ready(), "nothing was split off");
    drop(buf.split_to(1));
    assert!(poll(&mut buf, &waker).is_ready());
    assert_eq!((&buf[..], buf.capacity()), (&b"b"[..], 8));
    assert_eq!(wakes.count(), 0);
}

#[test]
fn the_last_packet_drop_wakes_the_waiting_buf_once() {
    let pool = BufferPool::new(1, 8);
    let (mut buf, packet) = split(&pool);
    let (waker, wakes) = counting_waker();
    assert!(poll(&mut buf, &waker).is_pending());
    // Packets made while the buf waits count as the others do.
    let (clone, slice) = (packet.clone(), packet.slice(1..2));
    drop(packet);
    drop(clone);
    assert!(
        poll(&mut buf, &waker).is_pending(),
        "the slice holds the bytes"
    );
    assert_eq!(wakes.count(), 0);
    drop(slice);
    assert_eq!(wakes.count(), 1);
    assert!(poll(&mut buf, &waker).is_ready());
    assert_eq!((&buf[..], buf.capacity()), (&b"ef"[..], 8));
    drop(buf);
    assert_eq!(pool.available(), 1);
}

#[test]
fn only_the_last_polls_waker_is_woken() {
    let pool = BufferPool::new(1, 8);
    let (mut buf, packet) = split(&pool);
    let (first, first_wakes) = counting_waker();
    let (second, second_wakes) = counting_waker();
    assert!(poll(&mut buf, &first).is_pending());
    assert!(poll(&mut buf, &second).is_pending());
    drop(packet);
    assert_eq!((first_wakes.count(), second_wakes.count()), (0, 1));
    assert!(poll(&mut buf, &second).is_ready());
}

#[test]
fn a_buf_that_stops_waiting_keeps_no_waker_and_its_buffer_goes_back_once() {
    // Each way a waiting `Buf` is used otherwise: the waker it kept is dropped then, the last
    // packet's drop wakes nobody, and the buffer goes back once everything is dropped.
    type Use = fn(&mut Option<Buf>, &mut Vec<Packet>);
    let uses: [(&str, Use); 4] = [
        ("split", |buf, held| {
            held.push(buf.as_mut().unwrap().split_to(1))
        }),
        ("freeze", |buf, held| {
            held.push(buf.take().unwrap().freeze())
        }),
        ("try_reclaim", |buf, _| {
            assert!(!buf.as_mut().unwrap().try_reclaim());
        }),
        ("drop", |buf, _| drop(buf.take())),
    ];
    for (name, use_it) in uses {
        let pool = BufferPool::new(1, 8);
        let (buf, packet) = split(&pool);
        let (waker, switches) = panicking_waker();
        let mut buf = Some(buf);
        assert!(poll(buf.as_mut().unwrap(), &waker).is_pending());
        assert_eq!(switches.live(), 2, "{name}: the waiting buf keeps a clone");
        let mut held = vec![packet];
        use_it(&mut buf, &mut held);
        assert_eq!(switches.live(), 1, "{name}: the clone is dropped");
        drop(held);
        assert_eq!(switches.wakes(), 0, "{name}: nobody waits");
        if let Some(buf) = &mut buf {
            assert!(buf.try_reclaim(), "{name}");
        }
        drop(buf);
        assert_eq!(pool.available(), 1, "{name}");
    }
}

#[test]
fn a_packet_dropped_on_another_thread_wakes_the_buf() {
    let pool = BufferPool::new(1, 8);
    let (mut buf, packet) = split(&pool);
    let reader = thread::spawn(move || assert_eq!(&packet[..], b"abcd"));
    block_on(std::future::poll_fn(|cx| buf.poll_reclaim(cx)));
    reader.join().unwrap();
    assert!(buf.try_extend_from_slice(b"ghijkl"));
    assert_eq!(&buf[..], b"efghijkl");
}

#[test]
fn a_waker_that_panics_at_any_call_leaves_the_buffer_whole() {
    // A schedule: wait, wait again with another waker, drop a clone, drop the last packet
    // (the wake), wait again, drop the buf. Run once to count the waker's calls, then once
    // per call with a panic there, then once more with two: at that call and the next.
    let schedule = |at: Option<usize>, two: bool| {
        let pool = BufferPool::new(1, 8);
        let (mut buf, packet) = split(&pool);
        let clone = packet.clone();
        let (waker, switches) = panicking_waker();
        let other = switches.another_waker();
        if let Some(at) = at {
            switches.panic_at_call(at);
        }
        let step = |f: &mut dyn FnMut()| {
            let panicked = catch_unwind(AssertUnwindSafe(&mut *f)).is_err();
            if panicked && two {
                switches.panic_once(
                    WakerOps::CLONE | WakerOps::DROP | WakerOps::WAKE | WakerOps::WAKE_BY_REF,
                );
            }
        };
        step(&mut || {
            let _ = poll(&mut buf, &waker);
        });
        step(&mut || {
            let _ = poll(&mut buf, &other);
        });
        let mut clone = Some(clone);
        step(&mut || drop(clone.take()));
        let mut packet = Some(packet);
        step(&mut || drop(packet.take()));
        let mut ready = false;
        step(&mut || ready = poll(&mut buf, &other).is_ready());
        if !ready {
            ready = buf.try_reclaim();
        }
        assert!(
            ready,
            "panic at {at:?}: no packet is left, so the bytes come back"
        );
        assert_eq!(
            (&buf[..], buf.capacity()),
            (&b"ef"[..], 8),
            "panic at {at:?}"
        );
        let mut buf = Some(buf);
        step(&mut || drop(buf.take()));
        let mut wakers = Some((waker, other));
        step(&mut || drop(wakers.take()));
        assert_eq!(
            pool.available(),
            1,
            "panic at {at:?}: the buffer goes back once"
        );
        assert!(pool.try_acquire().is_some());
        assert_eq!(
            switches.live(),
            0,
            "panic at {at:?}: every clone is dropped"
        );
        switches.calls()
    };
    let calls = schedule(None, false);
    assert!(calls >= 4, "the schedule clones, wakes and drops wakers");
    for at in 1..=calls {
        schedule(Some(at), false);
        schedule(Some(at), true);
    }
}

#[test]
fn a_waiting_buf_split_or_frozen_while_its_wakers_drop_panics_gives_the_buffer_back_once() {
    // The waker the `Buf` kept is dropped by the split or the freeze, and panics there: the
    // packet is dropped as the panic unwinds, and the buffer still goes back once.
    type Use = fn(Buf) -> Option<Buf>;
    let uses: [(&str, Use); 2] = [
        ("split", |mut buf| {
            drop(buf.split_to(1));
            Some(buf)
        }),
        ("freeze", |buf| {
            drop(buf.freeze());
            None
        }),
    ];
    for (name, use_it) in uses {
        let pool = BufferPool::new(1, 8);
        let (mut buf, packet) = split(&pool);
        let (waker, switches) = panicking_waker();
        assert!(poll(&mut buf, &waker).is_pending());
        switches.panic_once(WakerOps::DROP);
        let mut buf = Some(buf);
        let used = catch_unwind(AssertUnwindSafe(|| {
            buf = use_it(buf.take().unwrap());
        }));
        assert!(used.is_err(), "{name}: the waker's drop panicked");
        drop((buf, packet));
        assert_eq!(
            pool.available(),
            1,
            "{name}: no count of the buffer is left"
        );
        assert_eq!(switches.live(), 1, "{name}");
    }
}
