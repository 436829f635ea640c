//! The fertiliser record of a garden: a global catalogue record or one of the garden's own,
//! with `key` and `owner`.

use salvo::oapi::schema::{BasicType, Object, Schema, SchemaFormat, SchemaType};
use salvo::oapi::{Components, ComposeSchema, KnownFormat, Ref, RefOr, ToSchema};
use serde::Serialize;
use serde_json::Value;

use crate::catalog::engine::fields::{Shape, object_schema};
use crate::catalog::fertilizers::model::FERTILIZER;

pub use crate::garden::nutrient_plans::model::{Owner, TENANT_PREFIX};

pub const LIST_MAX_LIMIT: i64 = 200;

/// A fertiliser as a garden sees it (the catalogue fields plus `key`, `owner`).
#[derive(Debug, Clone, PartialEq)]
pub struct GardenFertilizer(pub Value);

impl GardenFertilizer {
    pub fn key(&self) -> &str {
        self.0
            .get("key")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    pub fn name(&self) -> &str {
        self.0
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    pub fn owner(&self) -> Owner {
        match self.0.get("owner").and_then(Value::as_str) {
            Some("garden") => Owner::Garden,
            _ => Owner::Global,
        }
    }
}

impl Serialize for GardenFertilizer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl ToSchema for GardenFertilizer {
    fn to_schema(components: &mut Components) -> RefOr<Schema> {
        let name = "GardenFertilizer".to_owned();
        if !components.schemas.contains_key(&name) {
            let text = |d: &str| {
                Object::new()
                    .schema_type(SchemaType::basic(BasicType::String))
                    .description(d.to_owned())
            };
            let date = Object::new()
                .schema_type(SchemaType::basic(BasicType::String))
                .format(SchemaFormat::KnownFormat(KnownFormat::DateTime));
            let owner = Object::new()
                .schema_type(SchemaType::basic(BasicType::String))
                .enum_values(["global", "garden"])
                .description("global (catalogue, read-only here) or garden (owned by this garden)");
            let schema = object_schema(FERTILIZER.fields, Shape::Record, false)
                .property(
                    "key",
                    text("a global fertiliser's UUID, or tenant:<uuid> of the garden's own"),
                )
                .required("key")
                .property("owner", owner)
                .required("owner")
                .property("created_at", date.clone())
                .property("updated_at", date);
            components.schemas.insert(name.clone(), schema);
        }
        RefOr::Ref(Ref::from_schema_name(name))
    }
}

impl ComposeSchema for GardenFertilizer {
    fn compose(components: &mut Components, _generics: Vec<RefOr<Schema>>) -> RefOr<Schema> {
        Self::to_schema(components)
    }
}

/// Fertiliser types (schema of the `fertilizer_type` filter).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FertilizerType {
    Base,
    Supplement,
    Booster,
    Biological,
    PhAdjuster,
    Organic,
    Silicate,
}

/// Product forms (schema of the `form` filter).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    Liquid,
    Powder,
    Granular,
}
