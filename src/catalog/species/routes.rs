//! REST face of `/species` and `/cultivars`.

use salvo::oapi::extract::PathParam;
use salvo::prelude::*;

use super::model::{CULTIVAR, CultivarKind, SPECIES, SpeciesKind};
use super::service::SpeciesSequence;
use crate::catalog::engine::routes::{ListQuery, Record, records};
use crate::catalog::engine::service;
use crate::error::{AppError, ErrorBody};
use crate::http::depot::DepotExt;
use crate::http::pagination::Page;

crate::catalog_routes!(species, SpeciesKind, "species", "species", "species");
crate::catalog_routes!(cultivars, CultivarKind, "cultivars", "species", "cultivars");

pub fn router() -> Router {
    species::router().push(
        Router::with_path("{key}/cultivars")
            .hoop(crate::http::caller::require_caller)
            .get(list_species_cultivars),
    )
}

pub fn cultivars_router() -> Router {
    cultivars::router()
}

/// The cultivars of a species.
#[endpoint(tags("species"), security(["bearer" = []]), operation_id = "list_species_cultivars",
    responses(
        (status_code = 200, description = "one page of cultivars", body = Page<Record<CultivarKind>>),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown species", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: a query parameter is out of range", body = ErrorBody),
    ))]
pub async fn list_species_cultivars(
    key: PathParam<String>,
    query: ListQuery<CultivarKind>,
    depot: &mut Depot,
) -> Result<Json<Page<Record<CultivarKind>>>, AppError> {
    let state = depot.app_state()?;
    let page = service::list_under(
        &state,
        (&SPECIES, &key),
        &CULTIVAR,
        "species_key",
        &query.params,
        query.page,
    )
    .await?;
    Ok(Json(records(page)))
}

/// Body of `PUT /species/{key}/phase-sequence`: `{"phase_sequence_key": "<uuid>" | null}`.
#[derive(Debug, Clone)]
pub struct Binding {
    /// The sequence to bind; null unbinds (the selection rules decide again).
    pub phase_sequence_key: Option<uuid::Uuid>,
}

impl salvo::oapi::ToSchema for Binding {
    fn to_schema(
        components: &mut salvo::oapi::Components,
    ) -> salvo::oapi::RefOr<salvo::oapi::schema::Schema> {
        use salvo::oapi::schema::{
            AdditionalProperties, BasicType, Object, SchemaFormat, SchemaType,
        };
        let name = "PhaseSequenceBinding";
        let key = Object::new()
            .schema_type(
                [BasicType::String, BasicType::Null]
                    .into_iter()
                    .collect::<SchemaType>(),
            )
            .format(SchemaFormat::KnownFormat(salvo::oapi::KnownFormat::Uuid))
            .description("the sequence to bind; null unbinds (the selection rules decide again)");
        let schema = Object::new()
            .schema_type(SchemaType::basic(BasicType::Object))
            .property("phase_sequence_key", key)
            .required("phase_sequence_key")
            .additional_properties(AdditionalProperties::FreeForm(false));
        components.schemas.insert(name.to_owned(), schema);
        salvo::oapi::RefOr::Ref(salvo::oapi::Ref::from_schema_name(name))
    }
}

impl Binding {
    /// The field is required and nullable; anything else is one detail.
    fn read(mut body: serde_json::Map<String, serde_json::Value>) -> Result<Self, AppError> {
        use crate::error::ErrorDetail;
        use serde_json::Value;
        let mut errors: Vec<ErrorDetail> = Vec::new();
        let key = match body.remove("phase_sequence_key") {
            None => {
                errors.push(ErrorDetail::new(
                    "body.phase_sequence_key",
                    "field required (null unbinds)",
                    "missing",
                ));
                None
            }
            Some(Value::Null) => Some(None),
            Some(Value::String(s)) if uuid::Uuid::parse_str(&s).is_ok() => {
                uuid::Uuid::parse_str(&s).ok().map(Some)
            }
            Some(_) => {
                errors.push(ErrorDetail::new(
                    "body.phase_sequence_key",
                    "must be a sequence key (UUID) or null",
                    "type_error",
                ));
                None
            }
        };
        let mut extra: Vec<&String> = body.keys().collect();
        extra.sort();
        errors.extend(
            extra
                .into_iter()
                .map(|k| ErrorDetail::new(format!("body.{k}"), "unknown field", "extra_forbidden")),
        );
        match key {
            Some(phase_sequence_key) if errors.is_empty() => Ok(Self { phase_sequence_key }),
            _ => Err(AppError::validation(errors)),
        }
    }
}

pub fn sequence_router() -> Router {
    Router::with_path("species/{key}/phase-sequence")
        .push(
            Router::new()
                .hoop(crate::http::caller::require_caller)
                .get(get_species_phase_sequence),
        )
        .push(
            Router::new()
                .hoop(crate::http::caller::require_platform_admin)
                .put(assign_species_phase_sequence),
        )
}

/// The phase sequence the species runs on: its bound sequence, or the one the selection rules
/// give (missing data never yields the annual harvest cycle), with the ordered phases.
#[endpoint(tags("species"), security(["bearer" = []]), operation_id = "get_species_phase_sequence",
    responses(
        (status_code = 200, description = "the sequence and where it comes from", body = SpeciesSequence),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown species (or the selected sequence is not seeded)", body = ErrorBody),
    ))]
pub async fn get_species_phase_sequence(
    key: PathParam<String>,
    depot: &mut Depot,
    res: &mut Response,
) -> Result<(), AppError> {
    let state = depot.app_state()?;
    let document = super::service::phase_sequence_document(&state, &key).await?;
    crate::http::json::render_rendered(res, document);
    Ok(())
}

/// Bind the species to a sequence (platform admin). This changes the schedule of every plant
/// of the species in every tenant.
#[endpoint(tags("species"), security(["bearer" = []]), operation_id = "assign_species_phase_sequence",
    request_body = Binding,
    responses(
        (status_code = 200, description = "the sequence now in force", body = SpeciesSequence),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
        (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
        (status_code = 404, description = "ENTITY_NOT_FOUND: unknown species or sequence", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR", body = ErrorBody),
    ))]
pub async fn assign_species_phase_sequence(
    key: PathParam<String>,
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<SpeciesSequence>, AppError> {
    let state = depot.app_state()?;
    let body =
        Binding::read(crate::http::json::read_object(req, state.config().max_body_bytes).await?)?;
    let seq = body.phase_sequence_key.map(|k| k.to_string());
    Ok(Json(
        super::service::assign_phase_sequence(&state, &key, seq.as_deref(), true)
            .await?
            .after,
    ))
}
