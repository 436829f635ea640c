//! The REST face every catalogue kind shares: the record and body types (their OpenAPI schemas
//! come from the kind's field table), the list-query and body extractors, and
//! [`catalog_routes!`](crate::catalog_routes), which writes the five endpoints of a kind.

use std::fmt::Debug;
use std::marker::PhantomData;

use salvo::extract::Metadata;
use salvo::oapi::schema::{BasicType, Object, Schema, SchemaFormat, SchemaType};
use salvo::oapi::{
    Components, ComposeSchema, Content, EndpointArgRegister, KnownFormat, Operation, Parameter,
    ParameterIn, Ref, RefOr, RequestBody, ToSchema,
};
use salvo::prelude::*;
use serde::Serialize;
use serde_json::{Map, Value};

use super::fields::{Shape, object_schema};
use super::service::{ListParams, Q_MAX};
use super::spec::{Catalogued, FilterHow, KindSpec};
use crate::error::AppError;
use crate::http::depot::DepotExt;
use crate::http::json::read_object;
use crate::http::pagination::{MAX_SKIP, PageRequest};

/// Registers a named schema once and answers a reference to it.
fn named(
    components: &mut Components,
    name: String,
    build: impl FnOnce() -> Object,
) -> RefOr<Schema> {
    if !components.schemas.contains_key(&name) {
        components.schemas.insert(name.clone(), build());
    }
    RefOr::Ref(Ref::from_schema_name(name))
}

/// The record schema of a kind: key, fields, timestamps.
pub fn record_schema(components: &mut Components, spec: &'static KindSpec) -> RefOr<Schema> {
    named(components, spec.schema_name.to_owned(), || {
        let date = || {
            Object::new()
                .schema_type(SchemaType::basic(BasicType::String))
                .format(SchemaFormat::KnownFormat(KnownFormat::DateTime))
        };
        let key = Object::new()
            .schema_type(SchemaType::basic(BasicType::String))
            .format(SchemaFormat::KnownFormat(KnownFormat::Uuid))
            .description("record key");
        object_schema(spec.fields, Shape::Record, false)
            .property("key", key)
            .required("key")
            .property("created_at", date())
            .required("created_at")
            .property("updated_at", date())
            .required("updated_at")
    })
}

/// One record of kind `K` as the API shows it.
#[derive(Debug)]
pub struct Record<K>(pub Value, PhantomData<K>);

impl<K> Record<K> {
    pub fn new(value: Value) -> Self {
        Self(value, PhantomData)
    }
}

impl<K> Serialize for Record<K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<K: Catalogued> ToSchema for Record<K> {
    fn to_schema(components: &mut Components) -> RefOr<Schema> {
        record_schema(components, K::spec())
    }
}

impl<K: Catalogued> ComposeSchema for Record<K> {
    fn compose(components: &mut Components, _generics: Vec<RefOr<Schema>>) -> RefOr<Schema> {
        Self::to_schema(components)
    }
}

/// Which body a write reads.
pub trait BodyShape: Send + Sync + 'static {
    const SHAPE: Shape;
    const SUFFIX: &'static str;
}

pub struct CreateShape;
pub struct PatchShape;

impl BodyShape for CreateShape {
    const SHAPE: Shape = Shape::Create;
    const SUFFIX: &'static str = "Create";
}

impl BodyShape for PatchShape {
    const SHAPE: Shape = Shape::Patch;
    const SUFFIX: &'static str = "Patch";
}

/// The JSON object body of a create or patch of kind `K` (checked by the service).
#[derive(Debug)]
pub struct Body<K, S>(pub Map<String, Value>, PhantomData<(K, S)>);

static BODY_METADATA: Metadata = Metadata::new("CatalogBody");
static LIST_METADATA: Metadata = Metadata::new("CatalogListQuery");

impl<'ex, K: Catalogued, S: BodyShape> salvo::extract::Extractible<'ex> for Body<K, S> {
    fn metadata() -> &'static Metadata {
        &BODY_METADATA
    }

    async fn extract(
        req: &'ex mut Request,
        depot: &'ex mut Depot,
    ) -> Result<Self, impl Writer + Send + Debug + 'static> {
        let max = depot.app_state()?.config().max_body_bytes;
        let map = read_object(req, max).await?;
        Ok::<_, AppError>(Self(map, PhantomData))
    }
}

impl<K: Catalogued, S: BodyShape> EndpointArgRegister for Body<K, S> {
    fn register(components: &mut Components, operation: &mut Operation, _arg: &str) {
        let spec = K::spec();
        let schema = named(
            components,
            format!("{}{}", spec.schema_name, S::SUFFIX),
            || object_schema(spec.fields, S::SHAPE, false),
        );
        let body = RequestBody::new()
            .add_content("application/json", Content::new(schema))
            .required(salvo::oapi::Required::True);
        operation.request_body = Some(body);
    }
}

