use salvo::oapi::ToSchema;
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::garden::fields;
use crate::garden::sites::model::{DESCRIPTION_MAX, NAME_MAX};
use crate::values::json::{FromJson, JsonFields, Patch};

/// Location types (domain 1.6), for the schema.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LocationKind {
    Zone,
    Home,
    Garden,
    Greenhouse,
    Building,
    Room,
    Balcony,
    Terrace,
    Tent,
    Bed,
    Shelf,
    Container,
}

/// Location types (domain 1.6).
pub const LOCATION_KINDS: &[(&str, &str)] = &[
    ("zone", "zone"),
    ("home", "home"),
    ("garden", "garden"),
    ("greenhouse", "greenhouse"),
    ("building", "building"),
    ("room", "room"),
    ("balcony", "balcony"),
    ("terrace", "terrace"),
    ("tent", "tent"),
    ("bed", "bed"),
    ("shelf", "shelf"),
    ("container", "container"),
];

/// How much sun a location gets (the catalogue's `sun_requirement` words, so a species' need
/// and a place's light compare directly), for the schema.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LightSituation {
    FullSun,
    PartialShade,
    Shade,
}

pub const LIGHT_SITUATIONS: &[(&str, &str)] = &[
    ("full_sun", "full_sun"),
    ("partial_shade", "partial_shade"),
    ("shade", "shade"),
];

/// Largest area of one location in m² (10 ha; anything larger is a typo).
pub const AREA_MAX: f64 = 100_000.0;

pub const SLOT_CODE_MAX: usize = 40;
pub const CAPACITY_MIN: i64 = 1;
pub const CAPACITY_MAX: i64 = 20;
pub const POSITION_MAX: i64 = 10_000;
pub const NEIGHBOURS_MAX: usize = 50;
/// Schema pattern of a slot code: uppercase letters and digits in at least two `_`-joined parts.
pub const SLOT_CODE_PATTERN: &str = "^[A-Z0-9]+(_[A-Z0-9]+)+$";

/// Whether a code is a slot code (`BOX1_A1`).
pub fn is_slot_code(code: &str) -> bool {
    let parts: Vec<&str> = code.split('_').collect();
    parts.len() >= 2
        && code.chars().count() <= SLOT_CODE_MAX
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
}

/// A location of a site: a room, a bed, a shelf, a box; locations nest to any depth.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Location {
    pub key: Uuid,
    pub site_key: Uuid,
    /// The location it hangs below; null directly under the site.
    pub parent_key: Option<Uuid>,
    /// 0 directly under the site.
    pub depth: i32,
    pub name: String,
    /// zone, home, garden, greenhouse, building, room, balcony, terrace, tent, bed, shelf or
    /// container.
    pub kind: Option<String>,
    pub description: Option<String>,
    /// Whether frost reaches the place (null: not recorded).
    pub frost_exposed: Option<bool>,
    /// USDA hardiness zone of the place, `1a` … `13b` (null: not recorded).
    pub climate_zone: Option<String>,
    /// full_sun, partial_shade or shade (null: not recorded).
    pub light_situation: Option<String>,
    /// Area in m², 0–100000 (null: not recorded).
    pub area_sqm: Option<f64>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// A location with what hangs directly below it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LocationDetail {
    #[serde(flatten)]
    pub location: Location,
    /// Live plants standing in this location (not counting child locations).
    pub live_plants: i64,
    pub children: Vec<Location>,
    pub slots: Vec<Slot>,
}

