//! What the pinfold bench binaries share: the counting allocator, the drivers of the
//! workloads, the futures they are made of, the CPU-time measurement, and where results go.
//!
//! Each bench file under `benches/benches/` is one primitive (`bounded.rs`, ...). It installs
//! the counting allocator with one line,
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();
//! ```
//!
//! and builds its criterion groups with [`Group`], which gives every implementation the same
//! `BenchmarkId` names ([`PINFOLD`], [`FUTURES_BUFFERED`], [`FUTURES_UTIL`],
//! [`FAST_ORDERED_BUFFER`], [`FUTURES_CONCURRENCY`]) and, before timing an implementation,
//! runs its workload untimed under [`measure_warm`] and appends the allocation counts to
//! `<target>/pinfold-bench/allocs.tsv`. The `bench-table` binary joins those rows with
//! criterion's medians and the instructions per item `cargo xtask instructions` counted (in
//! the bench binaries' counting mode, [`count_if_selected`]) into markdown tables, one per
//! primitive ([`TABLES`]), each with the columns of its own peers; a row that holds a known
//! number of values at its peak ([`Workload::held`]) also gets each implementation's peak
//! bytes per value held ([`bytes_per_value`]). With `--write` it records
//! the run under its CPU ([`Cpu`], [`Record`]: `benches/results/<cpu>.tsv` and `.md`), then
//! writes `benches/RESULTS.md`, the chart of pinfold's ratios ([`ratio_chart`]) and the
//! README's summary of them ([`summary_rows`], [`claims`], [`replace_summary`]) from every
//! CPU's record.
//!
//! The workloads that poll with a no-op waker run a second time under futures-executor's
//! `block_on`, a real waker (groups `<name>_block_on`, see [`Driver`]).
//!
//! Set `PINFOLD_BENCH_QUICK=1` for short runs (see [`Tuning`]).

mod alloc;
mod chart;
mod cpu;
mod cpu_time;
mod crew;
mod drive;
pub mod format;
mod futures;
mod group;
mod instructions;
mod local_signal;
mod record;
mod report;
mod results;
mod sparse;
mod summary;
mod workers;
mod xorshift;

pub use alloc::{Allocs, CountingAlloc, live_bytes, measure, measure_warm, pin_malloc_thresholds};
pub use chart::ratio_chart;
pub use cpu::Cpu;
pub use cpu_time::{CpuTime, process_cpu_time, thread_cpu_time};
pub use crew::Crew;
pub use drive::{
    ChurnTally, Driver, Tally, block_on_parking, drain_while, drain_while_block_on, keep_full,
    keep_full_async, keep_full_block_on, keyed_churn, keyed_churn_block_on, poll_each_once_pending,
    poll_future_each_once_pending, poll_next, spin_on, tally_block_on, tally_block_on_by,
};
pub use futures::{
    ChurnFuture, Idle, IdleStream, Signal, SignalCell, SignalStream, YieldK, join_inputs,
    try_join_inputs,
};
pub use group::{Group, Tuning, criterion, quick};
pub use instructions::{
    MEASURED_FUNCTION, REPORT_PREFIX, RUNS_VARIABLE, Regions, SELECT_VARIABLE, count_if_selected,
    measured, selected, timed,
};
pub use local_signal::{LocalSignal, LocalSignalCell, LocalSignalStream};
pub use record::{Measured, Record, order_records, read_records};
pub use report::{
    BASELINES, bytes_per_value, cpu_table, index_document, index_table, peer_rows, provenance,
    standings,
};
pub use results::{
    ALLOCS_FILE, AllocRow, INSTRUCTIONS_FILE, STAMP_FILE, STAMPED_VARIABLE, VIRTUAL_FILE,
    VirtualRow, criterion_dir, forget_outdated_stamp, forget_outdated_stamp_in, outdates_stamp,
    read_allocs, read_instructions, read_virtual, record_allocs, record_virtual, results_dir,
    target_dir,
};
pub use sparse::{SPARSE_BATCH, SPARSE_BATCHES, SPARSE_LEN, SparseWakes};
pub use summary::{
    CpuRatio, PeerRow, SLOWER_BY, SUMMARY_END, SUMMARY_MAX_ROWS, SUMMARY_START, SUMMARY_WORKLOADS,
    Standing, claims, readme_summary, replace_summary, row_peer, spelled_out, summary_rows,
    summary_table,
};
pub use workers::{FireOrder, RoundTimes, WakerThreads};
pub use xorshift::{Xorshift, random_delays};

