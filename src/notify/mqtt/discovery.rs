//! Home Assistant MQTT discovery (`HOME_ASSISTANT_DISCOVERY=true`): for every live plant of
//! every active garden, three sensors on one device per plant, announced by retained configs
//! on `<prefix>/sensor/kultiva_<garden>_<plant>_<what>/config` (Home Assistant's documented
//! discovery topic and payload: <https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery>,
//! <https://www.home-assistant.io/integrations/sensor.mqtt/>):
//! - `next_watering`: the day the plant's watering reminder is due (device class `date`; none
//!   while the plant's phase withholds watering: the safer of the two sources holds);
//! - `phase`: the name of its current phase;
//! - `safety_interval_end`: the last blocked day of its running safety intervals (device
//!   class `date`; none when none runs), with the treatment, the interval's source and the
//!   first day a harvest is allowed as attributes.
//!
//! States go on retained topics under the garden's prefix, `kultiva/<slug>/plants/<plant>/…`.
//! Every `HOME_ASSISTANT_PUBLISH_SECONDS` the values are read through the services that own
//! them (care's due reminders, the plants list, harvest's readiness) and only what changed
//! since the last round is published; a plant that is gone (archived or deleted) gets an empty
//! retained config, which removes its entities from Home Assistant, and empty states.

use std::collections::{BTreeMap, HashMap};

use rumqttc::{AsyncClient, QoS};
use serde_json::{Value, json};
use tokio::sync::watch;
use uuid::Uuid;

use super::connection::STATUS_TOPIC;
use crate::error::AppError;
use crate::garden::care::service::due_reminders;
use crate::garden::harvest::service::watched_readiness;
use crate::garden::plants::repo::Filter;
use crate::garden::plants::service::{LIST_MAX_LIMIT, list_plants};
use crate::state::AppState;
use crate::tenancy::TenantRecord;
use crate::tenancy::registry::{self, TenantStatus};
use crate::values::page::PageRequest;

/// Home Assistant's "no value" payload for a sensor (its state becomes unknown).
pub const NONE: &str = "None";

/// The three sensors of a plant: id part, name, device class, and whether it has attributes.
const WHATS: [(&str, &str, Option<&str>, bool); 3] = [
    ("next_watering", "Next watering", Some("date"), false),
    ("phase", "Phase", None, false),
    (
        "safety_interval_end",
        "Safety interval ends",
        Some("date"),
        true,
    ),
];

/// A slug as an object id part: Home Assistant's entity ids take `[a-z0-9_]`.
fn id_part(slug: &str) -> String {
    slug.replace('-', "_")
}

/// `kultiva_<garden>_<plant>_<what>`: the discovery object id and unique id.
pub fn object_id(slug: &str, plant: Uuid, what: &str) -> String {
    format!("kultiva_{}_{}_{what}", id_part(slug), plant.simple())
}

/// The discovery prefix of a garden (`{slug}` in the configured prefix replaced).
pub fn prefix_of(template: &str, slug: &str) -> String {
    template.replace("{slug}", slug)
}

pub fn config_topic(prefix: &str, slug: &str, plant: Uuid, what: &str) -> String {
    format!("{prefix}/sensor/{}/config", object_id(slug, plant, what))
}

pub fn state_topic(slug: &str, plant: Uuid, what: &str) -> String {
    format!(
        "{}plants/{}/{what}",
        crate::rules::mqtt::garden_prefix(slug),
        plant.simple()
    )
}

/// What is published of one plant.
#[derive(Debug, Clone, PartialEq)]
pub struct PlantState {
    pub key: Uuid,
    pub name: String,
    pub species: String,
    pub next_watering: Option<String>,
    pub phase: Option<String>,
    pub safety_end: Option<String>,
    pub safety_attributes: Value,
}

