//! The buffer pool's waiter lock without `std`: its spin lock, the real type.
//!
//! A worker takes the lock twice and the main thread once; each holder reads the shared count
//! and writes it back one higher, in two steps (a read, then a write, through the guard). (With
//! a second worker, two spinners can hand the processor to each other forever while the holder
//! waits to be scheduled, a path loom explores until it gives up: two threads is the bound.) Loom
//! reports any two accesses to the value that the lock does not order (a data race through
//! the lock's cell), and the final count shows that no increment was lost: each holder saw the
//! value its predecessor wrote (the `Acquire` that takes the lock synchronizes with the
//! `Release` that gave it back).
#![cfg(pinfold_loom)]

use loom::sync::Arc;
use loom::thread;
use loom_tests::check;
use pinfold_pool::SpinLock;

/// Takes the lock and adds one to its count in a read and a separate write.
fn increment(lock: &SpinLock<usize>) {
    let mut count = lock.lock();
    let seen = *count;
    *count = seen + 1;
}

#[test]
fn pool_spin_lock() {
    check("pool_spin_lock", || {
        let lock = Arc::new(SpinLock::new(0_usize));
        let worker = {
            let lock = lock.clone();
            thread::spawn(move || {
                increment(&lock);
                increment(&lock);
            })
        };
        increment(&lock);
        worker.join().unwrap();
        assert_eq!(*lock.lock(), 3, "an increment was lost");
    });
}