/// One planting position in a location.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Slot {
    pub key: Uuid,
    pub location_key: Uuid,
    /// Uppercase, `_`-joined (`BOX1_A1`), unique per garden.
    pub code: String,
    /// Plants the slot holds, 1–20.
    pub capacity: i32,
    pub position_x: Option<i32>,
    pub position_y: Option<i32>,
    /// Live plants standing in the slot.
    pub live_plants: i64,
    /// Adjacent slots (for companion checks), symmetric.
    pub neighbour_keys: Vec<Uuid>,
    /// The substrate batch filling the slot (null: none recorded).
    pub substrate_batch_key: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Body of `POST /t/{slug}/locations/`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "LocationCreate"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct LocationCreateBody {
    /// The site the location belongs to.
    pub site_key: Uuid,
    /// A location of the same site to hang below; omitted or null: directly under the site.
    pub parent_key: Option<Uuid>,
    /// Up to 120 characters, unique within the site (case-insensitive).
    #[salvo(schema(
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: String,
    #[salvo(schema(value_type = Option<LocationKind>))]
    pub kind: Option<String>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub description: Option<String>,
    /// Whether frost reaches the place.
    pub frost_exposed: Option<bool>,
    /// USDA hardiness zone `1a` … `13b`.
    #[salvo(schema(pattern = "^(1[0-3]|[1-9])[ab]$"))]
    pub climate_zone: Option<String>,
    #[salvo(schema(value_type = Option<LightSituation>))]
    pub light_situation: Option<String>,
    /// Area in m², 0–100000.
    #[salvo(schema(minimum = 0, maximum = 100000))]
    pub area_sqm: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewLocation {
    pub site_id: Uuid,
    pub parent_id: Option<Uuid>,
    pub name: String,
    pub kind: Option<&'static str>,
    pub description: Option<String>,
    pub conditions: LocationConditions,
}

/// The conditions of a location as stored; a create sends them all (absent = null).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LocationConditions {
    pub frost_exposed: Option<bool>,
    pub climate_zone: Option<String>,
    pub light_situation: Option<&'static str>,
    pub area_sqm: Option<f64>,
}

/// A patch of the conditions: absent keeps, null clears.
#[derive(Debug, Clone, PartialEq)]
pub struct ConditionsPatch {
    pub frost_exposed: Patch<bool>,
    pub climate_zone: Patch<String>,
    pub light_situation: Patch<&'static str>,
    pub area_sqm: Patch<f64>,
}

impl ConditionsPatch {
    fn read(f: &mut JsonFields) -> Option<Self> {
        let frost_exposed = patch_bool(f, "frost_exposed");
        let climate_zone = fields::patch_zone(f, "climate_zone");
        let light_situation = fields::patch_choice(f, "light_situation", LIGHT_SITUATIONS);
        let area_sqm = fields::patch_number(f, "area_sqm", 0.0, AREA_MAX);
        Some(Self {
            frost_exposed: frost_exposed?,
            climate_zone: climate_zone?,
            light_situation: light_situation?,
            area_sqm: area_sqm?,
        })
    }

    /// The conditions after the patch.
    pub fn apply(&self, current: &Location) -> LocationConditions {
        fn pick<T: Clone>(p: &Patch<T>, current: Option<T>) -> Option<T> {
            match p {
                Patch::Keep => current,
                Patch::Clear => None,
                Patch::Set(v) => Some(v.clone()),
            }
        }
        let light = current.light_situation.as_deref().and_then(|l| {
            LIGHT_SITUATIONS
                .iter()
                .find(|(n, _)| *n == l)
                .map(|(_, v)| *v)
        });
        LocationConditions {
            frost_exposed: pick(&self.frost_exposed, current.frost_exposed),
            climate_zone: pick(&self.climate_zone, current.climate_zone.clone()),
            light_situation: pick(&self.light_situation, light),
            area_sqm: pick(&self.area_sqm, current.area_sqm),
        }
    }
}

/// A patch of a boolean: absent keeps, null clears (unknown again).
fn patch_bool(f: &mut JsonFields, name: &'static str) -> Option<Patch<bool>> {
    match f.raw(name) {
        None => Some(Patch::Keep),
        Some(Value::Null) => Some(Patch::Clear),
        Some(Value::Bool(b)) => Some(Patch::Set(b)),
        Some(_) => {
            f.reject_field(name, "must be true, false or null", "type_error");
            None
        }
    }
}

fn patch_to_create<T>(p: Patch<T>) -> Option<T> {
    match p {
        Patch::Set(v) => Some(v),
        Patch::Keep | Patch::Clear => None,
    }
}

impl FromJson for NewLocation {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let site_id = fields::key(f, "site_key");
        let parent_id = fields::opt_key(f, "parent_key");
        let name = f.text("name", NAME_MAX);
        let kind = fields::opt_choice(f, "kind", LOCATION_KINDS);
        let description = f.opt_long_text("description", DESCRIPTION_MAX);
        let conditions = ConditionsPatch::read(f);
        let c = conditions?;
        Some(Self {
            site_id: site_id?,
            parent_id: parent_id?,
            name: name?,
            kind: kind?,
            description: description?,
            conditions: LocationConditions {
                frost_exposed: patch_to_create(c.frost_exposed),
                climate_zone: patch_to_create(c.climate_zone),
                light_situation: patch_to_create(c.light_situation),
                area_sqm: patch_to_create(c.area_sqm),
            },
        })
    }
}

