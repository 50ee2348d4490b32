//! [`Adaptive`]: a [`Limit`] that follows the latency of the futures it lets run.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use alloc::sync::Arc;
use pin_project::{pin_project, pinned_drop};

use crate::Limit;

/// A monotonic clock for [`Adaptive`]: the time since a fixed origin, never decreasing.
///
/// [`SystemClock`] reads [`std::time::Instant`]; any `Fn() -> Duration` is a clock too, so a
/// test on tokio's paused clock passes `move || origin.elapsed()` with `origin` a
/// `tokio::time::Instant`.
pub trait Clock {
    /// The time now, since the clock's origin.
    fn now(&self) -> Duration;
}

impl<F: Fn() -> Duration> Clock for F {
    fn now(&self) -> Duration {
        self()
    }
}

/// The clock of [`Adaptive::new`]: [`std::time::Instant`], from when it was made.
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    origin: std::time::Instant,
}

impl SystemClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        Self {
            origin: std::time::Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// The parameters of an [`Adaptive`] limit; [`new(max)`](Self::new) gives the defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveSettings {
    /// The limit to begin with. Default 1.
    pub initial: usize,
    /// The least the limit falls to. Default 1.
    pub min: usize,
    /// The most the limit grows to: the capacity of the buffer it steers (it cannot run more).
    pub max: usize,
    /// A future whose latency exceeds `tolerance` times the baseline signals congestion.
    /// Default 1.5. `f64::INFINITY` counts no latency as congestion, only failures
    /// ([`measure_try`](Adaptive::measure_try), [`measure_with`](Adaptive::measure_with)).
    pub tolerance: f64,
    /// On congestion the limit is multiplied by `backoff`. Default 0.75.
    pub backoff: f64,
    /// How long the baseline remembers, in rounds of futures (a round is as many futures as
    /// the limit): a baseline that no future measured at as light a load has matched for
    /// that long rises to the least latency seen since. Default 10.
    pub baseline_rounds: usize,
}

impl AdaptiveSettings {
    /// The defaults, growing to `max` at most: start at 1, never below 1, tolerance 1.5,
    /// backoff 0.75, a baseline that remembers 10 rounds.
    ///
    /// # Panics
    /// If `max` is 0, with the message `Adaptive: max must be at least 1`.
    #[track_caller]
    pub fn new(max: usize) -> Self {
        assert!(max > 0, "Adaptive: max must be at least 1");
        Self {
            initial: 1,
            min: 1,
            max,
            tolerance: 1.5,
            backoff: 0.75,
            baseline_rounds: 10,
        }
    }

    #[track_caller]
    fn check(&self) {
        assert!(
            1 <= self.min && self.min <= self.initial && self.initial <= self.max,
            "Adaptive: the settings need 1 <= min <= initial <= max, got {self:?}"
        );
        assert!(
            self.tolerance >= 1.0,
            "Adaptive: tolerance must be at least 1, got {}",
            self.tolerance
        );
        assert!(
            self.backoff > 0.0 && self.backoff < 1.0,
            "Adaptive: backoff must be between 0 and 1, got {}",
            self.backoff
        );
        assert!(
            self.baseline_rounds >= 1,
            "Adaptive: baseline_rounds must be at least 1"
        );
    }
}