/// A one-thread tokio runtime whose clock is paused: idle, it skips ahead to the next timer, so
/// a timer workload's time is the CPU cost of what it runs, and its virtual time is exact.
pub fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread tokio runtime with a paused clock")
}

/// A future that sleeps `millis` ms on tokio's clock, then gives `id`: the futures of the
/// ordered sets' sleep workload (`futures_ordered_sleep_100k`, and the floors example).
pub async fn sleeper(id: u64, millis: u64) -> u64 {
    tokio::time::sleep(std::time::Duration::from_millis(millis)).await;
    id
}

/// The `BenchmarkId` of pinfold's implementation in every group.
pub const PINFOLD: &str = "pinfold";
/// The `BenchmarkId` of the `futures-buffered` crate's implementation.
pub const FUTURES_BUFFERED: &str = "futures-buffered";
/// The `BenchmarkId` of the `futures-util` crate's implementation.
pub const FUTURES_UTIL: &str = "futures-util";
/// The `BenchmarkId` of the `fast_ordered_buffer` crate's implementation.
pub const FAST_ORDERED_BUFFER: &str = "fast_ordered_buffer";
/// The `BenchmarkId` of the `future-queue` crate (cargo-nextest's queue of weighted futures).
pub const FUTURE_QUEUE: &str = "future-queue";
/// The `BenchmarkId` of the `futures-concurrency` crate's implementation.
pub const FUTURES_CONCURRENCY: &str = "futures-concurrency";

/// The `BenchmarkId` of the `tokio-stream` crate's implementation (`StreamMap`).
pub const TOKIO_STREAM: &str = "tokio-stream";

/// The `BenchmarkId` of the `tokio-util` crate's implementation (`JoinMap`).
pub const TOKIO_UTIL: &str = "tokio-util";

/// The `BenchmarkId` of pinfold's growable `FuturesUnordered` in a group whose [`PINFOLD`] is
/// the bounded set (`keyed_churn_100k`): the table shows it as a row of its own, against the
/// same peers' results (`keyed_churn_100k/pinfold-growable` in [`SET_WORKLOADS`]).
pub const PINFOLD_GROWABLE: &str = "pinfold-growable";

/// The `BenchmarkId` of pinfold-pool's `acquire()` future, polled once with a no-op waker, in a
/// group whose [`PINFOLD`] is `try_acquire()` (`pool_acquire_release/pinfold-async` in
/// [`POOL_WORKLOADS`]).
pub const PINFOLD_ASYNC: &str = "pinfold-async";

/// The `BenchmarkId`s of pinfold's `unordered_buffer(2)` and `unordered_buffer(64)`, fixed
/// concurrencies, in the group whose [`PINFOLD`] is `unordered_buffer(64)` under an adaptive
/// limit (`adaptive_knee_200`): rows of their own in [`BUFFER_WORKLOADS`].
pub const PINFOLD_FIXED_2: &str = "pinfold-fixed-2";
/// See [`PINFOLD_FIXED_2`].
pub const PINFOLD_FIXED_64: &str = "pinfold-fixed-64";

/// The `BenchmarkId` of the `bab` crate's implementation (its `BufferPool`).
pub const BAB: &str = "bab";

/// The `BenchmarkId` of a `tokio::sync::mpsc` channel of `Vec<u8>` messages written into a
/// `BufWriter` (`writer.rs`).
pub const TOKIO_MPSC: &str = "tokio-mpsc";

/// The `BenchmarkId` of a `tokio::sync::Semaphore` permit plus a `Vec` per buffer.
pub const TOKIO_SEMAPHORE: &str = "tokio-semaphore";

/// The `BenchmarkId` of a plain `Vec`: a `Vec<u8>` allocated per buffer in the pool groups, the
/// writer itself in the cursor group; in `join_all_std_ready_<n>`, the ready values collected
/// into a `Vec` of outputs, the floor under any join of them.
pub const VEC: &str = "vec";

/// The `BenchmarkId` of a `std::io::Cursor<Vec<u8>>` writer.
pub const CURSOR_VEC: &str = "cursor-vec";