/// `skip`, `limit`, `q` and the kind's filters.
#[derive(Debug)]
pub struct ListQuery<K> {
    pub page: PageRequest,
    pub params: ListParams,
    kind: PhantomData<K>,
}

/// Reads `q` and the filters of `spec` from the query string.
pub fn list_params(req: &Request, spec: &KindSpec) -> ListParams {
    ListParams {
        q: req.queries().get("q").cloned(),
        filters: spec
            .filters
            .iter()
            .filter_map(|f| req.queries().get(f.param).map(|v| (f.param, v.clone())))
            .collect(),
    }
}

impl<'ex, K: Catalogued> salvo::extract::Extractible<'ex> for ListQuery<K> {
    fn metadata() -> &'static Metadata {
        &LIST_METADATA
    }

    async fn extract(
        req: &'ex mut Request,
        _depot: &'ex mut Depot,
    ) -> Result<Self, impl Writer + Send + Debug + 'static> {
        let spec = K::spec();
        let page = PageRequest::from_request(req, spec.max_limit)?;
        Ok::<_, AppError>(Self {
            page,
            params: list_params(req, spec),
            kind: PhantomData,
        })
    }
}

/// The query parameters of a list: paging, `q` and the kind's filters.
pub fn list_parameters(spec: &KindSpec, operation: &mut Operation) {
    let int = |min: i64, max: i64| {
        Object::new()
            .schema_type(SchemaType::basic(BasicType::Integer))
            .minimum(min)
            .maximum(max)
    };
    let query = |name: &str, doc: &str, schema: Object| {
        Parameter::new(name)
            .location(ParameterIn::Query)
            .required(salvo::oapi::Required::False)
            .description(doc)
            .schema(schema)
    };
    let p = &mut operation.parameters;
    p.insert(query("skip", "items to skip (default 0)", int(0, MAX_SKIP)));
    p.insert(query(
        "limit",
        "page size (default 100 or the maximum when lower)",
        int(1, spec.max_limit),
    ));
    let text = Object::new()
        .schema_type(SchemaType::basic(BasicType::String))
        .max_length(Q_MAX)
        .pattern(r"^[^\u0000-\u001F\u007F-\u009F]*$");
    p.insert(query(
        "q",
        "search the names (case-insensitive, `×` = `x`)",
        text,
    ));
    for f in spec.filters {
        let string = Object::new().schema_type(SchemaType::basic(BasicType::String));
        let schema = match f.how {
            FilterHow::Equals(_, allowed) | FilterHow::Contains(_, allowed)
                if !allowed.is_empty() =>
            {
                string.enum_values(allowed.iter().copied())
            }
            FilterHow::Equals(..) | FilterHow::Contains(..) => string.max_length(200),
            FilterHow::Bool(_) => string.enum_values(["true", "false"]),
            FilterHow::Known(_) => string.enum_values(["true", "false", "unknown"]),
            FilterHow::Ref(_) | FilterHow::RefAny(_) => {
                string.format(SchemaFormat::KnownFormat(KnownFormat::Uuid))
            }
        };
        p.insert(query(f.param, f.doc, schema));
    }
}

impl<K: Catalogued> EndpointArgRegister for ListQuery<K> {
    fn register(_components: &mut Components, operation: &mut Operation, _arg: &str) {
        list_parameters(K::spec(), operation);
    }
}

