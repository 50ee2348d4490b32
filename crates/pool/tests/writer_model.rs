//! The batching writer against a model of what must arrive: random schedules of reservations,
//! writes, commits, abandons, flushes, clones and drops across handles and lanes, with the
//! flusher's polls between them, each message checked as it arrives.
//!
//! One thread drives every handle in turn. A handle is a task (a future polled by hand) that
//! owns its `Writer` and runs one command per poll, so that it can hold a reservation open
//! while other handles and the flusher go on. What is checked:
//!
//! - a new reservation's room is zeroed;
//! - each handle's messages arrive whole, once, in the order it committed them, and no
//!   abandoned one ever does;
//! - after a flush, once no reservation is open, the flusher's polls until it has nothing
//!   deliver every message committed before that flush;
//! - once every handle is dropped, every committed message has arrived, the flusher is
//!   finished and the pool has all its buffers back;
//! - a message formatted into a `Buf` with `write!` is there whole, or, not fitting, not at
//!   all.
// The messages are formatted through `std::io::Write`.
#![cfg(feature = "std")]

mod support;

use std::cell::RefCell;
use std::future::{Future, poll_fn};
use std::io::{ErrorKind, Write as _};
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use pinfold_pool::{Buf, BufferPool, Flusher, Reservation, ReserveError, Writer, writer};
use support::{XorShift, poll_once};

/// How many random schedules run, and how many steps each takes.
const CASES: u64 = if cfg!(miri) { 4 } else { 1000 };
const STEPS: usize = if cfg!(miri) { 80 } else { 400 };
/// The most handles alive at once, and made in all, in one schedule.
const MAX_LIVE: usize = 6;
const MAX_HANDLES: usize = 40;
/// The shortest message: its length, its handle and its sequence number in 3 digits.
const HEADER: usize = 5;

#[test]
fn random_schedules_deliver_every_committed_message_once_and_in_order() {
    // (buffers, bytes each): one lane, two lanes, three lanes, and one lane of large buffers.
    let pools = [(4, 32), (16, 32), (24, 48), (4, 60)];
    for seed in 1..=CASES {
        let (buffers, size) = pools[seed as usize % pools.len()];
        Schedule::new(seed, buffers, size).run();
    }
}

/// Message `seq` of handle `id`, `len` bytes of ASCII: its length, the handle, the sequence
/// number in base 64, then letters that depend on all three.
fn message(id: usize, seq: u32, len: usize) -> Vec<u8> {
    assert!((HEADER..=60).contains(&len) && id < MAX_HANDLES && seq < 64 * 64 * 64);
    let mut bytes = vec![b'0' + len as u8, b'A' + id as u8];
    bytes.extend(
        (0..3)
            .rev()
            .map(|digit| b'0' + (seq >> (6 * digit) & 63) as u8),
    );
    bytes.extend((HEADER..len).map(|at| b'a' + ((id * 7 + seq as usize * 3 + at) % 26) as u8));
    bytes
}

/// Cuts a packet back into the `(handle, seq)` of its messages, checking that each is whole.
fn parse(mut packet: &[u8]) -> Vec<(usize, u32)> {
    let mut out = Vec::new();
    while !packet.is_empty() {
        assert!(packet.len() >= HEADER, "a torn message: {packet:?}");
        let len = usize::from(packet[0].wrapping_sub(b'0'));
        let id = usize::from(packet[1].wrapping_sub(b'A'));
        let seq = packet[2..HEADER].iter().fold(0, |seq, &digit| {
            seq << 6 | u32::from(digit.wrapping_sub(b'0'))
        });
        assert!(
            (HEADER..=packet.len()).contains(&len) && packet[..len] == message(id, seq, len),
            "a torn message: {packet:?}"
        );
        out.push((id, seq));
        packet = &packet[len..];
    }
    out
}

/// What the driver tells a handle's task to do next.
#[derive(Debug)]
enum Command {
    Reserve(usize),
    Write(Vec<u8>),
    Commit,
    Abandon,
    Flush,
    Clone,
    Drop,
}

/// What a task answers, for the commands that have an answer.
enum Reply {
    Reserved,
    WouldWait,
    Cloned(Writer),
}

/// Where the driver leaves a handle's next command, and its task the answer.
#[derive(Default)]
struct Mailbox {
    command: Option<Command>,
    reply: Option<Reply>,
}

type Mail = Rc<RefCell<Mailbox>>;

/// The next command: pending until the driver leaves one.
async fn next_command(mail: &Mail) -> Command {
    poll_fn(|_| {
        mail.borrow_mut()
            .command
            .take()
            .map_or(Poll::Pending, Poll::Ready)
    })
    .await
}

