use salvo::oapi::ToSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::garden::fields;
use crate::rules::substrate_mix::{COMPONENTS_MAX, IRRIGATION, LEVELS, SubstrateProps, TYPES};
use crate::values::json::{FromJson, JsonFields, Patch};

pub const NAME_MAX: usize = 120;
pub const KEY_MAX: usize = 200;
pub const DESCRIPTION_MAX: usize = 2000;
/// Prefix of a tenant-owned substrate's key; a global (catalogue) substrate's key is its UUID.
pub const TENANT_PREFIX: &str = "tenant:";

/// Substrate types (schema of `type`).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubstrateType {
    Soil,
    Coco,
    ClayPebbles,
    Perlite,
    LivingSoil,
    Peat,
    RockwoolSlab,
    RockwoolPlug,
    Vermiculite,
    None,
    OrchidBark,
    PonMineral,
    Sphagnum,
    HydroSolution,
}

/// low, medium or high (schema).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Low,
    Medium,
    High,
}

/// Irrigation strategies (schema).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Irrigation {
    Infrequent,
    Moderate,
    Frequent,
    Continuous,
}

/// Where a substrate lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubstrateScope {
    /// The shared catalogue (every garden sees it, platform admins edit it).
    Global,
    /// Owned by this garden.
    Tenant,
}

/// A component of a mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct MixComponent {
    /// A global substrate's key or `tenant:<uuid>` of the garden's own, not a mix.
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub substrate_key: String,
    /// 0.01–1; the fractions of a mix sum to 1 (±0.01).
    #[salvo(schema(minimum = 0.01, maximum = 1))]
    pub fraction: f64,
}

/// A substrate as a garden sees it: a global one or one of its own, marked by `scope`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Substrate {
    /// The global substrate's UUID, or `tenant:<uuid>` for one the garden owns.
    pub key: String,
    pub scope: SubstrateScope,
    pub name: String,
    pub name_de: Option<String>,
    pub brand: Option<String>,
    pub is_mix: bool,
    #[serde(flatten)]
    pub props: SubstrateProps,
    /// The components of a mix (empty otherwise).
    pub mix_components: Vec<MixComponent>,
    pub description: Option<String>,
}

/// What a tenant substrate keeps in `properties` (jsonb) beside its columns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredProps {
    #[serde(flatten)]
    pub props: SubstrateProps,
    pub name_de: Option<String>,
    pub brand: Option<String>,
    #[serde(default)]
    pub mix_components: Vec<MixComponent>,
    pub description: Option<String>,
}

fn choice_of(list: &'static [&'static str]) -> Vec<(&'static str, &'static str)> {
    list.iter().map(|v| (*v, *v)).collect()
}

/// Body of `POST /t/{slug}/substrates/`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "SubstrateCreate"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct SubstrateCreateBody {
    /// Up to 120 characters, unique among the garden's substrates (case-insensitive).
    #[salvo(schema(
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: String,
    #[salvo(schema(
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name_de: Option<String>,
    #[salvo(schema(
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub brand: Option<String>,
    #[salvo(schema(value_type = SubstrateType))]
    pub r#type: String,
    /// Default 6.5.
    #[salvo(schema(minimum = 3, maximum = 9))]
    pub ph_base: Option<f64>,
    /// mS/cm; default 0.5.
    #[salvo(schema(minimum = 0, maximum = 10))]
    pub ec_base_ms: Option<f64>,
    /// Default 25.
    #[salvo(schema(minimum = 0, maximum = 100))]
    pub air_porosity_percent: Option<f64>,
    #[salvo(schema(value_type = Option<Level>))]
    pub water_retention: Option<String>,
    #[salvo(schema(value_type = Option<Level>))]
    pub buffer_capacity: Option<String>,
    #[salvo(schema(minimum = 0, maximum = 100))]
    pub water_holding_capacity_percent: Option<f64>,
    #[salvo(schema(minimum = 0, maximum = 100))]
    pub easily_available_water_percent: Option<f64>,
    #[salvo(schema(minimum = 0, maximum = 500))]
    pub cec_meq_per_100g: Option<f64>,
    #[salvo(schema(minimum = 0, maximum = 3000))]
    pub bulk_density_g_per_l: Option<f64>,
    /// Default false; null is refused.
    #[salvo(schema(nullable = false))]
    pub reusable: Option<bool>,
    /// 1–50; default 3 when reusable, 1 when not.
    #[salvo(schema(minimum = 1, maximum = 50))]
    pub max_reuse_cycles: Option<i32>,
    /// Default by type (domain rule).
    #[salvo(schema(value_type = Option<Irrigation>))]
    pub irrigation_strategy: Option<String>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewSubstrate {
    pub name: String,
    pub is_mix: bool,
    pub stored: StoredPropsEq,
}

