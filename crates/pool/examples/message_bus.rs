//! A message bus over TCP: producer tasks write numbered messages through [`Writer`]s into
//! shared pooled buffers, one [`Flusher`] task writes them in batches to a socket with
//! vectored writes, and a reader cuts the bytes back into messages, each a [`Packet`] of a
//! pooled buffer, with a [`FrameReader`].
//!
//! Each message is a 4-byte big-endian length (8), its producer's number and its sequence
//! number. The reader checks that every message arrived intact (its length, a known producer)
//! and exactly once, each producer's in order, then prints what it checked and the rate; it
//! exits with an error (status 1) otherwise, and with its usage (status 2) on bad arguments.
//!
//! `cargo run --release -p pinfold-pool --features tokio --example message_bus [producers]
//! [messages per producer]`
//!
//! [`Packet`]: pinfold_pool::Packet

use std::pin::pin;
use std::process::ExitCode;
use std::time::Instant;

use futures_util::StreamExt;
use pinfold_pool::{BufferPool, Flusher, FrameReader, LengthPrefixed, Writer, writer};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

/// Bytes of a message after its length prefix: the producer and the sequence number.
const BODY: usize = 8;

const USAGE: &str = "usage: message_bus [producers] [messages per producer]
  producers: 1 or more (default 4); messages per producer: 1 or more (default 50000)";

/// The producers and the messages per producer, from the command line.
fn arguments() -> Result<(u32, u32), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() > 2 {
        return Err(format!("{} arguments, at most 2", args.len()));
    }
    let number = |at: usize, name: &str, default: u32| match args.get(at) {
        None => Ok(default),
        Some(arg) => match arg.parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{name}: `{arg}` is not a number of 1 or more")),
        },
    };
    Ok((
        number(0, "producers", 4)?,
        number(1, "messages per producer", 50_000)?,
    ))
}

fn main() -> ExitCode {
    let (producers, messages) = match arguments() {
        Ok(counts) => counts,
        Err(error) => {
            eprintln!("message_bus: {error}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_io()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(run(producers, messages)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("message_bus: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(producers: u32, messages: u32) -> Result<(), String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let reader = tokio::spawn(read(listener, producers));

    let start = Instant::now();
    let pool = BufferPool::new(16, 8192);
    let (writer, flusher) = writer::channel(&pool);
    let socket = TcpStream::connect(address)
        .await
        .map_err(|e| e.to_string())?;
    let flushing = tokio::spawn(flush(flusher, socket));
    let tasks: Vec<_> = (0..producers)
        .map(|id| tokio::spawn(produce(writer.clone(), id, messages)))
        .collect();
    drop(writer);
    let mut produced = Ok(());
    for task in tasks {
        let result = task.await.map_err(|e| e.to_string()).and_then(|done| done);
        produced = produced.and(result);
    }
    let flushed = flushing
        .await
        .map_err(|e| e.to_string())
        .and_then(|done| done);
    // The reader's error first: it is the cause of the others (a closed socket fails the
    // flusher, whose drop fails the producers).
    let counts = reader.await.map_err(|e| e.to_string())??;
    produced?;
    flushed?;
    let elapsed = start.elapsed();

    for (id, &count) in counts.iter().enumerate() {
        if count != messages {
            return Err(format!(
                "producer {id}: {count} of {messages} messages arrived"
            ));
        }
    }
    let total = u64::from(producers) * u64::from(messages);
    let bytes = total * (4 + BODY as u64);
    let seconds = elapsed.as_secs_f64();
    println!(
        "{} from {}: all arrived intact, once each, each producer's in order",
        count(total, "message"),
        count(producers.into(), "producer"),
    );
    println!(
        "{} over TCP in {elapsed:.2?}: {:.0} messages/s, {:.1} MB/s",
        count(bytes, "byte"),
        total as f64 / seconds,
        bytes as f64 / seconds / 1e6,
    );
    Ok(())
}

/// `n` and the noun, plural unless `n` is 1.
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Writes `messages` numbered messages, asking for a flush after each hundred.
async fn produce(mut writer: Writer, id: u32, messages: u32) -> Result<(), String> {
    for seq in 0..messages {
        let mut room = writer.reserve(4 + BODY).await.map_err(|e| e.to_string())?;
        room[..4].copy_from_slice(&(BODY as u32).to_be_bytes());
        room[4..8].copy_from_slice(&id.to_be_bytes());
        room[8..].copy_from_slice(&seq.to_be_bytes());
        room.commit();
        if seq % 100 == 99 {
            writer.flush();
        }
    }
    Ok(())
}

/// Writes every batch to the socket, then closes it.
async fn flush(mut flusher: Flusher, mut socket: TcpStream) -> Result<(), String> {
    while let Some(batch) = flusher.next_batch().await {
        batch
            .write_all_to_async(&mut socket)
            .await
            .map_err(|e| e.to_string())?;
    }
    socket.shutdown().await.map_err(|e| e.to_string())
}

/// Accepts one connection and reads its messages until it closes: how many arrived from each
/// producer, each checked to be the next of its producer.
async fn read(listener: TcpListener, producers: u32) -> Result<Vec<u32>, String> {
    let (socket, _) = listener.accept().await.map_err(|e| e.to_string())?;
    let pool = BufferPool::new(16, 8192);
    let mut frames = pin!(FrameReader::new(&pool, LengthPrefixed::new(4), socket));
    let mut next = vec![0u32; producers as usize];
    while let Some(frame) = frames.next().await {
        let frame = frame.map_err(|e| e.to_string())?;
        if frame.len() != BODY {
            return Err(format!("a message of {} bytes", frame.len()));
        }
        let id = u32::from_be_bytes(frame[..4].try_into().unwrap());
        let seq = u32::from_be_bytes(frame[4..].try_into().unwrap());
        let expected = next
            .get_mut(id as usize)
            .ok_or_else(|| format!("a message from producer {id}, of {producers}"))?;
        if seq != *expected {
            return Err(format!(
                "producer {id}: message {seq} arrived where {expected} was due"
            ));
        }
        *expected += 1;
    }
    Ok(next)
}