/// Body of `PATCH /t/{slug}/locations/{location_key}`: omitted fields stay. Moving: `site_key`
/// and/or `parent_key` (null = directly under the site); the subtree moves along.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "LocationPatch"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct LocationPatchBody {
    /// Null is refused (omit it to stay in the site).
    #[salvo(schema(nullable = false))]
    pub site_key: Option<Uuid>,
    pub parent_key: Option<Uuid>,
    /// Null is refused.
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: Option<String>,
    #[salvo(schema(value_type = Option<LocationKind>))]
    pub kind: Option<String>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub description: Option<String>,
    /// Whether frost reaches the place.
    pub frost_exposed: Option<bool>,
    /// USDA hardiness zone `1a` … `13b`.
    #[salvo(schema(pattern = "^(1[0-3]|[1-9])[ab]$"))]
    pub climate_zone: Option<String>,
    #[salvo(schema(value_type = Option<LightSituation>))]
    pub light_situation: Option<String>,
    /// Area in m², 0–100000.
    #[salvo(schema(minimum = 0, maximum = 100000))]
    pub area_sqm: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LocationPatch {
    pub site_id: Option<Uuid>,
    pub parent_id: Patch<Uuid>,
    pub name: Option<String>,
    pub kind: Patch<&'static str>,
    pub description: Patch<String>,
    pub conditions: ConditionsPatch,
}

impl FromJson for LocationPatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let site_id = fields::patch_required_key(f, "site_key");
        let parent_id = fields::patch_key(f, "parent_key");
        let name = f.patch_text("name", NAME_MAX);
        let kind = fields::patch_choice(f, "kind", LOCATION_KINDS);
        let description = fields::patch_long_text(f, "description", DESCRIPTION_MAX);
        let conditions = ConditionsPatch::read(f);
        Some(Self {
            site_id: site_id?,
            parent_id: parent_id?,
            name: name?,
            kind: kind?,
            description: description?,
            conditions: conditions?,
        })
    }
}

/// Body of `POST /t/{slug}/slots/`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "SlotCreate"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct SlotCreateBody {
    pub location_key: Uuid,
    /// Uppercase letters and digits joined by `_` (`BOX1_A1`), unique per garden.
    #[salvo(schema(min_length = 3, max_length = 40, pattern = "^[A-Z0-9]+(_[A-Z0-9]+)+$"))]
    pub code: String,
    /// 1–20 plants; default 1.
    #[salvo(schema(minimum = 1, maximum = 20))]
    pub capacity: Option<i32>,
    #[salvo(schema(minimum = 0, maximum = 10000))]
    pub position_x: Option<i32>,
    #[salvo(schema(minimum = 0, maximum = 10000))]
    pub position_y: Option<i32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewSlot {
    pub location_id: Uuid,
    pub code: String,
    pub capacity: i64,
    pub position_x: Option<i64>,
    pub position_y: Option<i64>,
}

fn slot_code(f: &mut JsonFields, code: Option<String>) -> Option<String> {
    let code = code?;
    if is_slot_code(&code) {
        Some(code)
    } else {
        f.reject_field(
            "code",
            "must be uppercase letters and digits joined by _ (e.g. BOX1_A1), at most 40 characters",
            "value_error",
        );
        None
    }
}

impl FromJson for NewSlot {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let location_id = fields::key(f, "location_key");
        let code = f.text("code", SLOT_CODE_MAX);
        let code = slot_code(f, code);
        let capacity = f.opt_int("capacity", CAPACITY_MIN, CAPACITY_MAX);
        let position_x = f.opt_int("position_x", 0, POSITION_MAX);
        let position_y = f.opt_int("position_y", 0, POSITION_MAX);
        Some(Self {
            location_id: location_id?,
            code: code?,
            capacity: capacity?.unwrap_or(1),
            position_x: position_x?,
            position_y: position_y?,
        })
    }
}