/// A concurrency limit that adapts to the latency of the futures it lets run, in the manner
/// of TCP's congestion control (additive increase, multiplicative decrease): it grows while
/// their latency stays near the least seen, and shrinks when the latency rises past a
/// threshold or a future fails. Enabled by the `std` feature.
///
/// # Use
///
/// Wrap each future in [`measure`](Self::measure) (or [`measure_try`](Self::measure_try), or
/// [`measure_with`](Self::measure_with)) and give the buffer [`limit`](Self::limit), with a
/// concurrency of [`max`](AdaptiveSettings::max):
///
/// ```
/// use std::time::Duration;
/// use futures::{StreamExt, stream};
/// use pinfold::{Adaptive, BufferExt};
///
/// async fn call(request: u32) -> u32 {
///     request * 2
/// }
///
/// let adaptive = Adaptive::new(64);
/// let responses: Vec<u32> = futures::executor::block_on(
///     stream::iter(0..100u32)
///         .map(|request| adaptive.measure(call(request)))
///         .unordered_buffer(64)
///         .limit(adaptive.limit())
///         .collect(),
/// );
/// assert_eq!(responses.len(), 100);
/// ```
///
/// **In a test on tokio's paused clock** (`start_paused`, `tokio::time::pause`), make it with
/// [`with_clock`](Self::with_clock) and tokio's clock, as its example does. `Adaptive::new`
/// reads the [`SystemClock`], which does not see virtual time: each sleep then measures a few
/// microseconds of real work, the baseline is that small, and the limit follows the noise of
/// the machine (it was seen to fall to 2 with a 15 µs baseline).
///
/// # The algorithm
///
/// Each measured future's latency is the time from its first poll to its output, read from
/// the [`Clock`], and its *load* is how many measured futures were running when it started,
/// itself included. The *baseline* estimates the latency without load (below).
/// A future signals *congestion* when it failed (as the judge of
/// [`measure_with`](Self::measure_with) says; an `Err` for [`measure_try`](Self::measure_try))
/// or its latency exceeds `tolerance × baseline`. On each finished future:
///
/// - **No congestion**: the limit grows, if it is what holds the futures back: only while at
///   least half of it is in use (so a limit does not climb while the application, not the
///   backend, is what is slow, to let a later burst run into the backend all at once). In
///   the *slow start*, until the first congestion, by 1 per future (so it doubles each round
///   of futures); after it, by `1 / limit` per future (by 1 each round).
/// - **Congestion**: the limit is multiplied by `backoff` (not below `min`), at most once per
///   round: only a future that started after the last cut cuts it again, so the futures
///   already running when the latency rose, which all see it, cut it once.
///
/// The limit is kept as a fraction and the buffer runs its whole part, between `min` and
/// `max`. Defaults ([`AdaptiveSettings::new`]): start at 1, `min` 1, `tolerance` 1.5,
/// `backoff` 0.75.
///
/// **The baseline** follows the backend both ways. It falls at once to a latency below it.
/// It rises when a backend becomes lastingly slower: the baseline remembers the highest load
/// at which a future matched it (within a tenth), and once a whole *epoch*
/// ([`baseline_rounds`](AdaptiveSettings::baseline_rounds) rounds of futures) has passed in
/// which every future at that load or lighter was slower, the baseline becomes the least of
/// their latencies. The load matters: on a backend past its knee latency rises with load, and
/// a baseline that followed the latencies of a loaded backend would climb with them and
/// let the limit climb too. After a lasting slowdown congestion cuts the limit until futures
/// run at the light load again, which measures the backend's new latency. An epoch without a
/// future at that load leaves the baseline as it is. A baseline of zero (futures ready at
/// their first poll on a clock that did not move) makes every later latency above zero a
/// congestion. Futures dropped before they finish are not measured.
///
/// # Sharing
///
/// `Adaptive` is a handle (`Clone`, and `Send + Sync` with a clock that is): its clones
/// measure into the same limit, from any thread. Its [`limit`](Self::limit) may steer several
/// buffers at once, which then share it as one budget (see [`Limit`]), and the buffers of
/// later batches: what it learnt carries over.
pub struct Adaptive<C = SystemClock> {
    shared: Arc<Shared<C>>,
}

struct Shared<C> {
    clock: C,
    settings: AdaptiveSettings,
    limit: Limit,
    /// How many cuts there were: a future that started before the last one does not cut.
    /// Written under `state`'s lock, read without it when a future starts.
    cuts: AtomicU64,
    /// How many measured futures have started and not finished (nor been dropped).
    running: AtomicUsize,
    state: Mutex<State>,
}

/// What the controller knows, under one lock.
#[derive(Debug)]
struct State {
    /// The limit, fractional: the buffer runs its whole part.
    limit: f64,
    baseline: Option<Duration>,
    /// The highest load at which a future's latency matched the baseline (within a tenth).
    baseline_load: usize,
    /// The least latency this epoch of a future at `baseline_load` or lighter, if any.
    epoch_least: Option<Duration>,
    /// The futures measured this epoch.
    epoch_len: usize,
    /// Whether a future this epoch matched the baseline (within a tenth): then the baseline
    /// still holds, and the epoch does not raise it.
    epoch_matched: bool,
    slow_start: bool,
}

