//! Which topic feeds which sensor: read from every active garden's `mqtt` and
//! `home_assistant` sensors (`garden::sensors::service::mqtt_topics`, which keeps only topics
//! under the garden's own prefix), and what changed since the last read.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use uuid::Uuid;

use crate::error::AppError;
use crate::garden::sensors::model::SensorSource;
use crate::garden::sensors::service::mqtt_topics;
use crate::state::AppState;
use crate::tenancy::TenantRecord;
use crate::tenancy::registry::{self, TenantStatus};

/// One sensor a topic feeds.
#[derive(Debug, Clone)]
pub struct Target {
    pub tenant: Arc<TenantRecord>,
    pub sensor: Uuid,
    pub source: SensorSource,
}

/// Topic to the sensors that read it (one garden's only: the prefix rule).
#[derive(Debug, Clone, Default)]
pub struct TopicMap {
    pub targets: HashMap<String, Vec<Target>>,
}

impl TopicMap {
    pub fn topics(&self) -> BTreeSet<String> {
        self.targets.keys().cloned().collect()
    }
}

/// The map of every active garden. A garden whose sensors cannot be read keeps its topics of
/// `previous` (a database hiccup must not unsubscribe it) and is named in the second value.
pub async fn read(
    state: &AppState,
    previous: &TopicMap,
) -> Result<(TopicMap, Vec<(String, String)>), AppError> {
    let mut map = TopicMap::default();
    let mut failed = Vec::new();
    for tenant in registry::list(state.platform_pool()).await? {
        if tenant.status != TenantStatus::Active {
            continue;
        }
        let tenant = Arc::new(tenant);
        match mqtt_topics(state, &tenant).await {
            Ok(sensors) => {
                for s in sensors {
                    map.targets.entry(s.topic).or_default().push(Target {
                        tenant: tenant.clone(),
                        sensor: s.key,
                        source: s.source,
                    });
                }
            }
            Err(e) => {
                for (topic, targets) in &previous.targets {
                    let kept: Vec<Target> = targets
                        .iter()
                        .filter(|t| t.tenant.id == tenant.id)
                        .cloned()
                        .collect();
                    if !kept.is_empty() {
                        map.targets.entry(topic.clone()).or_default().extend(kept);
                    }
                }
                failed.push((tenant.slug.as_str().to_owned(), e.to_string()));
            }
        }
    }
    Ok((map, failed))
}

/// Topics to subscribe and to unsubscribe to go from `subscribed` to `wanted`.
pub fn diff(
    subscribed: &BTreeSet<String>,
    wanted: &BTreeSet<String>,
) -> (Vec<String>, Vec<String>) {
    (
        wanted.difference(subscribed).cloned().collect(),
        subscribed.difference(wanted).cloned().collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs() {
        let set = |xs: &[&str]| xs.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>();
        let (add, drop) = diff(&set(&["a", "b"]), &set(&["b", "c"]));
        assert_eq!((add, drop), (vec!["c".to_owned()], vec!["a".to_owned()]));
        let (add, drop) = diff(&set(&[]), &set(&[]));
        assert!(add.is_empty() && drop.is_empty());
    }
}