/// The discovery config of one sensor of a plant.
fn config(slug: &str, garden_name: &str, p: &PlantState, what: usize) -> Value {
    let (part, name, device_class, attributes) = WHATS[what];
    let id = object_id(slug, p.key, part);
    let mut c = json!({
        "name": name,
        "unique_id": id,
        "object_id": id,
        "default_entity_id": format!("sensor.{id}"),
        "state_topic": state_topic(slug, p.key, part),
        "availability": [{"topic": STATUS_TOPIC, "payload_available": "online",
                          "payload_not_available": "offline"}],
        "device": {
            "identifiers": [format!("kultiva_{}_{}", id_part(slug), p.key.simple())],
            "name": p.name,
            "manufacturer": "Kultiva",
            "model": p.species,
            "suggested_area": garden_name,
        },
        "qos": 1,
    });
    if let Some(class) = device_class {
        c["device_class"] = json!(class);
    }
    if attributes {
        c["json_attributes_topic"] =
            json!(format!("{}/attributes", state_topic(slug, p.key, part)));
    }
    c
}

/// Every retained message of a garden: topic to payload.
pub fn messages(
    prefix: &str,
    slug: &str,
    garden_name: &str,
    plants: &[PlantState],
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for p in plants {
        for (i, (part, ..)) in WHATS.iter().enumerate() {
            out.insert(
                config_topic(prefix, slug, p.key, part),
                config(slug, garden_name, p, i).to_string(),
            );
        }
        let text = |v: &Option<String>| v.clone().unwrap_or_else(|| NONE.to_owned());
        out.insert(
            state_topic(slug, p.key, "next_watering"),
            text(&p.next_watering),
        );
        out.insert(state_topic(slug, p.key, "phase"), text(&p.phase));
        out.insert(
            state_topic(slug, p.key, "safety_interval_end"),
            text(&p.safety_end),
        );
        out.insert(
            format!(
                "{}/attributes",
                state_topic(slug, p.key, "safety_interval_end")
            ),
            p.safety_attributes.to_string(),
        );
    }
    out
}

/// The garden's live plants with their values, read through the owning services.
pub async fn plant_states(
    state: &AppState,
    tenant: &TenantRecord,
) -> Result<Vec<PlantState>, AppError> {
    let mut plants = Vec::new();
    let mut skip = 0;
    loop {
        let page = PageRequest {
            skip,
            limit: LIST_MAX_LIMIT,
        };
        let got = list_plants(state, tenant, &Filter::default(), page).await?;
        let n = got.items.len() as i64;
        plants.extend(got.items);
        skip += LIST_MAX_LIMIT;
        if n < LIST_MAX_LIMIT || skip >= got.total {
            break;
        }
    }
    // Watering: the due day of each plant's watering reminder, none while withheld.
    let mut watering: HashMap<Uuid, String> = HashMap::new();
    let mut withheld: Vec<Uuid> = Vec::new();
    let limit = crate::garden::care::service::DUE_MAX_LIMIT;
    let mut skip = 0;
    loop {
        let due =
            due_reminders(state, tenant, "all", "urgency", PageRequest { skip, limit }).await?;
        withheld.extend(due.watering_withheld.iter().map(|w| w.plant_key));
        let mut longest = 0;
        for group in [&due.overdue, &due.due_today, &due.upcoming, &due.not_due]
            .into_iter()
            .flatten()
        {
            longest = longest.max(group.len() as i64);
            for r in group.iter().filter(|r| r.reminder_type == "watering") {
                watering
                    .entry(r.plant_key)
                    .or_insert_with(|| r.due_on.clone());
            }
        }
        skip += limit;
        if longest < limit {
            break;
        }
    }
    // Safety intervals: the last blocked day of the intervals running now.
    let running = watched_readiness(state, tenant, usize::MAX, |r| {
        !r.safety_intervals.is_empty()
    })
    .await?;
    let safety: HashMap<Uuid, (String, Value)> = running
        .iter()
        .filter_map(|r| {
            let last = r
                .safety_intervals
                .iter()
                .max_by(|a, b| a.last_blocked_day.cmp(&b.last_blocked_day))?;
            let attributes = json!({
                "harvest_allowed_from": r.harvest_allowed_from,
                "treatment": last.treatment_name,
                "active_ingredient": last.active_ingredient,
                "safety_interval_days": last.safety_interval_days,
                "interval_source": last.interval_source,
                "applied_on": last.applied_on,
            });
            Some((r.plant_key, (last.last_blocked_day.clone(), attributes)))
        })
        .collect();
    Ok(plants
        .into_iter()
        .map(|p| {
            let (safety_end, safety_attributes) = match safety.get(&p.key) {
                Some((day, attrs)) => (Some(day.clone()), attrs.clone()),
                None => (None, json!({})),
            };
            PlantState {
                key: p.key,
                next_watering: if withheld.contains(&p.key) {
                    None
                } else {
                    watering.get(&p.key).cloned()
                },
                phase: p.current_phase_name,
                species: p.species_name.unwrap_or(p.species_key),
                name: p.name,
                safety_end,
                safety_attributes,
            }
        })
        .collect())
}