/// Body of `PATCH /t/{slug}/slots/{slot_key}`: omitted fields stay; positions clear with null.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "SlotPatch"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct SlotPatchBody {
    /// Null is refused.
    #[salvo(schema(
        nullable = false,
        min_length = 3,
        max_length = 40,
        pattern = "^[A-Z0-9]+(_[A-Z0-9]+)+$"
    ))]
    pub code: Option<String>,
    /// 1–20, not below the live plants standing in the slot; null is refused.
    #[salvo(schema(nullable = false, minimum = 1, maximum = 20))]
    pub capacity: Option<i32>,
    #[salvo(schema(minimum = 0, maximum = 10000))]
    pub position_x: Option<i32>,
    #[salvo(schema(minimum = 0, maximum = 10000))]
    pub position_y: Option<i32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SlotPatch {
    pub code: Option<String>,
    pub capacity: Option<i64>,
    pub position_x: Patch<i64>,
    pub position_y: Patch<i64>,
}

impl FromJson for SlotPatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let code = f.patch_text("code", SLOT_CODE_MAX);
        let code = match code {
            Some(Some(c)) => slot_code(f, Some(c)).map(Some),
            other => other,
        };
        let capacity = fields::patch_required_int(f, "capacity", CAPACITY_MIN, CAPACITY_MAX);
        let position_x = fields::patch_int(f, "position_x", 0, POSITION_MAX);
        let position_y = fields::patch_int(f, "position_y", 0, POSITION_MAX);
        Some(Self {
            code: code?,
            capacity: capacity?,
            position_x: position_x?,
            position_y: position_y?,
        })
    }
}

/// Body of `PUT /t/{slug}/slots/{slot_key}/neighbours`: the complete set of adjacent slots
/// (same site), replacing the previous one; adjacency is symmetric.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "SlotNeighbours"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct Neighbours {
    /// Up to 50 slot keys of the same site; an empty list removes every neighbour.
    #[salvo(schema(max_items = 50))]
    pub neighbour_keys: Vec<Uuid>,
}

impl FromJson for Neighbours {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let keys = fields::key_list(f, "neighbour_keys", NEIGHBOURS_MAX);
        Some(Self {
            neighbour_keys: keys?,
        })
    }
}

/// Body of `PUT /t/{slug}/slots/{slot_key}/substrate-batch`: the batch now filling the slot,
/// or null when the slot is emptied.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "SlotSubstrateBatch"))]
// States `additionalProperties: false` (the body is read by `FromJson`, which refuses extras).
#[serde(deny_unknown_fields)]
pub struct SlotBatch {
    /// A substrate batch of this garden, or null.
    #[salvo(schema(
        required = true,
        nullable = true,
        value_type = Option<String>,
        format = Uuid,
        pattern = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    ))]
    pub batch_key: Option<Uuid>,
}

impl FromJson for SlotBatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        if !f.has("batch_key") {
            f.reject_field(
                "batch_key",
                "field required (null empties the slot)",
                "missing",
            );
            f.raw("batch_key");
            return None;
        }
        let key = fields::opt_key(f, "batch_key");
        Some(Self { batch_key: key? })
    }
}

/// Where a plant is to be placed, as the plants capability receives it from
/// [`super::service::placement_target`].
#[derive(Debug, Clone)]
pub struct PlacementTarget {
    /// The location (its `site_key` is the site).
    pub location: Location,
    /// The slot, when one was named.
    pub slot: Option<SlotTarget>,
}

#[derive(Debug, Clone)]
pub struct SlotTarget {
    pub key: Uuid,
    pub code: String,
    pub capacity: i32,
    /// Live plants standing in the slot now (before the placement).
    pub live_plants: i64,
    /// Adjacent slots (companion checks look at their live plants).
    pub neighbour_keys: Vec<Uuid>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_codes() {
        for (code, ok) in [
            ("BOX1_A1", true),
            ("TENT01_A1_B", true),
            ("A_1", true),
            ("BOX1", false),
            ("box1_a1", false),
            ("BOX1__A1", false),
            ("_A1", false),
            ("A1_", false),
            ("BOX-1_A1", false),
            ("ÄB_1", false),
        ] {
            assert_eq!(is_slot_code(code), ok, "{code}");
        }
        assert!(!is_slot_code(&format!("{}_1", "A".repeat(39))));
    }
}