/// `StoredProps` with equality for tests of body parsing.
#[derive(Debug, Clone)]
pub struct StoredPropsEq(pub StoredProps);

impl PartialEq for StoredPropsEq {
    fn eq(&self, other: &Self) -> bool {
        serde_json::to_value(&self.0).ok() == serde_json::to_value(&other.0).ok()
    }
}

fn opt_text(f: &mut JsonFields, name: &'static str) -> Option<Option<String>> {
    match f.raw(name) {
        None | Some(Value::Null) => Some(None),
        Some(v) => {
            let mut inner = JsonFields::new([(name.to_owned(), v)].into_iter().collect());
            let t = inner.text(name, NAME_MAX);
            if t.is_none() {
                f.reject_field(
                    name,
                    "must be a text of 1 to 120 characters without control characters",
                    "value_error",
                );
            }
            t.map(Some)
        }
    }
}

impl FromJson for NewSubstrate {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let types = choice_of(TYPES);
        let levels = choice_of(LEVELS);
        let irrigation = choice_of(IRRIGATION);
        let name = f.text("name", NAME_MAX);
        let name_de = opt_text(f, "name_de");
        let brand = opt_text(f, "brand");
        let substrate_type = f.choice("type", &types);
        let ph = fields::opt_number(f, "ph_base", 3.0, 9.0);
        let ec = fields::opt_number(f, "ec_base_ms", 0.0, 10.0);
        let por = fields::opt_number(f, "air_porosity_percent", 0.0, 100.0);
        let wr = fields::opt_choice(f, "water_retention", &levels);
        let buf = fields::opt_choice(f, "buffer_capacity", &levels);
        let whc = fields::opt_number(f, "water_holding_capacity_percent", 0.0, 100.0);
        let eaw = fields::opt_number(f, "easily_available_water_percent", 0.0, 100.0);
        let cec = fields::opt_number(f, "cec_meq_per_100g", 0.0, 500.0);
        let bd = fields::opt_number(f, "bulk_density_g_per_l", 0.0, 3000.0);
        let reusable = f.flag("reusable", false);
        let max_reuse = f.opt_int("max_reuse_cycles", 1, 50);
        let irr = fields::opt_choice(f, "irrigation_strategy", &irrigation);
        let description = f.opt_long_text("description", DESCRIPTION_MAX);
        let substrate_type = substrate_type?;
        let reusable = reusable?;
        let mut props = SubstrateProps::of_type(substrate_type);
        props.ph_base = ph?.unwrap_or(props.ph_base);
        props.ec_base_ms = ec?.unwrap_or(props.ec_base_ms);
        props.air_porosity_percent = por?.unwrap_or(props.air_porosity_percent);
        props.water_retention = wr?.map(str::to_owned);
        props.buffer_capacity = buf?.map(str::to_owned);
        props.water_holding_capacity_percent = whc?;
        props.easily_available_water_percent = eaw?;
        props.cec_meq_per_100g = cec?;
        props.bulk_density_g_per_l = bd?;
        props.reusable = reusable;
        props.max_reuse_cycles = match max_reuse? {
            Some(n) => i32::try_from(n).unwrap_or(1),
            None if reusable => props.max_reuse_cycles,
            None => 1,
        };
        if let Some(i) = irr? {
            props.irrigation_strategy = Some(i.to_owned());
        }
        Some(Self {
            name: name?,
            is_mix: false,
            stored: StoredPropsEq(StoredProps {
                props,
                name_de: name_de?,
                brand: brand?,
                mix_components: Vec::new(),
                description: description?,
            }),
        })
    }
}

/// Body of `POST /t/{slug}/substrate-mixes/preview`.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
#[salvo(schema(name = "SubstrateMixPreview"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct MixRequest {
    /// 2–10 components (global or own substrates, none of them a mix), fractions summing to 1
    /// (±0.01), each substrate once.
    #[salvo(schema(min_items = 2, max_items = 10))]
    pub components: Vec<MixComponent>,
}