impl State {
    /// Updates the baseline with a latency measured at `load`, and ends the epoch if it is
    /// due (`rounds` rounds of the limit).
    fn observe(&mut self, latency: Duration, load: usize, rounds: usize) {
        match self.baseline {
            Some(baseline) if latency >= baseline => {
                // Within a tenth of it: the baseline still holds at this load.
                if latency <= baseline + baseline / 10 {
                    self.baseline_load = self.baseline_load.max(load);
                    self.epoch_matched = true;
                }
            }
            _ => {
                self.baseline = Some(latency);
                self.baseline_load = load;
                self.epoch_least = None;
                // A new epoch begins after the future that set the baseline.
                self.epoch_len = 0;
                self.epoch_matched = false;
            }
        }
        if load <= self.baseline_load {
            self.epoch_least = Some(self.epoch_least.map_or(latency, |least| least.min(latency)));
        }
        self.epoch_len += 1;
        if self.epoch_len >= rounds.saturating_mul(self.limit as usize).max(1) {
            // A whole epoch: if no future as lightly loaded matched the baseline, the backend
            // is slower now, and its least latency is the new baseline. One that matched it
            // keeps it: otherwise the baseline would creep up, a tenth at most each epoch,
            // with the latency of the load the limit itself puts on the backend.
            let least = self.epoch_least.take();
            if !self.epoch_matched {
                if let Some(least) = least {
                    self.baseline = Some(least);
                }
            }
            self.epoch_len = 0;
            self.epoch_matched = false;
        }
    }
}

impl Adaptive<SystemClock> {
    /// An adaptive limit with the default settings, growing to `max` at most, on the
    /// [`SystemClock`]. On tokio's paused clock (in tests), use [`with_clock`](Self::with_clock)
    /// with tokio's clock instead: the system clock does not see virtual time.
    ///
    /// # Panics
    /// If `max` is 0, with the message `Adaptive: max must be at least 1`.
    #[track_caller]
    pub fn new(max: usize) -> Self {
        Self::with_clock(AdaptiveSettings::new(max), SystemClock::new())
    }
}

impl<C: Clock> Adaptive<C> {
    /// An adaptive limit with `settings`, measured on `clock`.
    ///
    /// # Panics
    /// Unless `1 <= min <= initial <= max`, `tolerance >= 1`, `0 < backoff < 1` and
    /// `baseline_rounds >= 1`, with a message that says which.
    ///
    /// # Example
    ///
    /// On tokio's clock (paused in tests):
    ///
    /// ```
    /// use pinfold::{Adaptive, AdaptiveSettings};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true)
    /// #     .build().unwrap().block_on(async {
    /// let origin = tokio::time::Instant::now();
    /// let settings = AdaptiveSettings { initial: 4, ..AdaptiveSettings::new(32) };
    /// let adaptive = Adaptive::with_clock(settings, move || origin.elapsed());
    /// assert_eq!(adaptive.get(), 4);
    /// # });
    /// ```
    #[track_caller]
    pub fn with_clock(settings: AdaptiveSettings, clock: C) -> Self {
        settings.check();
        Self {
            shared: Arc::new(Shared {
                clock,
                settings,
                limit: Limit::new(settings.initial),
                cuts: AtomicU64::new(0),
                running: AtomicUsize::new(0),
                state: Mutex::new(State {
                    limit: settings.initial as f64,
                    baseline: None,
                    baseline_load: 0,
                    epoch_least: None,
                    epoch_len: 0,
                    epoch_matched: false,
                    slow_start: true,
                }),
            }),
        }
    }

    /// `future`, measured: its latency adapts the limit when it finishes; it never counts as
    /// failed.
    pub fn measure<F: Future>(&self, future: F) -> Measured<F, C> {
        self.measure_with(future, |_| false)
    }

    /// `future`, measured: its latency adapts the limit when it finishes, and an `Err` counts
    /// as a failure (a congestion whatever its latency).
    pub fn measure_try<F, T, E>(&self, future: F) -> Measured<F, C>
    where
        F: Future<Output = Result<T, E>>,
    {
        self.measure_with(future, Result::is_err)
    }

    /// `future`, measured: its latency adapts the limit when it finishes, and so does whether
    /// `failed` says its output is a failure (a congestion whatever its latency).
    pub fn measure_with<F: Future>(
        &self,
        future: F,
        failed: fn(&F::Output) -> bool,
    ) -> Measured<F, C> {
        Measured {
            future,
            adaptive: self.clone(),
            started: None,
            failed,
        }
    }