/// The `BenchmarkId` of a `std::io::Cursor<&mut [u8]>` writer.
pub const CURSOR_SLICE: &str = "cursor-slice";

/// The `BenchmarkId` of a `bytes::BytesMut` written through `BufMut::writer`.
pub const BYTES_MUT: &str = "bytesmut";

/// The `BenchmarkId` of a `&mut [u8]` writer.
pub const SLICE: &str = "slice";

/// The sets' implementations, in the column order of their table.
pub const SET_IMPLEMENTATIONS: [&str; 4] =
    [PINFOLD, FUTURES_BUFFERED, FUTURES_UTIL, FUTURES_CONCURRENCY];

/// The joins' implementations.
pub const JOIN_IMPLEMENTATIONS: [&str; 3] = [PINFOLD, FUTURES_BUFFERED, FUTURES_UTIL];

/// The joins' columns: [`JOIN_IMPLEMENTATIONS`] and the floor of the joins of ready values
/// ([`VEC`]).
pub const JOIN_TABLE_IMPLEMENTATIONS: [&str; 4] = [PINFOLD, FUTURES_BUFFERED, FUTURES_UTIL, VEC];

/// The stream buffers' implementations.
pub const BUFFER_IMPLEMENTATIONS: [&str; 4] =
    [PINFOLD, FUTURES_BUFFERED, FUTURES_UTIL, FAST_ORDERED_BUFFER];

/// The weighted buffers' implementations.
pub const FUTURE_QUEUE_IMPLEMENTATIONS: [&str; 2] = [PINFOLD, FUTURE_QUEUE];

/// The merges' implementations.
pub const MERGE_IMPLEMENTATIONS: [&str; 5] = [
    PINFOLD,
    FUTURES_BUFFERED,
    FUTURES_UTIL,
    FUTURES_CONCURRENCY,
    TOKIO_STREAM,
];

/// The keyed maps' implementations.
pub const MAP_IMPLEMENTATIONS: [&str; 4] = [PINFOLD, FUTURES_CONCURRENCY, TOKIO_STREAM, TOKIO_UTIL];

/// One row of a table: a criterion group (or `group/id`: a second row of `group` in which
/// the benchmark `id`, a second pinfold implementation, stands in pinfold's column), how many items
/// one run of it handles, and what it measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    /// The criterion group, or `group/id` for a second pinfold implementation in the group.
    pub name: &'static str,
    /// What a run's instruction count is divided by: the items, polls or operations one run of
    /// the workload handles (one `Bencher::iter` iteration, or one custom round).
    pub items: u64,
    /// What the row measures.
    pub description: &'static str,
    /// How many values (futures, streams) a run holds at its peak: what the run's peak of
    /// live bytes is divided by for the row's bytes per value. 0 for a row that does not hold
    /// a fixed number of values (or whose peak is mostly something else, such as the outputs
    /// it collects).
    pub held: u64,
}

impl Workload {
    /// The row `name`: `items` per run, measuring `description`, holding no fixed number of
    /// values (see [`holding`](Self::holding)).
    pub const fn new(name: &'static str, items: u64, description: &'static str) -> Self {
        Self {
            name,
            items,
            description,
            held: 0,
        }
    }

    /// The row, holding `held` values at its peak.
    pub const fn holding(self, held: u64) -> Self {
        Self { held, ..self }
    }

    /// The criterion group the row's results come from.
    pub fn group(&self) -> &'static str {
        self.name
            .split_once('/')
            .map_or(self.name, |(group, _)| group)
    }
}

/// The workload whose criterion group is `group`, in any of [`TABLES`].
pub fn workload(group: &str) -> Option<&'static Workload> {
    TABLES
        .iter()
        .flat_map(|table| table.workloads)
        .find(|workload| workload.group() == group)
}

