//! The OpenAPI document at `/api/v1/openapi.json`, Swagger UI at `/api/v1/docs`, ReDoc at
//! `/api/v1/redoc` (src/http/redoc.rs). Both pages load their scripts from this service only
//! (Swagger UI's assets come with salvo, ReDoc's bundle is vendored), so they work offline and
//! behind a proxy.

use salvo::oapi::naming::{self, FlexNamer};
use salvo::oapi::schema::{BasicType, Object};
use salvo::oapi::security::{Http, HttpAuthScheme};
use salvo::oapi::swagger_ui::SwaggerUi;
use salvo::oapi::{self, OpenApi, RefOr, SecurityScheme, ToSchema};
use salvo::prelude::*;

use super::health::VERSION;
use super::rate_limit::RateLimitBody;
use super::roles::{self, MIN_ROLE_EXTENSION};
use crate::auth::Role;
use crate::config::ServiceMode;
use crate::error::ErrorBody;

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
    document_text_items(&mut doc);
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

/// Bodies whose fields are each optional but of which one must be given, not null: the derive
/// cannot state that, so the document gets a JSON Schema `anyOf` on the body's schema.
const ONE_FIELD_NEEDED: &[(&str, &[&str])] = &[
    ("PlantLocation", &["location_key", "slot_key"]),
    ("PlantSubstrate", &["substrate_batch_key", "substrate_key"]),
];

fn document_needed_fields(doc: &mut OpenApi) {
    for (schema, fields) in ONE_FIELD_NEEDED {
        let Some(RefOr::Type(oapi::Schema::Object(object))) =
            doc.components.schemas.get_mut(*schema)
        else {
            continue;
        };
        let any_of: Vec<serde_json::Value> = fields
            .iter()
            .map(|field| {
                serde_json::json!({
                    "required": [field],
                    "properties": { *field: { "not": { "type": "null" } } },
                })
            })
            .collect();
        object.extensions.insert("anyOf".to_owned(), any_of.into());
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