/// Reads `components` (shared by preview and create).
fn components(f: &mut JsonFields) -> Option<Vec<MixComponent>> {
    let Some(v) = f.raw("components").filter(|v| !v.is_null()) else {
        f.reject_field("components", "field required", "missing");
        return None;
    };
    let Some(items) = v.as_array() else {
        f.reject_field(
            "components",
            "must be a list of {substrate_key, fraction}",
            "type_error",
        );
        return None;
    };
    if items.len() > COMPONENTS_MAX {
        f.reject_field(
            "components",
            format!("a mix has at most {COMPONENTS_MAX} components"),
            "value_error",
        );
        return None;
    }
    let mut out = Vec::new();
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let key = item
            .get("substrate_key")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|k| {
                !k.is_empty() && k.chars().count() <= KEY_MAX && !k.chars().any(char::is_control)
            });
        let fraction = item.get("fraction").and_then(Value::as_f64);
        let extra = item
            .as_object()
            .map(|o| o.keys().any(|k| k != "substrate_key" && k != "fraction"))
            .unwrap_or(true);
        if extra {
            f.reject_field(
                &format!("components[{i}]"),
                "must be an object with substrate_key and fraction only",
                "value_error",
            );
            ok = false;
            continue;
        }
        if key.is_none() {
            f.reject_field(
                &format!("components[{i}].substrate_key"),
                "must be a substrate key",
                "value_error",
            );
            ok = false;
        }
        if fraction.is_none() {
            f.reject_field(
                &format!("components[{i}].fraction"),
                "must be a number",
                "type_error",
            );
            ok = false;
        }
        if let (Some(k), Some(fr)) = (key, fraction) {
            out.push(MixComponent {
                substrate_key: k.to_owned(),
                fraction: fr,
            });
        }
    }
    ok.then_some(out)
}

impl FromJson for MixRequest {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        Some(Self {
            components: components(f)?,
        })
    }
}

/// Body of `POST /t/{slug}/substrate-mixes`: a mix stored as the garden's own substrate.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
#[salvo(schema(name = "SubstrateMixCreate"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct NewMix {
    /// Up to 120 characters, unique among the garden's substrates (case-insensitive).
    #[salvo(schema(
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: String,
    #[salvo(schema(
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name_de: Option<String>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub description: Option<String>,
    #[salvo(schema(min_items = 2, max_items = 10))]
    pub components: Vec<MixComponent>,
}

impl FromJson for NewMix {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let name = f.text("name", NAME_MAX);
        let name_de = opt_text(f, "name_de");
        let description = f.opt_long_text("description", DESCRIPTION_MAX);
        let components = components(f);
        Some(Self {
            name: name?,
            name_de: name_de?,
            description: description?,
            components: components?,
        })
    }
}

/// The result of a mix preview: the computed properties and the components.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MixPreview {
    #[serde(flatten)]
    pub props: SubstrateProps,
    pub components: Vec<MixComponent>,
}

// ---------------------------------------------------------------------------------------------
// Batches

/// One pH or EC reading of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Reading {
    pub value: f64,
    #[serde(with = "time::serde::rfc3339")]
    pub measured_at: OffsetDateTime,
}

/// A batch of substrate in use in the garden.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SubstrateBatch {
    pub key: Uuid,
    pub substrate_key: String,
    /// The substrate's display name (null when it no longer exists).
    pub substrate_name: Option<String>,
    /// Reuse facts of the substrate as they were when the batch was made.
    pub substrate_type: String,
    pub reusable: bool,
    pub max_reuse_cycles: i32,
    pub ec_base_ms: f64,
    pub label: String,
    pub volume_liters: Option<f64>,
    /// YYYY-MM-DD.
    #[serde(with = "crate::values::dates::iso_date::option")]
    #[salvo(schema(value_type = Option<String>, format = Date))]
    pub mixed_on: Option<Date>,
    /// Completed growing cycles.
    pub cycles_used: i32,
    pub ph_current: Option<f64>,
    pub ec_current_ms: Option<f64>,
    /// Live plants growing in the batch.
    pub live_plants: i64,
    /// pH readings, oldest first (only on the single-batch read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ph_history: Option<Vec<Reading>>,
    /// EC readings in mS/cm, oldest first (only on the single-batch read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ec_history: Option<Vec<Reading>>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Body of `POST /t/{slug}/substrate-batches/`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "SubstrateBatchCreate"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct BatchCreateBody {
    /// A global substrate's key or `tenant:<uuid>` of the garden's own.
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub substrate_key: String,
    /// Up to 120 characters, unique per garden (case-insensitive).
    #[salvo(schema(
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub label: String,
    #[salvo(schema(minimum = 0.01, maximum = 100000))]
    pub volume_liters: Option<f64>,
    /// YYYY-MM-DD, not in the future.
    #[salvo(schema(value_type = Option<String>, format = Date))]
    pub mixed_on: Option<String>,
    /// Completed cycles so far (an existing batch); default 0.
    #[salvo(schema(minimum = 0, maximum = 100))]
    pub cycles_used: Option<i32>,
    #[salvo(schema(minimum = 0, maximum = 14))]
    pub ph_current: Option<f64>,
    #[salvo(schema(minimum = 0, maximum = 20))]
    pub ec_current_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewBatch {
    pub substrate_key: String,
    pub label: String,
    pub volume_liters: Option<f64>,
    pub mixed_on: Option<Date>,
    pub cycles_used: i64,
    pub ph_current: Option<f64>,
    pub ec_current_ms: Option<f64>,
}

