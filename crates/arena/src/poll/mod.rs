//! The poll loop: what a poll of one value came to ([`Step`](step::Step)), the intrusive
//! queues of slots to poll, and the rounds that poll them, over any storage kind.

pub(crate) mod queue;
pub(crate) mod round;
pub(crate) mod step;
