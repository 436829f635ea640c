//! The OpenAPI document at `/api/v1/openapi.json`, Swagger UI at `/api/v1/docs`, ReDoc at
//! `/api/v1/redoc` (src/app/redoc.rs). Both pages load their scripts from this service only
//! (Swagger UI's assets come with salvo, ReDoc's bundle is vendored), so they work offline and
//! behind a proxy.

use salvo::oapi::naming::{self, FlexNamer};
use salvo::oapi::schema::{BasicType, Object};
use salvo::oapi::security::{Http, HttpAuthScheme};
use salvo::oapi::swagger_ui::SwaggerUi;
use salvo::oapi::{self, OpenApi, RefOr, SecurityScheme, ToSchema};
use salvo::prelude::*;
use serde_json::{Value, json};

use crate::auth::Role;
use crate::config::ServiceMode;
use crate::error::ErrorBody;
use crate::error::RateLimitBody;
use crate::http::health::VERSION;
use crate::http::roles::{self, MIN_ROLE_EXTENSION};

pub const OPENAPI_PATH: &str = "/api/v1/openapi.json";

/// The document describes the API as this deployment serves it: in light mode nothing asks
/// for a credential, so neither security requirements nor 401 answers are listed.
pub fn document(api: &Router, mode: ServiceMode) -> OpenApi {
    // `Page<Site>` becomes `PageOfSite`: component names must be plain identifiers.
    naming::set_namer(
        FlexNamer::new()
            .short_mode(true)
            .generic_delimiter("Of", ""),
    );
    let mut doc = OpenApi::new("Kultiva API", VERSION).merge_router(api);
    document_min_roles(&mut doc);
    document_needed_fields(&mut doc);
    document_non_empty_lists(&mut doc);
    document_must_be_true(&mut doc);
    document_measurements(&mut doc);
    document_text_items(&mut doc);
    document_mcp(&mut doc);
    document_optional_bodies(&mut doc);
    document_links(&mut doc);
    match mode {
        ServiceMode::Full => {
            let mut doc = doc.add_security_scheme(
                "bearer",
                SecurityScheme::Http(
                    Http::new(HttpAuthScheme::Bearer).bearer_format("JWT or API key"),
                ),
            );
            document_rate_limits(&mut doc);
            doc
        }
        ServiceMode::Light => {
            for item in doc.paths.values_mut() {
                for operation in item.operations.values_mut() {
                    operation.securities = None;
                    operation.responses.remove("401");
                }
            }
            doc
        }
    }
}

/// The role an operation of the tenant tree needs: the method's floor (enforced by the hoop
/// `roles::role_floor`), raised by a `Requires<…>` argument.
fn min_role(path: &str, method: &oapi::PathItemType, operation: &oapi::Operation) -> Role {
    use oapi::PathItemType as T;
    let method = match method {
        T::Get => salvo::http::Method::GET,
        T::Head => salvo::http::Method::HEAD,
        T::Options => salvo::http::Method::OPTIONS,
        T::Post => salvo::http::Method::POST,
        T::Put => salvo::http::Method::PUT,
        T::Delete => salvo::http::Method::DELETE,
        T::Patch => salvo::http::Method::PATCH,
        T::Trace => salvo::http::Method::TRACE,
        T::Query => salvo::http::Method::QUERY,
    };
    let floor = roles::floor(&method, path);
    roles::declared(operation).map_or(floor, |declared| declared.max(floor))
}

/// Every operation under `/api/v1/t/{slug}/` states its minimum role as `x-min-role`, and a
/// 403 answer when that is above `viewer`.
fn document_min_roles(doc: &mut OpenApi) {
    let error = <ErrorBody as ToSchema>::to_schema(&mut doc.components);
    for (path, item) in doc.paths.iter_mut() {
        if !path.starts_with("/api/v1/t/") {
            continue;
        }
        for (method, operation) in item.operations.iter_mut() {
            let role = min_role(path, method, operation);
            operation
                .extensions
                .insert(MIN_ROLE_EXTENSION.to_owned(), role.as_str().into());
            if role > Role::Viewer && operation.responses.get("403").is_none() {
                operation.responses.insert(
                    "403",
                    oapi::Response::new(format!("FORBIDDEN: {} role needed", role.as_str()))
                        .add_content("application/json", oapi::Content::new(error.clone())),
                );
            }
        }
    }
}