/// The rows of the sets of futures (`pinfold-unordered`), in order: a criterion group (or
/// `group/id`, see [`Workload`]), with its items per run and what it measures.
pub const SET_WORKLOADS: &[Workload] = &[
    Workload::new(
        "ready_512k",
        512_000,
        "512,000 ready futures through a bounded set of 256",
    )
    .holding(256),
    Workload::new(
        "ready_512k_block_on",
        512_000,
        "the same under futures-executor block_on (a real waker)",
    )
    .holding(256),
    Workload::new(
        "sleep_65k_wall",
        65_536,
        "65,536 × sleep(100 µs), 256 at a time, 1-thread tokio: wall time",
    )
    .holding(256),
    Workload::new(
        "sleep_65k_cpu",
        65_536,
        "65,536 × sleep(100 µs), 256 at a time, 1-thread tokio: process CPU time",
    )
    .holding(256),
    Workload::new(
        "yield_16",
        4_352,
        "256 futures that each wake themselves 16 times, set of 256",
    )
    .holding(256),
    Workload::new(
        "yield_16_block_on",
        4_352,
        "the same under futures-executor block_on (a real waker)",
    )
    .holding(256),
    Workload::new(
        "wakes_4_threads",
        16_384,
        "16,384 futures woken by 4 threads in random order; owner parks: release to last output",
    )
    .holding(16_384),
    Workload::new(
        "wakes_4_threads_cpu",
        16_384,
        "the same: CPU time of the 4 threads' fire loops plus the owner's drain",
    )
    .holding(16_384),
    Workload::new(
        "wakes_4_threads_adjacent",
        16_384,
        "as above, thread t firing slots t, t+4, t+8, ... (all 4 threads on the same ready words)",
    )
    .holding(16_384),
    Workload::new(
        "wakes_4_threads_adjacent_cpu",
        16_384,
        "the same: CPU time of the 4 threads' fire loops plus the owner's drain",
    )
    .holding(16_384),
    Workload::new(
        "unordered_ready_512k",
        512_000,
        "512,000 ready futures, 256 at a time, growable set",
    )
    .holding(256),
    Workload::new(
        "unordered_ready_512k_block_on",
        512_000,
        "the same under futures-executor block_on (a real waker)",
    )
    .holding(256),
    Workload::new(
        "burst_100k",
        100_000,
        "growable set: burst to 100,000 pending futures, drain to 100",
    )
    .holding(100_000),
    Workload::new(
        "burst_100k_block_on",
        100_000,
        "the same under futures-executor block_on (a real waker)",
    )
    .holding(100_000),
    Workload::new(
        "unordered_sparse_10k",
        10_000,
        "10,000 pending futures, woken 10 at a time (random order, each once) on the owner's thread, drained after each batch; block_on; setup untimed (pinfold: bounded set)",
    )
    .holding(10_000),
    Workload::new(
        "unordered_sparse_10k/pinfold-growable",
        10_000,
        "the same with pinfold's growable FuturesUnordered",
    )
    .holding(10_000),
    Workload::new(
        "keyed_churn_100k",
        100_000,
        "set of 1,024 kept full, 100,000 inserts, every other one removed by key before it finishes (pinfold: bounded set; futures-util: Abortable); block_on",
    )
    .holding(1024),
    Workload::new(
        "keyed_churn_100k/pinfold-growable",
        100_000,
        "the same with pinfold's growable FuturesUnordered",
    )
    .holding(1024),
    Workload::new(
        "held_256",
        256,
        "256 futures of 8 bytes that never finish in a bounded set of 256: built, each polled once, dropped",
    )
    .holding(256),
    Workload::new(
        "held_10k",
        10_000,
        "10,000 futures of 8 bytes that never finish in a bounded set of 10,000: built, each polled once, dropped",
    )
    .holding(10_000),
    Workload::new(
        "unordered_held_256",
        256,
        "256 futures of 8 bytes that never finish in a growable set: built, each polled once, dropped",
    )
    .holding(256),
    Workload::new(
        "unordered_held_100k",
        100_000,
        "100,000 futures of 8 bytes that never finish in a growable set: built, each polled once, dropped",
    )
    .holding(100_000),
];

