//! The wake protocol: the wake table each slot's wakers point into, the lock-free set of woken
//! slots, the task's registration, and the hub a growable arena's groups share. Nothing here polls.

pub(crate) mod atomic_waker;
pub(crate) mod hub;
pub(crate) mod noted;
pub(crate) mod ready_set;
pub(crate) mod wake_table;