/// `field` must be sent, and not as null.
fn given(fields: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|f| ((*f).to_owned(), json!({ "not": { "type": "null" } })))
        .collect();
    json!({ "required": fields, "properties": properties })
}

/// Each field is left out or null (the handlers read null as absent).
fn absent(fields: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|f| ((*f).to_owned(), json!({ "type": "null" })))
        .collect();
    json!({ "properties": properties })
}

/// All the given conditions at once.
fn both(parts: &[Value]) -> Value {
    json!({ "allOf": parts })
}

/// Rules between fields of a body that the handlers enforce (422 naming the field) and the
/// derive cannot state: "one of these two", "not both", "this needs that". Each entry is a
/// schema and the JSON Schema conditions its objects must meet (several are joined by
/// `allOf`).
fn body_rules() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        // A non-null location_key or slot_key; a batch or a substrate.
        (
            "PlantLocation",
            vec![json!({ "anyOf": [given(&["location_key"]), given(&["slot_key"])] })],
        ),
        (
            "PlantSubstrate",
            vec![json!({ "anyOf": [given(&["substrate_batch_key"]), given(&["substrate_key"])] })],
        ),
        // Exactly one of plant_key and location_key.
        (
            "InspectionCreate",
            vec![json!({ "oneOf": [given(&["plant_key"]), given(&["location_key"])] })],
        ),
        // Exactly one of plant_key and run_key.
        (
            "NutrientPlanAssign",
            vec![json!({ "oneOf": [given(&["plant_key"]), given(&["run_key"])] })],
        ),
        // plant_keys, location_key or both; dose and dose_unit go together.
        (
            "TreatmentApplicationCreate",
            vec![
                json!({ "anyOf": [given(&["plant_keys"]), given(&["location_key"])] }),
                json!({ "anyOf": [absent(&["dose", "dose_unit"]), given(&["dose", "dose_unit"])] }),
            ],
        ),
        // Plants or a run (an empty list names no plant); a runoff EC needs the fed EC.
        (
            "WateringEventCreate",
            vec![
                json!({ "anyOf": [
                    both(&[given(&["plant_keys"]), json!({ "properties": { "plant_keys": { "minItems": 1 } } })]),
                    given(&["run_key"]),
                ] }),
                json!({ "anyOf": [
                    absent(&["runoff_ec_ms"]),
                    given(&["ec_after_ms"]),
                    given(&["ec_before_ms"]),
                ] }),
            ],
        ),
        // About a plant or a run, not both.
        (
            "DiaryEntryCreate",
            vec![json!({ "anyOf": [absent(&["plant_key"]), absent(&["run_key"])] })],
        ),
        // A substrate type or a substrate record, not both.
        (
            "MixingProtocolRequest",
            vec![json!({ "anyOf": [absent(&["substrate_type"]), absent(&["substrate_key"])] })],
        ),
        // The three scores together or none; a grade only without scores.
        (
            "HarvestBatchCreate",
            vec![json!({ "anyOf": [
                absent(&["appearance_score", "aroma_score", "color_score"]),
                both(&[
                    given(&["appearance_score", "aroma_score", "color_score"]),
                    absent(&["quality_grade"]),
                ]),
            ] })],
        ),
        // Both pH values or neither; both volumes or neither.
        (
            "RunoffRequest",
            vec![
                json!({ "anyOf": [absent(&["input_ph", "runoff_ph"]), given(&["input_ph", "runoff_ph"])] }),
                json!({ "anyOf": [
                    absent(&["input_volume_liters", "runoff_volume_liters"]),
                    given(&["input_volume_liters", "runoff_volume_liters"]),
                ] }),
            ],
        ),
        // every_days with (and only with) every_n_days; phase with (and only with)
        // phase_entry, which has no end date.
        (
            "TaskRecurrence",
            vec![json!({ "anyOf": [
                both(&[
                    json!({ "properties": { "kind": { "enum": ["daily", "weekly"] } } }),
                    absent(&["every_days", "phase"]),
                ]),
                both(&[
                    json!({ "properties": { "kind": { "const": "every_n_days" } } }),
                    given(&["every_days"]),
                    absent(&["phase"]),
                ]),
                both(&[
                    json!({ "properties": { "kind": { "const": "phase_entry" } } }),
                    given(&["phase"]),
                    absent(&["every_days", "end_on"]),
                ]),
            ] })],
        ),
    ]
}

