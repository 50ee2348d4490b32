//! Helpers of the writer models: a handle's write, the flusher's drain, and checks of what
//! came out.

use loom::future::block_on;
use pinfold_pool::{Flusher, Writer};

/// Writes `message` through `writer` (waiting for room, as `reserve` does) and commits it.
pub fn write(writer: &mut Writer, message: &[u8]) {
    let mut room = block_on(writer.reserve(message.len())).expect("the flusher lives");
    room.copy_from_slice(message);
    room.commit();
}

/// Writes `message` through `writer` in the room it has now (the pool has a buffer for it) and
/// commits it; gives the handle back, still open.
pub fn write_now(mut writer: Writer, message: &[u8]) -> Writer {
    let mut room = writer.try_reserve(message.len()).expect("room in the pool");
    room.copy_from_slice(message);
    room.commit();
    writer
}

/// Every byte the flusher gives until it is finished (every handle dropped).
pub fn drain(flusher: &mut Flusher) -> Vec<u8> {
    let mut sent = Vec::new();
    while let Some(batch) = block_on(flusher.next_batch()) {
        for packet in batch.iter() {
            sent.extend_from_slice(packet);
        }
    }
    sent
}

/// Asserts that `sent` is `messages`, each once and whole, in some order, and that each pair
/// in `in_order` (first bytes of messages of one handle) came in that order. Every message
/// starts with a byte no other message holds.
pub fn assert_delivered(sent: &[u8], messages: &[&[u8]], in_order: &[(u8, u8)]) {
    let total: usize = messages.iter().map(|message| message.len()).sum();
    assert_eq!(sent.len(), total, "every byte once: {sent:?}");
    let at = |byte: u8| {
        sent.iter()
            .position(|&b| b == byte)
            .unwrap_or_else(|| panic!("{:?} is missing: {sent:?}", byte as char))
    };
    for message in messages {
        let start = at(message[0]);
        assert_eq!(
            &sent[start..start + message.len()],
            *message,
            "whole: {sent:?}"
        );
    }
    for &(first, then) in in_order {
        assert!(
            at(first) < at(then),
            "one handle's messages in order: {sent:?}"
        );
    }
}