/// Writes the five REST endpoints of a catalogue kind into a module, and its `router`:
/// `GET /` (list), `POST /` (create, platform admin), `GET /{key}`, `PATCH /{key}` (partial,
/// platform admin), `DELETE /{key}` (platform admin).
#[macro_export]
macro_rules! catalog_routes {
    ($module:ident, $kind:ident, $path:literal, $tag:literal, $label:literal) => {
        pub mod $module {
            use salvo::oapi::extract::PathParam;
            use salvo::prelude::*;

            use $crate::catalog::engine::routes::{Body, CreateShape, ListQuery, PatchShape, Record};
            use $crate::catalog::engine::service;
            use $crate::error::{AppError, ErrorBody};
            use $crate::http::depot::DepotExt;
            use $crate::values::page::Page;

            type Kind = super::$kind;

            fn spec() -> &'static $crate::catalog::engine::spec::KindSpec {
                <Kind as $crate::catalog::engine::spec::Catalogued>::spec()
            }

            /// Reads for every caller; writes for platform admins.
            pub fn router() -> Router {
                Router::with_path($path)
                    .push(
                        Router::new()
                            .hoop($crate::http::caller::require_caller)
                            .get(list)
                            .push(Router::with_path("{key}").get(get)),
                    )
                    .push(
                        Router::new()
                            .hoop($crate::http::caller::require_platform_admin)
                            .post(create)
                            .push(Router::with_path("{key}").patch(update).delete(delete)),
                    )
            }

            #[doc = concat!("List ", $label, " by name; `q` searches, filters narrow.")]
            #[endpoint(tags($tag), security(["bearer" = []]),
                operation_id = concat!("list_", stringify!($module)),
                responses(
                    (status_code = 200, description = "one page", body = Page<Record<Kind>>),
                    (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
                    (status_code = 422, description = "VALIDATION_ERROR: a query parameter is out of range", body = ErrorBody),
                ))]
            pub async fn list(
                query: ListQuery<Kind>,
                depot: &mut Depot,
            ) -> Result<Json<Page<Record<Kind>>>, AppError> {
                let state = depot.app_state()?;
                let page = service::list(&state, spec(), &query.params, None, query.page).await?;
                Ok(Json($crate::catalog::engine::routes::records(page)))
            }

            #[doc = concat!("Get one of the ", $label, ".")]
            #[endpoint(tags($tag), security(["bearer" = []]),
                operation_id = concat!("get_", stringify!($module)),
                responses(
                    (status_code = 200, description = "the record", body = Record<Kind>),
                    (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
                    (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
                ))]
            pub async fn get(
                key: PathParam<String>,
                depot: &mut Depot,
            ) -> Result<Json<Record<Kind>>, AppError> {
                let state = depot.app_state()?;
                Ok(Json(Record::new(service::get(&state, spec(), &key).await?)))
            }

            #[doc = concat!("Create one of the ", $label, " (platform admin).")]
            #[endpoint(tags($tag), security(["bearer" = []]),
                operation_id = concat!("create_", stringify!($module)),
                status_codes(201, 400, 401, 403, 404, 409, 413, 415, 422, 500),
                responses(
                    (status_code = 201, description = "created", body = Record<Kind>),
                    (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
                    (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
                    (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
                    (status_code = 404, description = "ENTITY_NOT_FOUND: a referenced record does not exist", body = ErrorBody),
                    (status_code = 409, description = "DUPLICATE_ENTRY: the name is taken", body = ErrorBody),
                    (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
                    (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
                    (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
                ))]
            pub async fn create(
                body: Body<Kind, CreateShape>,
                depot: &mut Depot,
                res: &mut Response,
            ) -> Result<Json<Record<Kind>>, AppError> {
                let state = depot.app_state()?;
                let created = service::create(&state, spec(), body.0).await?;
                res.status_code(StatusCode::CREATED);
                Ok(Json(Record::new(created)))
            }

            #[doc = concat!("Change one of the ", $label, " (platform admin); omitted fields stay, null clears.")]
            #[endpoint(tags($tag), security(["bearer" = []]),
                operation_id = concat!("update_", stringify!($module)),
                responses(
                    (status_code = 200, description = "the changed record", body = Record<Kind>),
                    (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
                    (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
                    (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
                    (status_code = 404, description = "ENTITY_NOT_FOUND: unknown key or referenced record", body = ErrorBody),
                    (status_code = 409, description = "DUPLICATE_ENTRY: the new name is taken", body = ErrorBody),
                    (status_code = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
                    (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
                    (status_code = 422, description = "VALIDATION_ERROR: one detail per invalid field", body = ErrorBody),
                ))]
            pub async fn update(
                key: PathParam<String>,
                body: Body<Kind, PatchShape>,
                depot: &mut Depot,
            ) -> Result<Json<Record<Kind>>, AppError> {
                let state = depot.app_state()?;
                Ok(Json(Record::new(service::patch(&state, spec(), &key, body.0).await?)))
            }

            #[doc = concat!("Delete one of the ", $label, " (platform admin).")]
            #[endpoint(tags($tag), security(["bearer" = []]),
                operation_id = concat!("delete_", stringify!($module)),
                status_codes(204, 401, 403, 404, 409, 500),
                responses(
                    (status_code = 204, description = "deleted"),
                    (status_code = 401, description = "UNAUTHORIZED or INVALID_TOKEN", body = ErrorBody),
                    (status_code = 403, description = "FORBIDDEN: not a platform admin", body = ErrorBody),
                    (status_code = 404, description = "ENTITY_NOT_FOUND", body = ErrorBody),
                    (status_code = 409, description = "STATE_CONFLICT: other records still reference it", body = ErrorBody),
                ))]
            pub async fn delete(
                key: PathParam<String>,
                depot: &mut Depot,
                res: &mut Response,
            ) -> Result<(), AppError> {
                let state = depot.app_state()?;
                service::delete(&state, spec(), &key).await?;
                res.status_code(StatusCode::NO_CONTENT);
                Ok(())
            }
        }
    };
}

/// A page of JSON records as a page of typed records.
pub fn records<K: Catalogued>(
    listed: super::service::Listed,
) -> crate::values::page::Page<Record<K>> {
    crate::values::page::Page::new(
        listed.items.into_iter().map(Record::new).collect(),
        listed.total,
        listed.page,
    )
}