    /// Records one finished future: started at `started`, failed or not.
    fn record(&self, started: Start, failed: bool) {
        let shared = &*self.shared;
        let latency = shared.clock.now().saturating_sub(started.at);
        let settings = &shared.settings;
        // The units of the limit in use (the futures the buffers it steers run, or their
        // weights), this future's own included: it is given back once its output is out.
        let in_use = shared.limit.in_use();
        let mut state = shared.lock();
        if !failed {
            state.observe(latency, started.load, settings.baseline_rounds);
        }
        let congested = failed
            || state
                .baseline
                .is_some_and(|baseline| latency > threshold(baseline, settings.tolerance));
        if congested {
            // Relaxed: `cuts` is written only under the lock, which orders it here.
            let cuts = shared.cuts.load(Ordering::Relaxed);
            if started.cuts != cuts {
                return;
            }
            state.limit = (state.limit * settings.backoff).max(settings.min as f64);
            state.slow_start = false;
            shared.cuts.store(cuts + 1, Ordering::Relaxed);
        } else if in_use * 2 >= state.limit as usize {
            let step = if state.slow_start {
                1.0
            } else {
                1.0 / state.limit
            };
            state.limit = (state.limit + step).min(settings.max as f64);
        }
        // Stored under the lock, so that the stores come in the order of the updates; a raise
        // wakes the buffers' tasks once the lock is let go, as a waker may read this limit.
        // Quietly: a panic of another task's waker would otherwise come out of this future's
        // poll and lose its output.
        let raised = shared.limit.store_quietly(state.limit as usize);
        drop(state);
        if raised {
            shared.limit.wake_quietly();
        }
    }
}

impl<C> Adaptive<C> {
    /// The handle to give the buffer this limit steers, made with a concurrency of
    /// [`max`](AdaptiveSettings::max): `buffer.limit(adaptive.limit())`.
    pub fn limit(&self) -> Limit {
        self.shared.limit.clone()
    }

    /// The limit now.
    pub fn get(&self) -> usize {
        self.shared.limit.get()
    }

    /// The baseline: the latency of the backend without load, as the limit estimates it
    /// ([*The algorithm*](Self#the-algorithm)): the least measured of a future that did not
    /// fail, or, after a lasting slowdown, the least since. `None` until one finished.
    pub fn baseline(&self) -> Option<Duration> {
        self.shared.lock().baseline
    }

    /// The settings it was made with.
    pub fn settings(&self) -> AdaptiveSettings {
        self.shared.settings
    }
}

/// The latency past which a future signals congestion: `tolerance` times `baseline`, or none
/// (`Duration::MAX`) when that is past any duration (an infinite tolerance counts only
/// failures).
fn threshold(baseline: Duration, tolerance: f64) -> Duration {
    Duration::try_from_secs_f64(baseline.as_secs_f64() * tolerance).unwrap_or(Duration::MAX)
}

impl<C> Shared<C> {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic under the lock cannot leave the state torn (each field is written whole).
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<C> Clone for Adaptive<C> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<C> fmt::Debug for Adaptive<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("Adaptive")
            .field("limit", &state.limit)
            .field("baseline", &state.baseline)
            .field("slow_start", &state.slow_start)
            .field("settings", &self.shared.settings)
            .finish()
    }
}

/// When a measured future started, and how many cuts there had been.
#[derive(Clone, Copy, Debug)]
struct Start {
    at: Duration,
    cuts: u64,
    /// How many measured futures were running as it started, itself included.
    load: usize,
}

/// Future for [`Adaptive::measure`], [`measure_try`](Adaptive::measure_try) and
/// [`measure_with`](Adaptive::measure_with): the future's output, its latency recorded.
#[pin_project(PinnedDrop)]
#[must_use = "futures do nothing unless polled"]
pub struct Measured<F: Future, C> {
    #[pin]
    future: F,
    adaptive: Adaptive<C>,
    /// Set at the first poll; taken when it finishes.
    started: Option<Start>,
    failed: fn(&F::Output) -> bool,
}

impl<F: Future, C: Clock> Future for Measured<F, C> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let shared = &this.adaptive.shared;
        let started = *this.started.get_or_insert_with(|| Start {
            at: shared.clock.now(),
            // Relaxed: a stale count only means this future may not cut (or cut once more).
            cuts: shared.cuts.load(Ordering::Relaxed),
            // Relaxed: a count, for the baseline's load.
            load: shared.running.fetch_add(1, Ordering::Relaxed) + 1,
        });
        let out = core::task::ready!(this.future.poll(cx));
        *this.started = None;
        shared.running.fetch_sub(1, Ordering::Relaxed);
        this.adaptive.record(started, (this.failed)(&out));
        Poll::Ready(out)
    }
}

#[pinned_drop]
impl<F: Future, C> PinnedDrop for Measured<F, C> {
    fn drop(self: Pin<&mut Self>) {
        // Started and not finished: no longer running.
        if self.started.is_some() {
            self.adaptive.shared.running.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl<F: Future + fmt::Debug, C> fmt::Debug for Measured<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Measured")
            .field("future", &self.future)
            .field("started", &self.started.map(|start| start.at))
            .finish_non_exhaustive()
    }
}
