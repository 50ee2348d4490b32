//! A user's job over real I/O: fetch pages from an HTTP server on loopback (started here, with
//! a latency per request), and store each page in SQLite on a blocking thread. Run twice, on
//! the same server and the same kind of database:
//!
//! - pinfold: `ordered_buffer(concurrency).window(window)`, consumed by `for_each_driven`, so
//!   the fetches keep going while a page is being stored;
//! - futures-util: `buffered(concurrency).for_each`, whose fetches wait while a page is stored.
//!
//! It prints each run's wall time, the rows stored, and the process's peak resident memory
//! during it (Linux; elsewhere the peak since the process started).
//!
//! Then the same pages from a second server that slows down under load, as a backend past
//! its knee does: pages of 1 to 4 units of 16 KiB, and past [`KNEE_UNITS`] units in flight
//! each request waits `latency × in flight / KNEE_UNITS`. Each page is fetched with its size
//! as its weight (`future_queue`), under an [`Adaptive`] limit of weight, and under fixed
//! limits and futures-util's `buffer_unordered` for comparison. It prints each run's wall
//! time, the most units the server had in flight at once and the mean latency a page saw.
//!
//! ```text
//! cargo run --release --manifest-path examples/real-io/Cargo.toml [PAGES [CONCURRENCY [LATENCY_MS]]]
//! ```
//!
//! With `PINFOLD_REAL_IO_BUDGET_MS` set, it fails (exit status 1) if the whole took longer.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{StreamExt, stream};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use pinfold::{Adaptive, BufferExt, Limit, ProgressStreamExt};
use rusqlite::{Connection, params};
use tokio::net::TcpListener;

/// Restarts the process's peak resident memory (Linux: `/proc/self/clear_refs`); `false` where
/// that cannot be done, and the peak is then the process's since it started.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The process's peak resident memory in bytes since the last [`reset_peak`] (Linux:
/// `VmHWM` in `/proc/self/status`); 0 where it cannot be read.
fn peak_resident() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kib| {
            kib.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<usize>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// The size of each page the server sends.
const PAGE_BYTES: usize = 64 * 1024;

/// Starts the server on 127.0.0.1: each request waits `latency`, then gets a page of
/// [`PAGE_BYTES`] naming its path.
async fn serve(latency: Duration) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("a local address");
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| async move {
                    tokio::time::sleep(latency).await;
                    let mut page = format!("page {}\n", request.uri().path()).into_bytes();
                    page.resize(PAGE_BYTES, b'.');
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(page))))
                });
                // A connection the client drops half-way ends with an error: nothing to do.
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    addr
}

/// The units of 16 KiB in flight past which the loaded server slows down.
const KNEE_UNITS: usize = 16;

/// The size of page `id` on the loaded server, in units of 16 KiB: 1 to 4.
fn units(id: u32) -> usize {
    (id as usize * 7 + 3) % 4 + 1
}

/// What the loaded server saw: the units in flight now and at most, and the sum of the
/// latencies it gave.
#[derive(Default)]
struct Load {
    in_flight: AtomicUsize,
    most: AtomicUsize,
    requests: AtomicUsize,
    waited_micros: AtomicUsize,
}

/// Starts a server on 127.0.0.1 that slows down under load: a request for page `id` waits
/// `latency`, or `latency × in flight / KNEE_UNITS` past [`KNEE_UNITS`] units in flight
/// (counted as it arrives, its own included), then gets [`units`]`(id)` × 16 KiB.
async fn serve_loaded(latency: Duration, load: Arc<Load>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("a local address");
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            let load = load.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let load = load.clone();
                    async move {
                        let id: u32 = request.uri().path()[1..].parse().unwrap_or(0);
                        let size = units(id);
                        let now = load.in_flight.fetch_add(size, Ordering::SeqCst) + size;
                        load.most.fetch_max(now, Ordering::SeqCst);
                        let wait = latency.mul_f64(now.max(KNEE_UNITS) as f64 / KNEE_UNITS as f64);
                        tokio::time::sleep(wait).await;
                        load.in_flight.fetch_sub(size, Ordering::SeqCst);
                        load.requests.fetch_add(1, Ordering::SeqCst);
                        load.waited_micros
                            .fetch_add(wait.as_micros() as usize, Ordering::SeqCst);
                        let page = vec![b'.'; size * 16 * 1024];
                        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(page))))
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    addr
}

type HttpClient = Client<HttpConnector, Empty<Bytes>>;

