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
//! ```text
//! cargo run --release --manifest-path examples/real-io/Cargo.toml [PAGES [CONCURRENCY [LATENCY_MS]]]
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
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
use pinfold::{BufferExt, ProgressStreamExt};
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
}