/// The component schema `name` when it is an object schema.
fn object_mut<'a>(doc: &'a mut OpenApi, name: &str) -> Option<&'a mut Object> {
    match doc.components.schemas.get_mut(name) {
        Some(RefOr::Type(oapi::Schema::Object(object))) => Some(object),
        _ => None,
    }
}

/// Property `field` of the component object schema `name`.
fn property_mut<'a>(
    doc: &'a mut OpenApi,
    name: &str,
    field: &str,
) -> Option<&'a mut RefOr<oapi::Schema>> {
    object_mut(doc, name)?.properties.get_mut(field)
}

fn document_needed_fields(doc: &mut OpenApi) {
    for (schema, mut rules) in body_rules() {
        let Some(object) = object_mut(doc, schema) else {
            continue;
        };
        if rules.len() == 1 {
            if let Some(Value::Object(rule)) = rules.pop() {
                object.extensions.extend(rule);
            }
        } else {
            object
                .extensions
                .insert("allOf".to_owned(), Value::Array(rules));
        }
    }
}

/// Lists the server refuses empty (422): a plan has at least one phase entry, a phase
/// sequence at least one entry (checked on the merged record, so a PATCH sending `[]` is
/// refused too).
const NON_EMPTY_LISTS: &[(&str, &str)] = &[
    ("NutrientPlanCreate", "phases"),
    ("PhaseSequenceCreate", "entries"),
    ("PhaseSequencePatch", "entries"),
];

fn document_non_empty_lists(doc: &mut OpenApi) {
    for (schema, field) in NON_EMPTY_LISTS {
        if let Some(RefOr::Type(oapi::Schema::Array(list))) = property_mut(doc, schema, field) {
            list.min_items = Some(1);
        }
    }
}

/// Booleans the server refuses unless `true` (422): consent to an analysis.
const MUST_BE_TRUE: &[(&str, &str)] = &[("DiaryAnalysisRequest", "consent")];

fn document_must_be_true(doc: &mut OpenApi) {
    for (schema, field) in MUST_BE_TRUE {
        if let Some(RefOr::Type(oapi::Schema::Object(flag))) = property_mut(doc, schema, field) {
            flag.extensions.insert("const".to_owned(), true.into());
        }
    }
}

/// Diary measurements as `measurements()` in `garden::diary::model` reads them: at most 20,
/// names `^[a-z][a-z0-9_]{0,39}$`, the recognised ones numbers within their bounds
/// (`leaf_count` whole), any other a number, a boolean or a line of 1 to 200 characters.
fn document_measurements(doc: &mut OpenApi) {
    use crate::garden::diary::model::{
        MEASUREMENT_KEYS, MEASUREMENT_NAME_PATTERN, MEASUREMENT_TEXT_MAX, MEASUREMENTS_MAX,
    };
    if let Some(RefOr::Type(oapi::Schema::OneOf(value))) =
        doc.components.schemas.get_mut("DiaryMeasurementValue")
    {
        for item in value.items.iter_mut() {
            if let RefOr::Type(oapi::Schema::Object(text)) = item
                && text.schema_type == oapi::schema::SchemaType::basic(BasicType::String)
            {
                text.min_length = Some(1);
                text.max_length = Some(MEASUREMENT_TEXT_MAX);
                text.pattern = Some(crate::catalog::engine::fields::LINE_PATTERN.to_owned());
            }
        }
    }
    for schema in ["DiaryEntryCreate", "DiaryEntryUpdate"] {
        let Some(RefOr::Type(oapi::Schema::Object(map))) =
            property_mut(doc, schema, "measurements")
        else {
            continue;
        };
        map.max_properties = Some(MEASUREMENTS_MAX);
        map.property_names = Some(Box::new(
            Object::with_type(BasicType::String)
                .pattern(MEASUREMENT_NAME_PATTERN)
                .into(),
        ));
        for (key, min, max) in MEASUREMENT_KEYS {
            let kind = if *key == "leaf_count" {
                BasicType::Integer
            } else {
                BasicType::Number
            };
            map.properties.insert(
                (*key).to_owned(),
                Object::with_type(kind).minimum(*min).maximum(*max).into(),
            );
        }
    }
}