pub const VOLUME_MAX: f64 = 100_000.0;

fn not_future(
    f: &mut JsonFields,
    name: &'static str,
    d: Option<Option<Date>>,
) -> Option<Option<Date>> {
    let d = d?;
    if let Some(date) = d
        && date > OffsetDateTime::now_utc().date()
    {
        f.reject_field(name, "must not be in the future", "value_error");
        return None;
    }
    Some(d)
}

impl FromJson for NewBatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let substrate_key = f.text("substrate_key", KEY_MAX);
        let label = f.text("label", NAME_MAX);
        let volume = fields::opt_number(f, "volume_liters", 0.01, VOLUME_MAX);
        let mixed_on = fields::opt_date(f, "mixed_on");
        let mixed_on = not_future(f, "mixed_on", mixed_on);
        let cycles = f.opt_int("cycles_used", 0, 100);
        let ph = fields::opt_number(f, "ph_current", 0.0, 14.0);
        let ec = fields::opt_number(f, "ec_current_ms", 0.0, 20.0);
        Some(Self {
            substrate_key: substrate_key?,
            label: label?,
            volume_liters: volume?,
            mixed_on: mixed_on?,
            cycles_used: cycles?.unwrap_or(0),
            ph_current: ph?,
            ec_current_ms: ec?,
        })
    }
}

/// Body of `PATCH /t/{slug}/substrate-batches/{batch_key}`: omitted fields stay; a pH or EC
/// value is a new reading (it becomes the current value and is appended to the history).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[salvo(schema(name = "SubstrateBatchPatch"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
pub struct BatchPatchBody {
    /// Null is refused.
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub label: Option<String>,
    /// Null clears.
    #[salvo(schema(minimum = 0.01, maximum = 100000))]
    pub volume_liters: Option<f64>,
    /// YYYY-MM-DD, not in the future; null clears.
    #[salvo(schema(value_type = Option<String>, format = Date))]
    pub mixed_on: Option<String>,
    /// A new pH reading; null is refused (a reading cannot be removed).
    #[salvo(schema(nullable = false, minimum = 0, maximum = 14))]
    pub ph_current: Option<f64>,
    /// A new EC reading in mS/cm; null is refused.
    #[salvo(schema(nullable = false, minimum = 0, maximum = 20))]
    pub ec_current_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BatchPatch {
    pub label: Option<String>,
    pub volume_liters: Patch<f64>,
    pub mixed_on: Patch<Date>,
    pub ph: Option<f64>,
    pub ec: Option<f64>,
}

fn reading(f: &mut JsonFields, name: &'static str, max: f64) -> Option<Option<f64>> {
    match fields::patch_number(f, name, 0.0, max)? {
        Patch::Keep => Some(None),
        Patch::Set(v) => Some(Some(v)),
        Patch::Clear => {
            f.reject_field(name, "a reading cannot be removed; omit it", "type_error");
            None
        }
    }
}

impl FromJson for BatchPatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let label = f.patch_text("label", NAME_MAX);
        let volume = fields::patch_number(f, "volume_liters", 0.01, VOLUME_MAX);
        let mixed_on = match f.raw("mixed_on") {
            None => Some(Patch::Keep),
            Some(Value::Null) => Some(Patch::Clear),
            Some(v) => {
                let mut inner = JsonFields::new([("mixed_on".to_owned(), v)].into_iter().collect());
                let d = fields::opt_date(&mut inner, "mixed_on");
                match d {
                    Some(Some(date)) if date > OffsetDateTime::now_utc().date() => {
                        f.reject_field("mixed_on", "must not be in the future", "value_error");
                        None
                    }
                    Some(Some(date)) => Some(Patch::Set(date)),
                    _ => {
                        f.reject_field("mixed_on", "must be a date YYYY-MM-DD", "value_error");
                        None
                    }
                }
            }
        };
        let ph = reading(f, "ph_current", 14.0);
        let ec = reading(f, "ec_current_ms", 20.0);
        Some(Self {
            label: label?,
            volume_liters: volume?,
            mixed_on: mixed_on?,
            ph: ph?,
            ec: ec?,
        })
    }
}

