//! Every primitive under every common executor, with its futures and streams woken from other
//! OS threads: tokio's current-thread and multi-thread runtimes, `smol::block_on`, an
//! `async_executor::Executor` run on 4 threads, and futures-executor's `block_on`, `LocalPool`
//! and `ThreadPool`.
//!
//! Each workload waits on values that a [`Remote`] hands over from its own threads, in an
//! order it shuffles, and asserts that every output arrives: the exact multiset, and the order
//! where the primitive promises one. A lost wake shows as a workload that does not finish, which
//! [`run`] turns into a failure after a timeout rather than a hung test.
//!
//! One `#[test]` per primitive and executor: `join_all::tokio_multi_thread`, and so on.
#![cfg(not(miri))]

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, resume_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use futures_channel::mpsc::{UnboundedReceiver, unbounded};
use futures_channel::oneshot;
use futures_util::FutureExt;
use pinfold_testkit::rng::XorShift;

/// Work for a remote thread: runs once, and may leave a follow-up for the same thread (a
/// stream's next item, so that a stream's items keep their order).
struct Job(Box<dyn FnOnce() -> Option<Job> + Send>);

/// Threads that complete futures from outside the executor. Each thread holds the jobs it was
/// given and runs them in a random order, pausing now and then (a yield, or a sleep of a few
/// tens of microseconds) so the executor goes idle and has to be woken for real.
///
/// The threads end once every clone of the `Remote` is gone and the jobs they hold have run.
#[derive(Clone)]
struct Remote {
    threads: Arc<[mpsc::Sender<Job>]>,
    next: Arc<AtomicUsize>,
}

impl Remote {
    /// A remote of `count` threads, and their handles.
    fn start(count: usize, seed: u64) -> (Self, Vec<JoinHandle<()>>) {
        let (senders, handles) = (0..count as u64)
            .map(|index| {
                let (sender, jobs) = mpsc::channel();
                let rng = XorShift::new(seed.wrapping_add(index.wrapping_mul(0x9e37_79b9)));
                (sender, thread::spawn(move || serve(&jobs, rng)))
            })
            .unzip::<_, _, Vec<_>, Vec<_>>();
        let remote = Self {
            threads: senders.into(),
            next: Arc::new(AtomicUsize::new(0)),
        };
        (remote, handles)
    }

    /// Hands `job` to the next thread, round robin.
    fn submit(&self, job: Job) {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.threads.len();
        self.threads[index]
            .send(job)
            .expect("a remote thread ended while its remote was alive");
    }

    /// A future of what `f` returns when a remote thread runs it.
    fn call<T, F>(&self, f: F) -> impl Future<Output = T> + Send + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (sender, receiver) = oneshot::channel();
        self.submit(Job(Box::new(move || {
            // The receiver is gone if its future was dropped (a `try_join_all` that failed).
            let _ = sender.send(f());
            None
        })));
        async move { receiver.await.expect("a remote thread dropped a job") }
    }

    /// A future of `value`, sent from a remote thread.
    fn value<T: Send + 'static>(&self, value: T) -> impl Future<Output = T> + Send + use<T> {
        self.call(move || value)
    }

    /// A stream of `items`, in order, each sent from a remote thread; it ends after the last.
    fn stream<T: Send + 'static>(&self, items: Vec<T>) -> UnboundedReceiver<T> {
        let (sender, receiver) = unbounded();
        self.submit(feed(sender, items.into_iter()));
        receiver
    }
}

/// A job that sends the next of `items`, and leaves a job that sends the one after. Stops
/// when the items run out (dropping the sender ends the stream) or the receiver is gone.
fn feed<T, I>(sender: futures_channel::mpsc::UnboundedSender<T>, mut items: I) -> Job
where
    T: Send + 'static,
    I: Iterator<Item = T> + Send + 'static,
{
    Job(Box::new(move || {
        let item = items.next()?;
        sender.unbounded_send(item).ok()?;
        Some(feed(sender, items))
    }))
}

