//! Auto traits: the pool, its buffers and packets are `Send + Sync`, and a waiting `acquire`
//! is `Send`, so a task that awaits one can move between threads. Checked at compile time.

use pinfold_pool::{Acquire, Buf, BufferPool, Packet};

fn assert_send<T: Send>() {}
fn assert_sync<T: Sync>() {}

#[test]
fn pool_buf_and_packet_are_send_and_sync() {
    assert_send::<BufferPool>();
    assert_sync::<BufferPool>();
    assert_send::<Buf>();
    assert_sync::<Buf>();
    assert_send::<Packet>();
    assert_sync::<Packet>();
}

#[test]
fn acquire_is_send() {
    assert_send::<Acquire<'static>>();
}

#[test]
fn a_task_awaiting_acquire_runs_on_a_multi_thread_runtime() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let task = runtime.spawn({
        let pool = pool.clone();
        // `spawn` takes only `Send` futures: this one holds an `Acquire` across an await.
        async move { pool.acquire().await.capacity() }
    });
    drop(held);
    assert_eq!(runtime.block_on(task).unwrap(), 8);
    assert_eq!(pool.available(), 1);
}