fn reply(mail: &Mail, reply: Reply) {
    mail.borrow_mut().reply = Some(reply);
}

/// A handle's task: runs its commands until it is dropped. `staging` is a buffer of another
/// pool that each message is formatted into before it is copied into its room.
async fn serve(mut writer: Writer, mut staging: Buf, mail: Mail) {
    loop {
        match next_command(&mail).await {
            Command::Reserve(len) => match writer.try_reserve(len) {
                Ok(room) => {
                    reply(&mail, Reply::Reserved);
                    hold(room, &mut staging, &mail).await;
                }
                Err(ReserveError::WouldWait) => reply(&mail, Reply::WouldWait),
                Err(error) => panic!("a reservation of {len} bytes failed: {error:?}"),
            },
            Command::Flush => writer.flush(),
            Command::Clone => reply(&mail, Reply::Cloned(writer.clone())),
            Command::Drop => return,
            command => panic!("{command:?} without a reservation open"),
        }
    }
}

/// Holds `room` open until a command ends it.
async fn hold(mut room: Reservation<'_>, staging: &mut Buf, mail: &Mail) {
    assert!(
        room.iter().all(|&byte| byte == 0),
        "new room holds bytes written before: {:?}",
        &room[..]
    );
    loop {
        match next_command(mail).await {
            Command::Write(text) => room.copy_from_slice(format_into(staging, &text)),
            Command::Commit => return room.commit(),
            Command::Abandon => return drop(room),
            command => panic!("{command:?} with a reservation open"),
        }
    }
}

/// `text` formatted into `staging` in two pieces, if it fits; else `text` itself, `staging`
/// left empty as it was.
fn format_into<'a>(staging: &'a mut Buf, text: &'a [u8]) -> &'a [u8] {
    staging.clear();
    let (head, tail) = text.split_at(HEADER);
    let (head, tail) = (
        std::str::from_utf8(head).unwrap(),
        std::str::from_utf8(tail).unwrap(),
    );
    match write!(staging, "{head}{tail}") {
        Ok(()) => {
            assert_eq!(&staging[..], text, "formatted whole");
            staging
        }
        Err(error) => {
            assert_eq!(error.kind(), ErrorKind::WriteZero);
            assert!(
                staging.is_empty(),
                "a failed write wrote {:?}",
                &staging[..]
            );
            text
        }
    }
}

/// A live handle, as the driver sees it.
struct Handle {
    id: usize,
    mail: Mail,
    task: Pin<Box<dyn Future<Output = ()>>>,
    /// The reservation open: its sequence number and length, and whether it was written.
    open: Option<(u32, usize, bool)>,
}

/// One random schedule, and the model of what must arrive.
struct Schedule {
    rng: XorShift,
    pool: BufferPool,
    staging: BufferPool,
    flusher: Flusher,
    size: usize,
    live: Vec<Handle>,
    /// By handle id: the sequence number of its next reservation, its messages committed and
    /// delivered (in order), and how many of its messages were committed at the last flush.
    next_seq: Vec<u32>,
    committed: Vec<Vec<u32>>,
    delivered: Vec<Vec<u32>>,
    owed: Vec<usize>,
}

impl Schedule {
    fn new(seed: u64, buffers: usize, size: usize) -> Self {
        let pool = BufferPool::new(buffers, size);
        let (writer, flusher) = writer::channel(&pool);
        let mut schedule = Self {
            rng: XorShift::new(seed),
            pool,
            // Shorter than the longest messages, which then do not fit.
            staging: BufferPool::new(MAX_LIVE, size * 3 / 4),
            flusher,
            size,
            live: Vec::new(),
            next_seq: Vec::new(),
            committed: Vec::new(),
            delivered: Vec::new(),
            owed: Vec::new(),
        };
        schedule.add(writer);
        schedule
    }

    fn run(mut self) {
        for _ in 0..STEPS {
            if self.rng.below(4) == 0 {
                self.flusher_step();
            } else {
                let at = self.rng.below(self.live.len());
                self.handle_step(at);
            }
        }
        self.finish();
    }

    /// Starts the task of a new handle.
    fn add(&mut self, writer: Writer) {
        let id = self.next_seq.len();
        let mail = Mail::default();
        let staging = self.staging.try_acquire().expect("a staging buffer");
        self.live.push(Handle {
            id,
            mail: mail.clone(),
            task: Box::pin(serve(writer, staging, mail)),
            open: None,
        });
        self.next_seq.push(0);
        self.committed.push(Vec::new());
        self.delivered.push(Vec::new());
        self.owed.push(0);
    }