/// Lists of short texts in request bodies (schema, field, most characters per item): each item
/// is a line that is not blank and holds no control characters, as the handlers check; the
/// derive states only the list, so the items are stated here.
const TEXT_ITEMS: &[(&str, &str, usize)] = &[
    ("InspectionCreate", "symptoms_observed", 500),
    ("InspectionCreate", "detected_pest_keys", 100),
    ("InspectionCreate", "detected_disease_keys", 100),
    ("InspectionCreate", "photo_refs", 200),
    ("HarvestBatchCreate", "defects", 60),
    ("DiaryEntryCreate", "tags", 50),
    ("DiaryEntryUpdate", "tags", 50),
];

fn document_text_items(doc: &mut OpenApi) {
    for (schema, field, max) in TEXT_ITEMS {
        let Some(RefOr::Type(oapi::Schema::Object(object))) =
            doc.components.schemas.get_mut(*schema)
        else {
            continue;
        };
        let Some(RefOr::Type(oapi::Schema::Array(list))) = object.properties.get_mut(*field) else {
            continue;
        };
        list.items = Object::new()
            .schema_type(oapi::schema::SchemaType::basic(BasicType::String))
            .min_length(1)
            .max_length(*max)
            .pattern(crate::catalog::engine::fields::LINE_PATTERN)
            .into();
    }
}

/// Operations that take a body but do not need one (a clone without a body keeps the source's
/// name with " (copy)"): the derive marks every declared body required.
const OPTIONAL_BODIES: &[&str] = &["clone_nutrient_plan"];

fn document_optional_bodies(doc: &mut OpenApi) {
    for item in doc.paths.values_mut() {
        for operation in item.operations.values_mut() {
            let optional = operation
                .operation_id
                .as_deref()
                .is_some_and(|id| OPTIONAL_BODIES.contains(&id));
            if let (true, Some(body)) = (optional, operation.request_body.as_mut()) {
                body.required = Some(oapi::Required::False);
            }
        }
    }
}

/// Links beyond the garden's regular shape (see [`document_links`]): a mix is read as a
/// substrate, and adding a member creates an invitation the invitee accepts or declines and
/// an admin withdraws.
const EXTRA_LINKS: &[(&str, &str, &str)] = &[
    ("create_substrate_mix", "get_substrate", "substrate_key"),
    ("add_member", "withdraw_invitation", "invitation_key"),
    ("add_member", "accept_my_invitation", "invitation_key"),
    ("add_member", "decline_my_invitation", "invitation_key"),
];

/// OpenAPI links from each create operation to what can be done with what it created, so
/// schemathesis' stateful phase walks create → get → update → sub-operations → delete. In the
/// garden tree the shape is regular: `POST /t/{slug}/X` answers 201 with `key`, and every
/// operation under `/t/{slug}/X/{param}` takes that key; the other path parameters come from
/// the create request.
fn document_links(doc: &mut OpenApi) {
    // (source path, source method, link name, link) collected first: the paths are read and
    // written in one map.
    let mut links: Vec<(String, oapi::PathItemType, String, serde_json::Value)> = Vec::new();
    let operation_path = |wanted: &str| {
        doc.paths.iter().find_map(|(path, item)| {
            item.operations
                .values()
                .any(|op| op.operation_id.as_deref() == Some(wanted))
                .then(|| path.clone())
        })
    };
    let link = |target_path: &str, target_id: &str, key_param: &str, source_path: &str| {
        let mut parameters = serde_json::Map::new();
        for segment in target_path.split('/') {
            let Some(name) = segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
                continue;
            };
            let value = if name == key_param {
                "$response.body#/key".to_owned()
            } else if source_path.contains(segment) {
                format!("$request.path.{name}")
            } else {
                continue;
            };
            parameters.insert(name.to_owned(), value.into());
        }
        serde_json::json!({ "operationId": target_id, "parameters": parameters })
    };
    for (source_path, item) in doc.paths.iter() {
        if !source_path.starts_with("/api/v1/t/") {
            continue;
        }
        let Some(create) = item.operations.get(&oapi::PathItemType::Post) else {
            continue;
        };
        if create.responses.get("201").is_none() {
            continue;
        }
        let prefix = format!("{source_path}/{{");
        for (target_path, target) in doc.paths.iter() {
            let Some(rest) = target_path.strip_prefix(&prefix) else {
                continue;
            };
            let Some(key_param) = rest.split('}').next() else {
                continue;
            };
            for op in target.operations.values() {
                let Some(id) = op.operation_id.as_deref() else {
                    continue;
                };
                links.push((
                    source_path.clone(),
                    oapi::PathItemType::Post,
                    id.to_owned(),
                    link(target_path, id, key_param, source_path),
                ));
            }
        }
    }
    for (source_id, target_id, key_param) in EXTRA_LINKS {
        let (Some(source_path), Some(target_path)) =
            (operation_path(source_id), operation_path(target_id))
        else {
            continue;
        };
        links.push((
            source_path.clone(),
            oapi::PathItemType::Post,
            (*target_id).to_owned(),
            link(&target_path, target_id, key_param, &source_path),
        ));
    }
    for (path, method, name, link) in links {
        let Some(operation) = doc
            .paths
            .get_mut(&path)
            .and_then(|item| item.operations.get_mut(&method))
        else {
            continue;
        };
        for (code, response) in operation.responses.iter_mut() {
            if !code.starts_with('2') {
                continue;
            }
            // Written as an extension: salvo-oapi 1.1 serializes `oapi::Link` with snake_case
            // keys (`operation_id`), which no client reads. `Response::links` stays empty, so
            // the flattened key is the only `links`.
            if let RefOr::Type(response) = response {
                let entry = response
                    .extensions
                    .entry("links".to_owned())
                    .or_insert_with(|| serde_json::json!({}));
                if let Some(map) = entry.as_object_mut() {
                    map.insert(name.clone(), link.clone());
                }
            }
        }
    }
}