/// Page `id`, fetched whole.
async fn fetch(client: HttpClient, addr: SocketAddr, id: u32) -> (u32, Bytes) {
    let uri = format!("http://{addr}/{id}").parse().expect("a valid URI");
    let response = client.get(uri).await.expect("the server answers");
    let body = response
        .into_body()
        .collect()
        .await
        .expect("the whole body")
        .to_bytes();
    (id, body)
}

/// A database file of its own, with a table of pages; each insert is its own transaction, in
/// SQLite's write-ahead log, synced at checkpoints (`synchronous = NORMAL`) rather than at each
/// commit, so that a run measures the work more than the disk's sync.
fn open(path: &Path) -> Arc<Mutex<Connection>> {
    remove(path);
    let connection = Connection::open(path).expect("open the database");
    connection
        .pragma_update(None, "journal_mode", "WAL")
        .expect("the write-ahead log");
    connection
        .pragma_update(None, "synchronous", "NORMAL")
        .expect("sync at checkpoints");
    connection
        .execute(
            "CREATE TABLE pages (id INTEGER PRIMARY KEY, len INTEGER NOT NULL, body BLOB NOT NULL)",
            [],
        )
        .expect("create the table");
    Arc::new(Mutex::new(connection))
}

/// Stores a page on a blocking thread: the consumer's real work.
async fn store(db: Arc<Mutex<Connection>>, (id, body): (u32, Bytes)) {
    tokio::task::spawn_blocking(move || {
        let connection = db.lock().expect("the database lock");
        connection
            .execute(
                "INSERT INTO pages (id, len, body) VALUES (?1, ?2, ?3)",
                params![id, body.len() as i64, &body[..]],
            )
            .expect("insert a page");
    })
    .await
    .expect("the insert's thread");
}

fn rows(db: &Arc<Mutex<Connection>>) -> i64 {
    db.lock()
        .expect("the database lock")
        .query_row("SELECT COUNT(*) FROM pages", [], |row| row.get(0))
        .expect("count the rows")
}

/// One run: its wall time, the rows stored and the process's peak resident memory during it.
struct Run {
    wall: Duration,
    rows: i64,
    peak: usize,
}

async fn measure<F: Future<Output = ()>>(db: &Arc<Mutex<Connection>>, run: F) -> Run {
    reset_peak();
    let start = Instant::now();
    run.await;
    let wall = start.elapsed();
    Run {
        wall,
        rows: rows(db),
        peak: peak_resident(),
    }
}

/// Removes a database and its write-ahead log.
fn remove(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let _ = std::fs::remove_file(file);
    }
}

/// The faster of two runs.
fn better(best: Option<Run>, run: Run) -> Option<Run> {
    match best {
        Some(best) if best.wall <= run.wall => Some(best),
        _ => Some(run),
    }
}

fn arg(n: usize, default: u64) -> u64 {
    std::env::args()
        .nth(n)
        .map(|arg| arg.parse().expect("a whole number"))
        .unwrap_or(default)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let began = Instant::now();
    let budget = std::env::var("PINFOLD_REAL_IO_BUDGET_MS")
        .ok()
        .map(|ms| Duration::from_millis(ms.parse().expect("a whole number of milliseconds")));
    let pages = arg(1, 400) as u32;
    let concurrency = arg(2, 16) as usize;
    let latency = Duration::from_millis(arg(3, 20));
    let window = concurrency;
    let addr = serve(latency).await;
    let client: HttpClient = Client::builder(TokioExecutor::new()).build_http();
    let dir = std::env::temp_dir();
    println!(
        "{pages} pages of {} KiB from {addr}, {} ms each, {concurrency} at once; each stored in SQLite",
        PAGE_BYTES / 1024,
        latency.as_millis()
    );

    // Each way twice, in turns, so that neither has the other's warm-up: the better of its
    // two runs is printed.
    let mut pinfold: Option<Run> = None;
    let mut futures: Option<Run> = None;
    for round in 0..2 {
        let path = dir.join(format!(
            "pinfold-real-io-{}-{round}.sqlite",
            std::process::id()
        ));
        let db = open(&path);
        let run = measure(&db, {
            let (client, db) = (client.clone(), db.clone());
            stream::iter(0..pages)
                .map(move |id| fetch(client.clone(), addr, id))
                .ordered_buffer(concurrency)
                .window(window)
                .for_each_driven(move |page| store(db.clone(), page))
        })
        .await;
        pinfold = better(pinfold, run);
        drop(db);
        remove(&path);

        let db = open(&path);
        let run = measure(&db, {
            let (client, db) = (client.clone(), db.clone());
            stream::iter(0..pages)
                .map(move |id| fetch(client.clone(), addr, id))
                .buffered(concurrency)
                .for_each(move |page| store(db.clone(), page))
        })
        .await;
        futures = better(futures, run);
        drop(db);
        remove(&path);
    }
    let (pinfold, futures) = (pinfold.expect("a run"), futures.expect("a run"));

    for (name, run) in [
        (
            format!("pinfold ordered_buffer({concurrency}).window({window}).for_each_driven"),
            &pinfold,
        ),
        (
            format!("futures-util buffered({concurrency}).for_each"),
            &futures,
        ),
    ] {
        println!(
            "{name:58} {:>8.1} ms  {:>5} rows  peak RSS {:>6.1} MiB",
            run.wall.as_secs_f64() * 1e3,
            run.rows,
            run.peak as f64 / (1024.0 * 1024.0)
        );
    }

    loaded(pages, concurrency, latency, &client).await;

    let took = began.elapsed();
    if let Some(budget) = budget {
        if took > budget {
            eprintln!("took {took:?}, over the budget of {budget:?}");
            std::process::exit(1);
        }
        println!(
            "took {:.1} s, within the budget of {:.1} s",
            took.as_secs_f64(),
            budget.as_secs_f64()
        );
    }
}