/// The rows of the joins (`pinfold-join`), in order: a criterion group (or `group/id`, see
/// [`Workload`]), with its items per run and what it measures.
pub const JOIN_WORKLOADS: &[Workload] = &[
    Workload::new(
        "join_all_ready_2_block_on",
        2,
        "join_all of 2 ready futures, under block_on",
    )
    .holding(2),
    Workload::new(
        "join_all_ready_10_block_on",
        10,
        "join_all of 10 ready futures, under block_on",
    )
    .holding(10),
    Workload::new(
        "join_all_ready_30_block_on",
        30,
        "join_all of 30 ready futures, under block_on",
    )
    .holding(30),
    Workload::new(
        "join_all_std_ready_2",
        2,
        "join_all of 2 std::future::ready values, polled in place",
    )
    .holding(2),
    Workload::new(
        "join_all_std_ready_10",
        10,
        "join_all of 10 std::future::ready values, polled in place",
    )
    .holding(10),
    Workload::new(
        "join_all_std_ready_30",
        30,
        "join_all of 30 std::future::ready values, polled in place",
    )
    .holding(30),
    Workload::new("join_all_10", 10, "join_all of 10 futures that yield once").holding(10),
    Workload::new(
        "join_all_10_block_on",
        10,
        "the same under futures-executor block_on (a real waker)",
    )
    .holding(10),
    Workload::new(
        "join_all_1k",
        1_000,
        "join_all of 1,000 futures that yield once",
    )
    .holding(1000),
    Workload::new(
        "join_all_1k_block_on",
        1_000,
        "the same under futures-executor block_on (a real waker)",
    )
    .holding(1000),
    Workload::new(
        "join_all_100k",
        100_000,
        "join_all of 100,000 futures that yield once",
    )
    .holding(100_000),
    Workload::new(
        "join_all_100k_block_on",
        100_000,
        "the same under futures-executor block_on (a real waker)",
    )
    .holding(100_000),
    Workload::new(
        "join_all_held_30",
        30,
        "join_all of 30 futures of 8 bytes that never finish: built, each polled once, dropped",
    )
    .holding(30),
    Workload::new(
        "join_all_held_10k",
        10_000,
        "join_all of 10,000 futures of 8 bytes that never finish: built, each polled once, dropped",
    )
    .holding(10_000),
    Workload::new(
        "try_join_all_ready_2_block_on",
        2,
        "try_join_all of 2 ready futures (Ok), under block_on",
    )
    .holding(2),
    Workload::new(
        "try_join_all_ready_10_block_on",
        10,
        "try_join_all of 10 ready futures (Ok), under block_on",
    )
    .holding(10),
    Workload::new(
        "try_join_all_ready_30_block_on",
        30,
        "try_join_all of 30 ready futures (Ok), under block_on",
    )
    .holding(30),
    Workload::new(
        "try_join_all_10",
        10,
        "try_join_all of 10 futures that yield once",
    )
    .holding(10),
    Workload::new(
        "try_join_all_10_block_on",
        10,
        "the same under futures-executor block_on (a real waker)",
    )
    .holding(10),
    Workload::new(
        "try_join_all_1k",
        1_000,
        "try_join_all of 1,000 futures that yield once",
    )
    .holding(1000),
    Workload::new(
        "try_join_all_1k_block_on",
        1_000,
        "the same under futures-executor block_on (a real waker)",
    )
    .holding(1000),
    Workload::new(
        "try_join_all_100k",
        100_000,
        "try_join_all of 100,000 futures that yield once",
    )
    .holding(100_000),
    Workload::new(
        "try_join_all_100k_block_on",
        100_000,
        "the same under futures-executor block_on (a real waker)",
    )
    .holding(100_000),
];