/// Whether the general rate limit covers a path: everything under `/api/v1` except health
/// and mode (the same split as `api_router`).
fn rate_limited(path: &str) -> bool {
    path.starts_with("/api/v1/") && !path.starts_with("/api/v1/health/") && path != "/api/v1/mode"
}

/// Full mode: every limited operation may answer 429 with `{error}` and `Retry-After`. Login
/// and register declare their per-IP limit themselves; the general limit is added to that.
fn document_rate_limits(doc: &mut OpenApi) {
    let body = <RateLimitBody as ToSchema>::to_schema(&mut doc.components);
    let seconds = Object::with_type(BasicType::Integer).minimum(1);
    for (path, item) in doc.paths.iter_mut() {
        if !rate_limited(path) {
            continue;
        }
        for operation in item.operations.values_mut() {
            let general = "RATE_LIMIT_GENERAL_PER_MINUTE per caller (account, or client IP \
                           when anonymous) exceeded: `{error}` names the limit, Retry-After \
                           says when to retry";
            let description = match operation.responses.get("429") {
                Some(RefOr::Type(own)) => format!("{}; or {general}", own.description),
                _ => general.to_owned(),
            };
            operation.responses.insert(
                "429",
                oapi::Response::new(description)
                    .add_header(
                        "Retry-After",
                        oapi::Header::new(seconds.clone())
                            .description("seconds until a request is allowed again")
                            .required(true),
                    )
                    .add_content("application/json", oapi::Content::new(body.clone())),
            );
        }
    }
}

pub fn router(api: &Router, mode: ServiceMode, mcp_enabled: bool) -> Router {
    let mut doc = document(api, mode);
    if !mcp_enabled {
        // A disabled tool server answers 404 on every /mcp path, before any credential check:
        // it is not part of this service's interface, so the document leaves it out.
        doc.paths.retain(|path, _| !path.starts_with("/api/v1/mcp"));
    }
    Router::new()
        .push(doc.into_router(OPENAPI_PATH))
        .push(SwaggerUi::new(OPENAPI_PATH).into_router("/api/v1/docs"))
        .push(super::redoc::router(OPENAPI_PATH))
}