/// The pages from the loaded server, each way once: weighted under an adaptive limit,
/// weighted under fixed limits, and futures-util's `buffer_unordered` (one page, one unit).
async fn loaded(pages: u32, concurrency: usize, latency: Duration, client: &HttpClient) {
    let load = Arc::new(Load::default());
    let addr = serve_loaded(latency, load.clone()).await;
    println!(
        "\n{pages} pages of 16 to 64 KiB from {addr}, {} ms each up to {} KiB in flight, slower past it",
        latency.as_millis(),
        KNEE_UNITS * 16
    );
    let fetch_all = |client: HttpClient| {
        stream::iter(0..pages).map(move |id| (units(id), fetch(client.clone(), addr, id)))
    };
    let most = 4 * KNEE_UNITS;
    let adaptive = Adaptive::new(most);
    let mut runs = Vec::new();
    for round in 0..2 {
        // The adaptive limit keeps what it learnt from one round to the next.
        let name = format!(
            "pinfold future_queue({most}), Adaptive weight (round {})",
            round + 1
        );
        let run = loaded_run(&load, {
            let measuring = adaptive.clone();
            fetch_all(client.clone())
                .map(move |(weight, page)| (weight, measuring.measure(page)))
                .future_queue(most)
                .limit(adaptive.limit())
                .count()
        })
        .await;
        runs.push((name, run, Some(adaptive.get())));
    }
    for fixed in [KNEE_UNITS, most] {
        let run = loaded_run(&load, {
            fetch_all(client.clone())
                .future_queue(most)
                .limit(Limit::new(fixed))
                .count()
        })
        .await;
        runs.push((
            format!("pinfold future_queue({most}), weight {fixed}"),
            run,
            None,
        ));
    }
    let run = loaded_run(&load, {
        fetch_all(client.clone())
            .map(|(_, page)| page)
            .buffer_unordered(concurrency)
            .count()
    })
    .await;
    runs.push((
        format!("futures-util buffer_unordered({concurrency})"),
        run,
        None,
    ));
    for (name, run, limit) in runs {
        let limit = limit.map_or(String::new(), |limit| format!("  limit after {limit:>2}"));
        println!(
            "{name:58} {:>8.1} ms  {:>5} pages  most {:>3} KiB in flight  mean latency {:>6.1} ms{limit}",
            run.wall.as_secs_f64() * 1e3,
            run.pages,
            run.most * 16,
            run.mean.as_secs_f64() * 1e3,
        );
    }
}

/// One run against the loaded server.
struct LoadedRun {
    wall: Duration,
    pages: usize,
    most: usize,
    mean: Duration,
}

async fn loaded_run(load: &Load, run: impl Future<Output = usize>) -> LoadedRun {
    load.most.store(0, Ordering::SeqCst);
    load.requests.store(0, Ordering::SeqCst);
    load.waited_micros.store(0, Ordering::SeqCst);
    let start = Instant::now();
    let pages = run.await;
    let wall = start.elapsed();
    let requests = load.requests.load(Ordering::SeqCst).max(1);
    LoadedRun {
        wall,
        pages,
        most: load.most.load(Ordering::SeqCst),
        mean: Duration::from_micros((load.waited_micros.load(Ordering::SeqCst) / requests) as u64),
    }
}