/// The rows of the stream buffers (`pinfold-buffer`), in order: a criterion group (or
/// `group/id`, see [`Workload`]), with its items per run and what it measures.
pub const BUFFER_WORKLOADS: &[Workload] = &[
    Workload::new(
        "ordered_10k_c50",
        10_000,
        "ordered buffer: 10k futures, random 0–7 ms delays, concurrency 50 (paused clock)",
    ),
    Workload::new(
        "ordered_1k_c10",
        1_000,
        "ordered buffer: 1k futures, random 0–7 ms delays, concurrency 10 (paused clock)",
    ),
    Workload::new(
        "ordered_window_10k_c50",
        10_000,
        "ordered, bounded: 10k futures, 0–7 ms, concurrency 50; pinfold with window(50), buffered's contract; futures-buffered bounds only its running futures",
    ),
    Workload::new(
        "ordered_window_1k_c10",
        1_000,
        "ordered, bounded: 1k futures, 0–7 ms, concurrency 10; pinfold with window(10), buffered's contract; futures-buffered bounds only its running futures",
    ),
    Workload::new(
        "unordered_10k_c50",
        10_000,
        "unordered buffer: 10k futures, random 0–7 ms delays, concurrency 50 (paused clock)",
    ),
    Workload::new(
        "unordered_1k_c10",
        1_000,
        "unordered buffer: 1k futures, random 0–7 ms delays, concurrency 10 (paused clock)",
    ),
    Workload::new(
        "driven_1k_c10",
        1_000,
        "a consumer that works 2 ms per output: 1k futures of three 0–7 ms sleeps, concurrency 10, window 10; pinfold for_each_driven, the others for_each",
    ),
    Workload::new(
        "ordered_selfwake_100k_c64",
        100_000,
        "ordered buffer: 100k futures that wake themselves 0–4 times, concurrency 64; block_on",
    ),
    Workload::new(
        "unordered_selfwake_100k_c64",
        100_000,
        "unordered buffer: 100k futures that wake themselves 0–4 times, concurrency 64; block_on",
    )
    .holding(64),
    Workload::new(
        "for_each_concurrent_10k_c64",
        10_000,
        "for_each_concurrent(64, f): 10k items, f's futures wake themselves 0–4 times; block_on",
    )
    .holding(64),
    Workload::new(
        "adaptive_knee_200",
        200,
        "200 requests to a backend that slows past 8 in flight: unordered_buffer(64) under an adaptive limit; futures-util buffer_unordered(64) (paused clock)",
    ),
    Workload::new(
        "adaptive_knee_200/pinfold-fixed-2",
        200,
        "the same 200 requests, pinfold unordered_buffer(2)",
    ),
    Workload::new(
        "adaptive_knee_200/pinfold-fixed-64",
        200,
        "the same 200 requests, pinfold unordered_buffer(64)",
    ),
];

/// The rows of the weighted buffers (`pinfold-buffer`'s `future_queue_grouped`), in order: a
/// criterion group, with its items per run and what it measures.
pub const FUTURE_QUEUE_WORKLOADS: &[Workload] = &[Workload::new(
    "future_queue_10k",
    10_000,
    "future_queue_grouped: 10k ready futures of weights 1–4, three groups (max weights 8, 12, 16) and none, max weight 32; block_on",
)];

/// The rows of the ordered sets (`pinfold-buffer`'s `FuturesOrdered`), in order: a criterion
/// group (or `group/id`, see [`Workload`]), with its items per run and what it measures.
pub const ORDERED_SET_WORKLOADS: &[Workload] = &[
    Workload::new(
        "futures_ordered_sleep_100k",
        100_000,
        "FuturesOrdered: 100,000 futures of random 0–7 ms sleeps, all pushed, drained in order (paused clock); CPU time",
    )
    .holding(100_000),
    Workload::new(
        "futures_ordered_bounded_sleep_100k",
        100_000,
        "the same, bounded sets of 100,000 (futures-util: its FuturesOrdered); CPU time",
    )
    .holding(100_000),
    Workload::new(
        "futures_ordered_ready_512k",
        512_000,
        "FuturesOrdered: 512,000 ready futures, 256 at a time; block_on; CPU time",
    )
    .holding(256),
    Workload::new(
        "futures_ordered_bounded_ready_512k",
        512_000,
        "the same, bounded sets of 256 (futures-util: its FuturesOrdered); CPU time",
    )
    .holding(256),
];