/// The tool server's transport as `mcp::transport` reads it: the JSON-RPC endpoint (and its
/// alias) takes a JSON-RPC message or a batch, `Mcp-Session-Id` on every message but
/// `initialize` (missing: 400, unknown: 404) and an optional `MCP-Protocol-Version` (an
/// unknown revision is 400); `DELETE /mcp` needs the session header; a tool call on the REST
/// face takes a JSON object of arguments. The derive states none of these bodies or headers:
/// the handlers read the request themselves.
fn document_mcp(doc: &mut OpenApi) {
    use crate::mcp::transport::SUPPORTED;
    use oapi::schema::{Array, OneOf, SchemaType};
    use oapi::{Parameter, ParameterIn, RequestBody, Required};

    let one_of_types = |types: &[BasicType]| types.iter().cloned().collect::<SchemaType>();
    let mut message = Object::with_type(BasicType::Object)
        .description(
            "A JSON-RPC 2.0 request (`initialize`, `ping`, `tools/list`, `tools/call`), \
             notification or response",
        )
        .property(
            "jsonrpc",
            Object::with_type(BasicType::String).enum_values(["2.0"]),
        )
        .required("jsonrpc")
        .property(
            "id",
            Object::new().schema_type(one_of_types(&[BasicType::String, BasicType::Integer])),
        )
        .property("method", Object::with_type(BasicType::String))
        .property(
            "params",
            Object::new().schema_type(one_of_types(&[
                BasicType::Object,
                BasicType::Array,
                BasicType::Null,
            ])),
        );
    // A request or notification names its method; a response carries an id and its result
    // or error.
    message.extensions.insert(
        "anyOf".to_owned(),
        json!([
            { "required": ["method"] },
            { "required": ["id", "result"] },
            { "required": ["id", "error"] },
        ]),
    );
    doc.components.schemas.insert(
        "JsonRpcMessage",
        RefOr::Type(oapi::Schema::Object(Box::new(message))),
    );
    let message = || RefOr::<oapi::Schema>::Ref(oapi::Ref::from_schema_name("JsonRpcMessage"));
    let rpc_body = OneOf::new().item(message()).item(
        Array::new()
            .items(message())
            .min_items(1)
            .max_items(100)
            .description("a batch (protocol revision 2025-03-26 only), 1 to 100 messages"),
    );
    let rpc_body = RequestBody::new()
        .description("one JSON-RPC message, or a batch")
        .required(Required::True)
        .add_content("application/json", oapi::Content::new(rpc_body));
    let arguments = RequestBody::new()
        .description(
            "the tool's arguments (see `GET /api/v1/mcp/tools` for each tool's input schema)",
        )
        .required(Required::True)
        .add_content(
            "application/json",
            oapi::Content::new(Object::with_type(BasicType::Object)),
        );
    let session = |required: bool| {
        Parameter::new("Mcp-Session-Id")
            .location(ParameterIn::Header)
            .required(if required {
                Required::True
            } else {
                Required::False
            })
            .schema(Object::with_type(BasicType::String))
            .description(if required {
                "the session to end (missing: 400, not a session of yours: 404)"
            } else {
                "the session `initialize` answered with: required on every other message \
                 (missing: 400, unknown or expired: 404), ignored on `initialize`"
            })
    };
    let tool_error =
        <crate::mcp::schemas::ToolErrorRecord as ToSchema>::to_schema(&mut doc.components);
    let version = Parameter::new("MCP-Protocol-Version")
        .location(ParameterIn::Header)
        .required(Required::False)
        .schema(Object::with_type(BasicType::String).enum_values(SUPPORTED.iter().copied()))
        .description("the negotiated protocol revision; another value is 400");
    for item in doc.paths.values_mut() {
        for operation in item.operations.values_mut() {
            match operation.operation_id.as_deref() {
                Some("mcp_post" | "mcp_rpc_deprecated") => {
                    operation.request_body = Some(rpc_body.clone());
                    operation.parameters.insert(session(false));
                    operation.parameters.insert(version.clone());
                }
                Some("mcp_delete") => {
                    operation.parameters.insert(session(true));
                    // The handler's `Result<(), _>` adds a 200 the transport never sends (204).
                    operation.responses.remove("200");
                }
                Some("mcp_call_tool") => {
                    operation.request_body = Some(arguments.clone());
                    // A tool's own failure is `internal.error` in the record's shape, which the
                    // error record's closed list of codes does not hold.
                    operation.responses.insert(
                        "500",
                        oapi::Response::new(
                            "INTERNAL_ERROR, or internal.error from the tool; only `error_id` \
                             identifies it",
                        )
                        .add_content("application/json", oapi::Content::new(tool_error.clone())),
                    );
                }
                _ => {}
            }
        }
    }
}