/// A remote thread: runs the jobs it holds in a random order until its sender is gone and no
/// job is left.
fn serve(jobs: &mpsc::Receiver<Job>, mut rng: XorShift) {
    let mut held = Vec::new();
    loop {
        held.extend(jobs.try_iter());
        if held.is_empty() {
            match jobs.recv() {
                Ok(job) => held.push(job),
                Err(mpsc::RecvError) => return,
            }
        }
        match rng.below(16) {
            0 => thread::sleep(Duration::from_micros(20 + rng.up_to(60))),
            1..=4 => thread::yield_now(),
            _ => {}
        }
        let Job(job) = held.swap_remove(rng.below(held.len()));
        if let Some(next) = job() {
            held.push(next);
        }
    }
}

/// A workload's outcome: `Err` holds the panic of a failed assertion.
type Outcome = Result<(), Box<dyn Any + Send>>;

/// A workload as an executor gets it: boxed, and with its panic caught.
type Workload = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// How long a workload may take before the test calls it hung.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `workload` on `executor` with a fresh [`Remote`] of 4 threads, and fails if an
/// assertion of the workload failed or it did not finish within [`TIMEOUT`].
fn run<W, F>(executor: fn(Workload) -> Outcome, workload: W)
where
    W: FnOnce(Remote) -> F + Send + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    let (done, outcome) = mpsc::channel();
    let runner = thread::spawn(move || {
        let (remote, threads) = Remote::start(4, 0x5eed);
        let outcome = executor(Box::pin(AssertUnwindSafe(workload(remote)).catch_unwind()));
        for thread in threads {
            thread.join().expect("a remote thread panicked");
        }
        let _ = done.send(outcome);
    });
    match outcome.recv_timeout(TIMEOUT) {
        Ok(Ok(())) => runner
            .join()
            .expect("the runner panicked after the workload"),
        Ok(Err(panic)) => resume_unwind(panic),
        Err(mpsc::RecvTimeoutError::Disconnected) => match runner.join() {
            Err(panic) => resume_unwind(panic),
            Ok(()) => unreachable!("the runner sends an outcome before it returns"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("the workload did not finish in {TIMEOUT:?}: a wake was lost")
        }
    }
}

/// The executors. Those with threads of their own are given the workload as a task, so it is
/// polled on their worker threads, and may move between them.
mod executors {
    use std::thread;

    use futures_channel::oneshot;
    use futures_executor::{LocalPool, ThreadPool};
    use futures_util::FutureExt;

    use super::{Outcome, Workload};

    pub(super) fn tokio_current_thread(workload: Workload) -> Outcome {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime
            .block_on(runtime.spawn(workload))
            .expect("the workload's task was cancelled")
    }

    pub(super) fn tokio_multi_thread(workload: Workload) -> Outcome {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .build()
            .unwrap();
        runtime
            .block_on(runtime.spawn(workload))
            .expect("the workload's task was cancelled")
    }

    pub(super) fn smol_block_on(workload: Workload) -> Outcome {
        smol::block_on(workload)
    }

    /// An `async_executor::Executor` run by this thread and three more.
    pub(super) fn async_executor_4_threads(workload: Workload) -> Outcome {
        let executor = async_executor::Executor::new();
        let (stop, stopped) = oneshot::channel::<()>();
        let stopped = stopped.shared();
        thread::scope(|scope| {
            for _ in 0..3 {
                let (executor, stopped) = (&executor, stopped.clone());
                scope.spawn(move || futures_executor::block_on(executor.run(stopped)));
            }
            let task = executor.spawn(workload);
            let outcome = futures_executor::block_on(executor.run(task));
            drop(stop);
            outcome
        })
    }

    pub(super) fn futures_block_on(workload: Workload) -> Outcome {
        futures_executor::block_on(workload)
    }

    pub(super) fn futures_local_pool(workload: Workload) -> Outcome {
        LocalPool::new().run_until(workload)
    }

    pub(super) fn futures_thread_pool(workload: Workload) -> Outcome {
        let pool = ThreadPool::builder().pool_size(4).create().unwrap();
        let (sender, receiver) = oneshot::channel();
        pool.spawn_ok(async move {
            let outcome = workload.await;
            let _ = sender.send(outcome);
        });
        futures_executor::block_on(receiver).expect("the thread pool dropped the workload")
    }
}