/// The rows of the merges (`pinfold-merge`), in order: a criterion group (or `group/id`, see
/// [`Workload`]), with its items per run and what it measures.
pub const MERGE_WORKLOADS: &[Workload] = &[
    Workload::new(
        "merge_ready_1k",
        100_000,
        "merge of 1,000 streams of 100 ready items (pinfold: MergeBounded); block_on",
    )
    .holding(1000),
    Workload::new(
        "merge_ready_1k/pinfold-growable",
        100_000,
        "the same with pinfold's growable Merge",
    )
    .holding(1000),
    Workload::new(
        "merge_wakes_10k",
        100_000,
        "merge of 10,000 streams of 10 items, each item woken by one of 4 threads in random order; owner parks: release to last item",
    )
    .holding(10_000),
    Workload::new(
        "merge_wakes_10k/pinfold-growable",
        100_000,
        "the same with pinfold's growable Merge",
    )
    .holding(10_000),
    Workload::new(
        "merge_wakes_10k_cpu",
        100_000,
        "the same: CPU time of the 4 threads' fire loops plus the owner's drain",
    )
    .holding(10_000),
    Workload::new(
        "merge_hot_16",
        1_000_000,
        "merge of 16 always-ready streams, 1,000,000 items in all; block_on",
    )
    .holding(16),
    Workload::new(
        "merge_hot_16/pinfold-growable",
        1_000_000,
        "the same with pinfold's growable Merge",
    )
    .holding(16),
    Workload::new(
        "merge_hot_16_u32",
        1_000_000,
        "merge of 16 always-ready streams of u32 items, 1,000,000 items in all, summed; block_on",
    )
    .holding(16),
    Workload::new(
        "merge_hot_16_u32/pinfold-growable",
        1_000_000,
        "the same with pinfold's growable Merge",
    )
    .holding(16),
    Workload::new(
        "merge_hot_16_24b",
        1_000_000,
        "merge of 16 always-ready streams of 24-byte items (three u64s, each read), 1,000,000 items in all; block_on",
    )
    .holding(16),
    Workload::new(
        "merge_hot_16_24b/pinfold-growable",
        1_000_000,
        "the same with pinfold's growable Merge",
    )
    .holding(16),
    Workload::new(
        "merge_hot_16_noop",
        1_000_000,
        "merge of 16 always-ready !Unpin streams of u32 items, 1,000,000 items in all, polled with a no-op waker and summed by the caller (StreamMap and select_all take them boxed)",
    )
    .holding(16),
    Workload::new(
        "merge_hot_16_noop/pinfold-growable",
        1_000_000,
        "the same with pinfold's growable Merge",
    )
    .holding(16),
    Workload::new(
        "merge_sparse_10k",
        10_000,
        "merge of 10,000 pending streams; 1,000 batches of 10 random streams fired on the owner's thread, drained after each; block_on; setup untimed (pinfold: MergeBounded)",
    )
    .holding(10_000),
    Workload::new(
        "merge_sparse_10k/pinfold-growable",
        10_000,
        "the same with pinfold's growable Merge",
    )
    .holding(10_000),
    Workload::new(
        "merge_held_10k",
        10_000,
        "merge of 10,000 streams of 8 bytes that never give an item: built, each polled once, dropped (pinfold: MergeBounded)",
    )
    .holding(10_000),
    Workload::new(
        "merge_held_10k/pinfold-growable",
        10_000,
        "the same with pinfold's growable Merge",
    )
    .holding(10_000),
];

/// The rows of the keyed maps (`pinfold-map`), in order: a criterion group (or `group/id`, see
/// [`Workload`]), with its items per run and what it measures.
pub const MAP_WORKLOADS: &[Workload] = &[
    Workload::new(
        "map_streams_10k",
        100_000,
        "StreamMap of 10,000 keys, 10 items each woken by one of 4 threads in random order; 1,000 keys replaced half-way; owner parks: release to last item",
    )
    .holding(10_000),
    Workload::new(
        "map_churn_100k",
        100_000,
        "FutureMap of 1,024 keys kept full, 100,000 inserts, every other one removed by key before it finishes (tokio-util: JoinMap on a current-thread runtime)",
    )
    .holding(1024),
];

/// The buffer pools' implementations, in the column order of their table (the second one).
pub const POOL_IMPLEMENTATIONS: [&str; 4] = [PINFOLD, BAB, TOKIO_SEMAPHORE, VEC];

/// The buffer pools' rows (`pool.rs`), as in [`SET_WORKLOADS`].
pub const POOL_WORKLOADS: &[Workload] = &[
    Workload::new(
        "pool_acquire_release",
        1,
        "one buffer of 1,033 bytes acquired and released, one thread, pools of 64 (pinfold, bab: try_acquire; tokio-semaphore: try_acquire plus a Vec; vec: the Vec alone)",
    ),
    Workload::new(
        "pool_acquire_release/pinfold-async",
        1,
        "the same with pinfold's acquire() future, pinned in place and polled once with a no-op waker",
    ),
    Workload::new(
        "pool_4_threads_16",
        65_536,
        "4 threads × 16,384 acquire/release cycles of one buffer of 1,033 bytes, pool of 16, under block_on: release of the threads to the last one done",
    ),
    Workload::new(
        "pool_16_threads_64",
        262_144,
        "16 threads × 16,384 acquire/release cycles of one buffer of 1,033 bytes, pool of 64, under block_on: release of the threads to the last one done",
    ),
    Workload::new(
        "pool_4_threads_2",
        8_192,
        "4 threads × 2,048 acquire/release cycles of one buffer of 1,033 bytes held across a thread yield, pool of 2 (in and out of exhaustion), under block_on (bab not run: its waiters are stranded, see the stranded example)",
    ),
];