/// Body of `PATCH /t/{slug}/substrates/{substrate_key}` (the garden's own substrates only):
/// omitted fields stay, null clears an optional text. A mix's properties follow its components,
/// so on a mix only the texts change. Batches keep the reuse facts they were made with.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "SubstratePatch"))]
#[serde(deny_unknown_fields)] // states `additionalProperties: false`: the handler refuses extras
#[allow(dead_code)] // a schema only: the handler reads the body as `SubstratePatch`
pub struct SubstratePatchBody {
    /// Up to 120 characters, unique among the garden's substrates (case-insensitive).
    #[salvo(schema(
        nullable = false,
        min_length = 1,
        max_length = 120,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub name: Option<String>,
    #[salvo(schema(max_length = 120, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"))]
    pub name_de: Option<String>,
    #[salvo(schema(max_length = 120, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"))]
    pub brand: Option<String>,
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$"
    ))]
    pub description: Option<String>,
    /// Not on a mix.
    #[salvo(schema(nullable = false, minimum = 3, maximum = 9))]
    pub ph_base: Option<f64>,
    /// mS/cm; not on a mix.
    #[salvo(schema(nullable = false, minimum = 0, maximum = 10))]
    pub ec_base_ms: Option<f64>,
    /// Not on a mix.
    #[salvo(schema(nullable = false))]
    pub reusable: Option<bool>,
    /// 1–50; not on a mix.
    #[salvo(schema(nullable = false, minimum = 1, maximum = 50))]
    pub max_reuse_cycles: Option<i32>,
    /// Not on a mix.
    #[salvo(schema(value_type = Irrigation, required = false))]
    pub irrigation_strategy: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SubstratePatch {
    pub name: Option<String>,
    pub name_de: Patch<String>,
    pub brand: Patch<String>,
    pub description: Patch<String>,
    pub ph_base: Option<f64>,
    pub ec_base_ms: Option<f64>,
    pub reusable: Option<bool>,
    pub max_reuse_cycles: Option<i32>,
    pub irrigation_strategy: Option<&'static str>,
}

impl SubstratePatch {
    /// The property fields this patch sets (refused on a mix).
    pub fn property_fields(&self) -> Vec<&'static str> {
        [
            ("ph_base", self.ph_base.is_some()),
            ("ec_base_ms", self.ec_base_ms.is_some()),
            ("reusable", self.reusable.is_some()),
            ("max_reuse_cycles", self.max_reuse_cycles.is_some()),
            ("irrigation_strategy", self.irrigation_strategy.is_some()),
        ]
        .into_iter()
        .filter_map(|(n, set)| set.then_some(n))
        .collect()
    }
}

/// A patch of a required number: absent keeps, null is refused.
fn patch_required_number(
    f: &mut JsonFields,
    name: &'static str,
    min: f64,
    max: f64,
) -> Option<Option<f64>> {
    match fields::patch_number(f, name, min, max)? {
        Patch::Keep => Some(None),
        Patch::Set(v) => Some(Some(v)),
        Patch::Clear => {
            f.reject_field(
                name,
                "cannot be null; omit it to keep the value",
                "type_error",
            );
            None
        }
    }
}

impl FromJson for SubstratePatch {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let irrigation = choice_of(IRRIGATION);
        let name = f.patch_text("name", NAME_MAX);
        let name_de = f.patch_clearable("name_de", NAME_MAX);
        let brand = f.patch_clearable("brand", NAME_MAX);
        let description = fields::patch_long_text(f, "description", DESCRIPTION_MAX);
        let ph = patch_required_number(f, "ph_base", 3.0, 9.0);
        let ec = patch_required_number(f, "ec_base_ms", 0.0, 10.0);
        let reusable = match f.raw("reusable") {
            None => Some(None),
            Some(Value::Bool(b)) => Some(Some(b)),
            Some(_) => {
                f.reject_field("reusable", "must be true or false", "type_error");
                None
            }
        };
        let max_reuse = fields::patch_required_int(f, "max_reuse_cycles", 1, 50);
        let irr = match fields::patch_choice(f, "irrigation_strategy", &irrigation)? {
            Patch::Keep => Some(None),
            Patch::Set(v) => Some(Some(v)),
            Patch::Clear => {
                f.reject_field(
                    "irrigation_strategy",
                    "cannot be null; omit it to keep the value",
                    "type_error",
                );
                None
            }
        };
        Some(Self {
            name: name?,
            name_de: name_de?,
            brand: brand?,
            description: description?,
            ph_base: ph?,
            ec_base_ms: ec?,
            reusable: reusable?,
            max_reuse_cycles: max_reuse?.and_then(|n| i32::try_from(n).ok()),
            irrigation_strategy: irr?,
        })
    }
}