/// The workloads: one per primitive, each asserting what arrived.
mod workloads {
    use std::collections::BTreeMap;
    use std::io::Write;

    use futures_util::{StreamExt, stream};
    use pinfold::pool::BufferPool;
    // `join_all`, `try_join_all` and `merge` are named in full: the workloads take their names.
    use pinfold::{
        BufferExt, ConcurrentForEachExt, FutureMap, FuturesOrdered, FuturesOrderedBounded,
        FuturesUnordered, FuturesUnorderedBounded, Merge, MergeBounded, ProgressStreamExt,
        StreamMap,
    };
    use pinfold_testkit::stream::assert_each_stream_whole_and_in_order;

    use super::{Remote, sorted};

    /// How many futures a workload runs.
    const N: u32 = 128;

    /// How many streams a merge or a stream map holds, and how long stream `s` is.
    const STREAMS: usize = 8;
    fn stream_len(stream: usize) -> usize {
        4 + 7 * stream
    }

    /// Streams `0..count`, each giving `(stream, seq)` for `seq` in `0..stream_len(stream)`.
    fn numbered_streams(
        remote: &Remote,
        count: usize,
    ) -> impl Iterator<Item = futures_channel::mpsc::UnboundedReceiver<(usize, usize)>> + '_ {
        (0..count).map(move |s| remote.stream((0..stream_len(s)).map(|seq| (s, seq)).collect()))
    }

    /// A set of 16 slots, refilled as outputs come, so slots are reused while wakes of their
    /// last futures may still be on their way.
    pub(super) async fn futures_unordered_bounded(remote: Remote) {
        let mut set = FuturesUnorderedBounded::new(16);
        let mut next = 0;
        let mut outputs = Vec::new();
        loop {
            while next < N && !set.is_full() {
                set.push(remote.value(next));
                next += 1;
            }
            match set.next().await {
                Some(out) => outputs.push(out),
                None => break,
            }
        }
        assert_eq!(sorted(outputs), (0..N).collect::<Vec<_>>());
    }

    /// Half pushed at once (the set grows), the other half while the first drains.
    pub(super) async fn futures_unordered(remote: Remote) {
        let mut set = FuturesUnordered::new();
        set.extend((0..N / 2).map(|i| remote.value(i)));
        let mut later = N / 2..N;
        let mut outputs = Vec::new();
        while let Some(out) = set.next().await {
            outputs.push(out);
            if let Some(i) = later.next() {
                set.push(remote.value(i));
            }
        }
        assert_eq!(sorted(outputs), (0..N).collect::<Vec<_>>());
    }

    pub(super) async fn join_all(remote: Remote) {
        let outputs = pinfold::join_all((0..N).map(|i| remote.value(i))).await;
        assert_eq!(outputs, (0..N).collect::<Vec<_>>());
    }

    /// All `Ok`: every output in input order. Then one `Err` among them: that error.
    pub(super) async fn try_join_all(remote: Remote) {
        let outputs = pinfold::try_join_all((0..N).map(|i| remote.value(Ok::<u32, u32>(i)))).await;
        assert_eq!(outputs, Ok((0..N).collect::<Vec<_>>()));

        let failing = N / 3;
        let result = pinfold::try_join_all(
            (0..N).map(|i| remote.value(if i == failing { Err(i) } else { Ok(i) })),
        )
        .await;
        assert_eq!(result, Err(failing));
    }

    /// Input order, without and with a window.
    pub(super) async fn ordered_buffer(remote: Remote) {
        let values = |remote: Remote| stream::iter(0..N).map(move |i| remote.value(i));
        let outputs: Vec<u32> = values(remote.clone()).ordered_buffer(8).collect().await;
        assert_eq!(outputs, (0..N).collect::<Vec<_>>());
        let outputs: Vec<u32> = values(remote).ordered_buffer(8).window(20).collect().await;
        assert_eq!(outputs, (0..N).collect::<Vec<_>>());
    }

    /// Each output handled by a future that completes on another thread, while the buffer is
    /// driven: every output once, in input order (ordered) or at all (unordered).
    pub(super) async fn for_each_driven(remote: Remote) {
        let values = |remote: Remote| stream::iter(0..N).map(move |i| remote.value(i));
        let mut seen = Vec::new();
        values(remote.clone())
            .ordered_buffer(8)
            .window(12)
            .for_each_driven(|i| {
                seen.push(i);
                remote.value(())
            })
            .await;
        assert_eq!(seen, (0..N).collect::<Vec<_>>());
        let mut seen = Vec::new();
        values(remote.clone())
            .unordered_buffer(8)
            .for_each_driven(|i| {
                seen.push(i);
                remote.value(())
            })
            .await;
        assert_eq!(sorted(seen), (0..N).collect::<Vec<_>>());
    }

    /// Each item handled by a future that completes on another thread, with a limit and
    /// without one: every item once. Called through its trait: `StreamExt` is in scope too.
    pub(super) async fn concurrent_for_each(remote: Remote) {
        for limit in [Some(8), None] {
            let seen = std::sync::Mutex::new(Vec::new());
            ConcurrentForEachExt::concurrent_for_each(stream::iter(0..N), limit, |i| {
                let (value, seen) = (remote.value(i), &seen);
                async move {
                    let i = value.await;
                    seen.lock().unwrap().push(i);
                }
            })
            .await;
            assert_eq!(
                sorted(seen.into_inner().unwrap()),
                (0..N).collect::<Vec<_>>()
            );
        }
    }

    pub(super) async fn unordered_buffer(remote: Remote) {
        let outputs: Vec<u32> = stream::iter(0..N)
            .map(|i| remote.value(i))
            .unordered_buffer(8)
            .collect()
            .await;
        assert_eq!(sorted(outputs), (0..N).collect::<Vec<_>>());
    }

    /// Push order, with futures pushed at both ends: `N/2 - 1` down to 0 each at the front,
    /// `N/2` up to `N - 1` each at the back, so the outputs are `0..N`.
    pub(super) async fn futures_ordered(remote: Remote) {
        let mut set = FuturesOrdered::new();
        for i in 0..N / 2 {
            set.push_front(remote.value(N / 2 - 1 - i));
            set.push_back(remote.value(N / 2 + i));
        }
        let outputs: Vec<u32> = set.collect().await;
        assert_eq!(outputs, (0..N).collect::<Vec<_>>());
    }

    /// Push order, with 16 slots refilled as outputs come.
    pub(super) async fn futures_ordered_bounded(remote: Remote) {
        let mut set = FuturesOrderedBounded::new(16);
        let mut next = 0;
        let mut outputs = Vec::new();
        loop {
            while next < N && !set.is_full() {
                set.push_back(remote.value(next));
                next += 1;
            }
            match set.next().await {
                Some(out) => outputs.push(out),
                None => break,
            }
        }
        assert_eq!(outputs, (0..N).collect::<Vec<_>>());
    }

    /// Each stream's items whole and in its order.
    pub(super) async fn merge_bounded(remote: Remote) {
        let mut merged = MergeBounded::new(STREAMS);
        for stream in numbered_streams(&remote, STREAMS) {
            merged.push(stream);
        }
        let items: Vec<(usize, usize)> = merged.collect().await;
        let lengths: Vec<usize> = (0..STREAMS).map(stream_len).collect();
        assert_each_stream_whole_and_in_order(&items, &lengths);
    }

    /// As `merge_bounded`, half the streams given to `merge` and half pushed while it runs.
    pub(super) async fn merge(remote: Remote) {
        let mut streams = numbered_streams(&remote, STREAMS);
        let mut merged: Merge<_> = pinfold::merge(streams.by_ref().take(STREAMS / 2));
        let mut items = Vec::new();
        while let Some(item) = merged.next().await {
            items.push(item);
            if let Some(stream) = streams.next() {
                merged.push(stream);
            }
        }
        let lengths: Vec<usize> = (0..STREAMS).map(stream_len).collect();
        assert_each_stream_whole_and_in_order(&items, &lengths);
    }

    /// Every key's output once, except the removed keys' (none) and the replaced keys' (the
    /// replacement's).
    pub(super) async fn future_map(remote: Remote) {
        let mut map = FutureMap::new();
        let mut expected = BTreeMap::new();
        for key in 0..N {
            map.insert(key, remote.value(key * 10));
            expected.insert(key, key * 10);
        }
        for key in (0..N).step_by(9) {
            assert!(map.remove(&key));
            expected.remove(&key);
        }
        for key in (4..N).step_by(11) {
            let replaced = map.insert(key, remote.value(key * 10 + 1));
            assert_eq!(replaced, expected.insert(key, key * 10 + 1).is_some());
        }
        let mut outputs = BTreeMap::new();
        while let Some((key, value)) = map.next().await {
            assert!(outputs.insert(key, value).is_none(), "key {key} twice");
        }
        assert_eq!(outputs, expected);
    }

    /// Each stream's items whole, in order and under its key; a stream removed before it gave
    /// anything gives nothing, and the map is empty at the end.
    pub(super) async fn stream_map(remote: Remote) {
        let mut map = StreamMap::new();
        for (key, stream) in numbered_streams(&remote, STREAMS + 1).enumerate() {
            map.insert(key, stream);
        }
        assert!(map.remove(&STREAMS));
        let mut items = Vec::new();
        while let Some((key, (stream, seq))) = map.next().await {
            assert_eq!(key, stream, "item of stream {stream} under key {key}");
            items.push((stream, seq));
        }
        assert!(map.is_empty());
        let lengths: Vec<usize> = (0..STREAMS).map(stream_len).collect();
        assert_each_stream_whole_and_in_order(&items, &lengths);
    }

    /// `N` acquirers share 4 buffers: each writes its number into its buffer and hands it to a
    /// remote thread, which reads the number back and releases the buffer there, waking the
    /// next acquirer waiting. Every acquirer gets a buffer and reads its own number; all 4 are
    /// back at the end.
    pub(super) async fn pool(remote: Remote) {
        let pool = BufferPool::new(4, 64);
        let acquirers = (0..N).map(|i| {
            let (pool, remote) = (pool.clone(), remote.clone());
            async move {
                let mut buf = pool.acquire().await;
                buf.write_all(&i.to_le_bytes()).unwrap();
                remote
                    .call(move || {
                        let read = u32::from_le_bytes(buf[..4].try_into().unwrap());
                        drop(buf);
                        read
                    })
                    .await
            }
        });
        let outputs = pinfold::join_all(acquirers).await;
        assert_eq!(outputs, (0..N).collect::<Vec<_>>());
        assert_eq!(pool.available(), pool.capacity());
    }
}

/// `items`, sorted.
fn sorted<T: Ord>(mut items: Vec<T>) -> Vec<T> {
    items.sort();
    items
}

/// One test module per workload, one `#[test]` per executor in it.
macro_rules! matrix {
    (executors: $executors:tt; workloads: $($workload:ident),* $(,)?) => {
        $(matrix!(@tests $workload, $executors);)*
    };
    (@tests $workload:ident, [$($executor:ident),* $(,)?]) => {
        mod $workload {
            $(
                #[test]
                fn $executor() {
                    super::run(super::executors::$executor, super::workloads::$workload);
                }
            )*
        }
    };
}

matrix! {
    executors: [
        tokio_current_thread,
        tokio_multi_thread,
        smol_block_on,
        async_executor_4_threads,
        futures_block_on,
        futures_local_pool,
        futures_thread_pool,
    ];
    workloads:
        futures_unordered_bounded,
        futures_unordered,
        join_all,
        try_join_all,
        ordered_buffer,
        unordered_buffer,
        for_each_driven,
        concurrent_for_each,
        futures_ordered,
        futures_ordered_bounded,
        merge_bounded,
        merge,
        future_map,
        stream_map,
        pool,
}