    /// Gives live handle `at` a command and runs it; its answer, if any.
    fn send(&mut self, at: usize, command: Command) -> Option<Reply> {
        let handle = &mut self.live[at];
        handle.mail.borrow_mut().command = Some(command);
        let finished = poll_once(&mut handle.task).is_ready();
        assert!(
            handle.mail.borrow().command.is_none(),
            "the command was run"
        );
        if finished {
            self.live.remove(at);
            return None;
        }
        handle.mail.borrow_mut().reply.take()
    }

    /// One operation of live handle `at`, chosen at random among those it can do.
    fn handle_step(&mut self, at: usize) {
        match self.live[at].open {
            Some((seq, len, written)) => match self.rng.below(10) {
                0 => self.end(at, false),
                _ if written => self.end(at, true),
                _ => {
                    let id = self.live[at].id;
                    self.send(at, Command::Write(message(id, seq, len)));
                    self.live[at].open = Some((seq, len, true));
                }
            },
            None => match self.rng.below(10) {
                0 => {
                    self.send(at, Command::Flush);
                    self.owe_committed();
                }
                1 if self.live.len() < MAX_LIVE && self.next_seq.len() < MAX_HANDLES => {
                    let Some(Reply::Cloned(writer)) = self.send(at, Command::Clone) else {
                        panic!("a clone answers with its handle");
                    };
                    self.add(writer);
                }
                2 if self.live.len() > 1 => assert!(self.send(at, Command::Drop).is_none()),
                _ => self.reserve(at),
            },
        }
    }

    /// A reservation of a random length by live handle `at`, which may find no buffer.
    fn reserve(&mut self, at: usize) {
        let len = HEADER + self.rng.below(self.size.min(60) - HEADER + 1);
        match self.send(at, Command::Reserve(len)) {
            Some(Reply::Reserved) => {
                let id = self.live[at].id;
                self.live[at].open = Some((self.next_seq[id], len, false));
                self.next_seq[id] += 1;
            }
            Some(Reply::WouldWait) => {}
            _ => panic!("a reservation answers"),
        }
    }

    /// Ends the reservation of live handle `at`: commits it, or abandons it.
    fn end(&mut self, at: usize, commit: bool) {
        let (seq, _, _) = self.live[at].open.take().expect("a reservation open");
        if commit {
            self.send(at, Command::Commit);
            self.committed[self.live[at].id].push(seq);
        } else {
            self.send(at, Command::Abandon);
        }
    }

    /// After a flush request: every message committed so far is owed at the next idle poll
    /// with no reservation open.
    fn owe_committed(&mut self) {
        for (owed, committed) in self.owed.iter_mut().zip(&self.committed) {
            *owed = committed.len();
        }
    }

    fn flusher_step(&mut self) {
        match self.rng.below(5) {
            0 => {
                self.flusher.flush_open();
                self.owe_committed();
            }
            1 | 2 => {
                self.take_batch();
            }
            _ => self.take_all(),
        }
    }

    /// One batch if one is ready, checking each message as it arrives; whether there was one.
    fn take_batch(&mut self) -> bool {
        let Some(batch) = self.flusher.try_next_batch() else {
            return false;
        };
        assert!(!batch.is_empty(), "a batch holds packets");
        let arrived: Vec<(usize, u32)> = batch.iter().flat_map(|packet| parse(packet)).collect();
        drop(batch);
        for (id, seq) in arrived {
            let next = self.delivered[id].len();
            assert_eq!(
                self.committed[id].get(next),
                Some(&seq),
                "handle {id}'s message {seq} arrived; committed {:?}, delivered {:?}",
                self.committed[id],
                self.delivered[id],
            );
            self.delivered[id].push(seq);
        }
        true
    }

    /// Every batch ready; then, if no reservation is open, every message owed by a flush must
    /// have arrived.
    fn take_all(&mut self) {
        while self.take_batch() {}
        if self.live.iter().any(|handle| handle.open.is_some()) {
            return;
        }
        for (id, (&owed, delivered)) in self.owed.iter().zip(&self.delivered).enumerate() {
            assert!(
                delivered.len() >= owed,
                "after a flush, handle {id}'s messages {:?} are still missing",
                &self.committed[id][delivered.len()..owed]
            );
        }
    }

    /// Abandons what is open, drops every handle and takes the rest: everything committed
    /// arrived, and every buffer is back.
    fn finish(mut self) {
        while let Some(at) = self.live.len().checked_sub(1) {
            if self.live[at].open.is_some() {
                self.end(at, false);
            }
            assert!(self.send(at, Command::Drop).is_none());
        }
        while self.take_batch() {}
        assert!(self.flusher.is_finished());
        assert_eq!(
            self.delivered, self.committed,
            "every committed message arrived"
        );
        drop(self.flusher);
        assert_eq!(self.pool.available(), self.pool.capacity());
        assert_eq!(self.staging.available(), self.staging.capacity());
    }
}
