//! A `FutureMap` driven while its consumer works (`driven`, then `for_each_driven`), in tokio's
//! paused virtual time: at its limit it goes on polling its futures, so a consumer waiting on a
//! lock that one of them holds completes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use pinfold_buffer::ProgressStreamExt;
use pinfold_map::FutureMap;
use tokio::sync::Mutex;
use tokio::time::{sleep, timeout};

type Job = Pin<Box<dyn Future<Output = u64> + Send>>;

/// Key 0 takes the lock and holds it across a sleep; keys 1 to 3 are ready at once. Driven
/// with a limit of 1, more outputs are ready than the limit while the consumer waits for the
/// lock: the map must still poll the holder.
#[test]
fn a_future_map_driven_at_its_limit_still_polls_a_future_holding_the_consumer_s_lock() {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
        .block_on(async {
            let lock = Arc::new(Mutex::new(0));
            let mut map: FutureMap<u64, Job> = FutureMap::new();
            let held = lock.clone();
            map.insert(
                0,
                Box::pin(async move {
                    let mut guard = held.lock().await;
                    sleep(Duration::from_millis(10)).await;
                    *guard += 1;
                    0
                }),
            );
            for key in 1..=3 {
                map.insert(key, Box::pin(async move { key }));
            }

            let mut seen = Vec::new();
            let driven = map.driven(1).for_each_driven(|(key, output)| {
                assert_eq!(key, output);
                seen.push(key);
                let lock = lock.clone();
                async move { *lock.lock().await += 10 }
            });
            timeout(Duration::from_secs(60), driven)
                .await
                .expect("the map goes on polling the lock holder at its limit");
            seen.sort();
            assert_eq!(seen, [0, 1, 2, 3]);
            assert_eq!(*lock.lock().await, 41);
        });
}