/// The writers a message is serialized into, in the column order of their table (the third
/// one).
pub const CURSOR_IMPLEMENTATIONS: [&str; 6] =
    [PINFOLD, CURSOR_VEC, CURSOR_SLICE, BYTES_MUT, VEC, SLICE];

/// The writers' rows (`pool.rs`), as in [`SET_WORKLOADS`].
pub const CURSOR_WORKLOADS: &[Workload] = &[Workload::new(
    "pool_cursor_2048x16",
    2_048,
    "2,048 records of 16 bytes serialized one by one with bincode into a 32 KiB buffer (pinfold: a Buf acquired from a pool, vecs and BytesMut allocated, slices borrowed, inside the timed part)",
)];

/// The batching writers, in the column order of their table (the fourth one).
pub const WRITER_IMPLEMENTATIONS: [&str; 3] = [PINFOLD, BAB, TOKIO_MPSC];

/// The batching writers' rows (`writer.rs`), as in [`SET_WORKLOADS`].
pub const WRITER_WORKLOADS: &[Workload] = &[
    Workload::new(
        "writer_1x1000",
        1_000,
        "1,000 messages of 32 bytes written, a flush asked for, the batches drained, one thread, 8 KiB buffers (tokio-mpsc: a Vec per message, received into a BufWriter)",
    ),
    Workload::new(
        "writer_4x1000",
        4_000,
        "4 threads × 1,000 messages of 32 bytes and a flush each, then the main thread drains: release of the threads to the end of the drain",
    ),
];

/// One markdown table of `bench-table`: its columns (the first is pinfold, whose median is
/// divided by each other's) and its rows.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// The line above the table.
    pub title: &'static str,
    /// The columns, in order; pinfold's ([`PINFOLD`]) first.
    pub implementations: &'static [&'static str],
    /// The rows, in order: a criterion group (or `group/id`, see [`Workload`]), with what it
    /// measures.
    pub workloads: &'static [Workload],
}

/// The tables `bench-table` prints, in order, one per primitive, each with only the peers
/// that run its rows; a table none of whose rows has results is left out.
pub const TABLES: [Table; 10] = [
    Table {
        title: "Sets of futures",
        implementations: &SET_IMPLEMENTATIONS,
        workloads: SET_WORKLOADS,
    },
    Table {
        title: "Joins",
        implementations: &JOIN_TABLE_IMPLEMENTATIONS,
        workloads: JOIN_WORKLOADS,
    },
    Table {
        title: "Stream buffers",
        implementations: &BUFFER_IMPLEMENTATIONS,
        workloads: BUFFER_WORKLOADS,
    },
    Table {
        title: "Weighted buffers",
        implementations: &FUTURE_QUEUE_IMPLEMENTATIONS,
        workloads: FUTURE_QUEUE_WORKLOADS,
    },
    Table {
        title: "Ordered sets",
        implementations: &JOIN_IMPLEMENTATIONS,
        workloads: ORDERED_SET_WORKLOADS,
    },
    Table {
        title: "Merges",
        implementations: &MERGE_IMPLEMENTATIONS,
        workloads: MERGE_WORKLOADS,
    },
    Table {
        title: "Keyed maps",
        implementations: &MAP_IMPLEMENTATIONS,
        workloads: MAP_WORKLOADS,
    },
    Table {
        title: "Buffer pools: acquire and release",
        implementations: &POOL_IMPLEMENTATIONS,
        workloads: POOL_WORKLOADS,
    },
    Table {
        title: "Buffer pools: serializing into a buffer",
        implementations: &CURSOR_IMPLEMENTATIONS,
        workloads: CURSOR_WORKLOADS,
    },
    Table {
        title: "Batching writers: messages written and flushed",
        implementations: &WRITER_IMPLEMENTATIONS,
        workloads: WRITER_WORKLOADS,
    },
];
