//! How many photo decodes run at once: at most `PHOTO_DECODE_CONCURRENCY` in this process, and
//! at most `PHOTO_DECODE_PER_GARDEN` of them for one garden, so one garden's uploads cannot
//! take every slot (or the memory behind them) from the others. Upload checks and rendition
//! jobs draw from the same slots. A decode holds its permit while its pixels are in memory.
//!
//! Per process on purpose: the memory a decode takes is this process's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use uuid::Uuid;

use crate::config::Config;

/// The decode slots of this process.
#[derive(Debug)]
pub struct DecodeGate {
    all: Arc<Semaphore>,
    per_garden: usize,
    gardens: Mutex<HashMap<Uuid, Arc<Semaphore>>>,
}

/// A decode slot, the garden's and the process's; released when dropped.
#[derive(Debug)]
pub struct DecodePermit {
    _garden: OwnedSemaphorePermit,
    _all: OwnedSemaphorePermit,
}

/// No slot came free in time: the caller answers 503 with `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy;

impl DecodeGate {
    pub fn new(concurrency: usize, per_garden: usize) -> Self {
        Self {
            all: Arc::new(Semaphore::new(concurrency.max(1))),
            per_garden: per_garden.max(1),
            gardens: Mutex::new(HashMap::new()),
        }
    }

    fn garden(&self, tenant: Uuid) -> Arc<Semaphore> {
        let mut gardens = self.gardens.lock().unwrap_or_else(|e| e.into_inner());
        // Gardens nobody decodes for are forgotten (only the map holds them, all slots free).
        gardens.retain(|_, s| Arc::strong_count(s) > 1 || s.available_permits() < self.per_garden);
        Arc::clone(
            gardens
                .entry(tenant)
                .or_insert_with(|| Arc::new(Semaphore::new(self.per_garden))),
        )
    }

    /// A slot for one decode of `tenant`'s, waiting at most `wait` (`None`: as long as it
    /// takes, for the rendition workers). The garden's slot first, so a garden's queue waits on
    /// its own slot and never holds a process slot while it waits.
    pub async fn acquire(
        &self,
        tenant: Uuid,
        wait: Option<Duration>,
    ) -> Result<DecodePermit, Busy> {
        let garden = self.garden(tenant);
        let both = async {
            let g = garden.acquire_owned().await.map_err(|_| Busy)?;
            let a = Arc::clone(&self.all)
                .acquire_owned()
                .await
                .map_err(|_| Busy)?;
            Ok(DecodePermit {
                _garden: g,
                _all: a,
            })
        };
        match wait {
            Some(wait) => tokio::time::timeout(wait, both).await.map_err(|_| Busy)?,
            None => both.await,
        }
    }

    /// Slots free in the whole process (for tests and metrics).
    pub fn available(&self) -> usize {
        self.all.available_permits()
    }
}

static GATE: OnceLock<DecodeGate> = OnceLock::new();

/// This process's gate, sized from the first configuration that asks.
pub fn of(config: &Config) -> &'static DecodeGate {
    GATE.get_or_init(|| {
        DecodeGate::new(
            config.photo_decode_concurrency as usize,
            config.photo_decode_per_garden as usize,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_garden_takes_at_most_its_share_and_others_still_get_slots() {
        let gate = DecodeGate::new(2, 1);
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let short = Some(Duration::from_millis(50));
        let first = gate.acquire(a, short).await.expect("a's slot");
        // A second decode of garden a waits and gives up; it held no process slot meanwhile.
        assert_eq!(gate.acquire(a, short).await.err(), Some(Busy));
        assert_eq!(gate.available(), 1);
        // Garden b gets the other process slot.
        let second = gate.acquire(b, short).await.expect("b's slot");
        assert_eq!(gate.available(), 0);
        // The process is full: a third garden waits.
        assert_eq!(gate.acquire(Uuid::new_v4(), short).await.err(), Some(Busy));
        drop(first);
        let again = gate.acquire(a, short).await.expect("a's slot again");
        drop((again, second));
        assert_eq!(gate.available(), 2);
    }
}