/// Publishes what differs between `before` and `now` (an empty retained payload for a topic
/// that is gone); `false` when the client could not queue a message.
async fn publish_changes(
    client: &AsyncClient,
    before: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
) -> bool {
    for (topic, payload) in now {
        if before.get(topic) != Some(payload)
            && client
                .publish(topic.clone(), QoS::AtLeastOnce, true, payload.clone())
                .await
                .is_err()
        {
            return false;
        }
    }
    for topic in before.keys().filter(|t| !now.contains_key(*t)) {
        if client
            .publish(topic.clone(), QoS::AtLeastOnce, true, Vec::<u8>::new())
            .await
            .is_err()
        {
            return false;
        }
    }
    true
}

/// The publisher's loop: one round at start, then every `HOME_ASSISTANT_PUBLISH_SECONDS`.
pub async fn run(state: AppState, client: AsyncClient, mut stopped: watch::Receiver<bool>) {
    let Some(cfg) = state.config().mqtt.clone() else {
        return;
    };
    // Garden to what was published last for it.
    let mut published: HashMap<Uuid, BTreeMap<String, String>> = HashMap::new();
    loop {
        match registry::list(state.platform_pool()).await {
            Ok(tenants) => {
                let mut seen = Vec::new();
                for tenant in tenants.iter().filter(|t| t.status == TenantStatus::Active) {
                    seen.push(tenant.id);
                    let slug = tenant.slug.as_str();
                    let prefix = prefix_of(&cfg.discovery_prefix, slug);
                    match plant_states(&state, tenant).await {
                        Ok(plants) => {
                            let now = messages(&prefix, slug, &tenant.name, &plants);
                            let before = published.get(&tenant.id).cloned().unwrap_or_default();
                            if publish_changes(&client, &before, &now).await {
                                published.insert(tenant.id, now);
                            }
                        }
                        Err(e) => {
                            tracing::warn!(garden = %slug, error = %e, "Home Assistant states not read");
                        }
                    }
                }
                // A garden gone (deleted, suspended): its entities go too.
                let gone: Vec<Uuid> = published
                    .keys()
                    .filter(|id| !seen.contains(id))
                    .copied()
                    .collect();
                for id in gone {
                    if let Some(before) = published.remove(&id) {
                        publish_changes(&client, &before, &BTreeMap::new()).await;
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "Home Assistant states not read"),
        }
        tokio::select! {
            () = tokio::time::sleep(cfg.discovery_interval) => {}
            changed = stopped.changed() => {
                if changed.is_err() || *stopped.borrow() {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_topics() {
        let plant = Uuid::nil();
        assert_eq!(
            object_id("my-garden", plant, "phase"),
            "kultiva_my_garden_00000000000000000000000000000000_phase"
        );
        assert_eq!(
            config_topic("homeassistant", "g", plant, "phase"),
            "homeassistant/sensor/kultiva_g_00000000000000000000000000000000_phase/config"
        );
        assert_eq!(
            prefix_of("kultiva/{slug}/homeassistant", "g"),
            "kultiva/g/homeassistant"
        );
        assert!(crate::rules::mqtt::topic_in_garden(
            "g",
            &state_topic("g", plant, "phase")
        ));
    }
}
