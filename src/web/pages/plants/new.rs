//! Creating a plant: the form (species search, location, substrate) and its post.

use super::*;

/// What the create form offers.
pub(super) struct Choices {
    species: Vec<Value>,
    locations: Vec<(Uuid, String)>,
    slots: Vec<(Uuid, String)>,
    batches: Vec<(Uuid, String)>,
}

pub(super) async fn choices(o: &Open, species_q: &str) -> Result<Choices, AppError> {
    let state = &o.ctx.state;
    let tenant = &o.garden.tenant;
    let params = ListParams {
        q: (!species_q.trim().is_empty()).then(|| species_q.trim().to_owned()),
        filters: Vec::new(),
    };
    let (species, locations, slots, batches) = tokio::try_join!(
        crate::catalog::engine::service::list(
            state,
            &crate::catalog::species::model::SPECIES,
            &params,
            None,
            page(SPECIES_MAX),
        ),
        locations(o),
        crate::garden::places::service::list_slots(state, tenant, None, page(CHOICES_MAX)),
        crate::garden::substrates::service::list_batches(state, tenant, None, page(CHOICES_MAX)),
    )?;
    let slots = slots
        .items
        .into_iter()
        .map(|s| {
            let place = locations
                .iter()
                .find(|(k, _)| *k == s.location_key)
                .map(|(_, n)| n.clone())
                .unwrap_or_default();
            (s.key, format!("{} · {place}", s.code))
        })
        .collect();
    let batches = batches
        .items
        .into_iter()
        .map(|b| {
            let name = b.substrate_name.clone().unwrap_or(b.substrate_key.clone());
            (b.key, format!("{} · {name}", b.label))
        })
        .collect();
    Ok(Choices {
        species: species.items,
        locations,
        slots,
        batches,
    })
}

/// `GET /app/g/{slug}/plants/new?species_q=…`: the create form; the species search is a
/// plain GET form (htmx swaps only its results in while typing).
#[handler]
pub(super) async fn new_form(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(o) = open_get(req, depot, res).await else {
        return;
    };
    if let Err(e) = o.garden.require(Role::Grower) {
        return o.fail(req, res, e);
    }
    let q = req.query::<String>("species_q").unwrap_or_default();
    render_new(req, res, &o, &q, None, StatusCode::OK).await;
}

pub(super) async fn render_new(
    req: &Request,
    res: &mut Response,
    o: &Open,
    species_q: &str,
    failed: Option<&Failure<'_>>,
    status: StatusCode,
) {
    let lang = o.lang();
    let c = match choices(o, species_q).await {
        Ok(c) => c,
        Err(e) if e.code() == ErrorCode::ValidationError => Choices {
            species: Vec::new(),
            locations: locations(o).await.unwrap_or_default(),
            slots: Vec::new(),
            batches: Vec::new(),
        },
        Err(e) => return o.fail(req, res, e),
    };
    let f = failed;
    let chosen = typed(f, "species_key");
    let action = format!("{}/new", o.base());
    let body = html! {
        h1 { (lang.t("pl-new-title")) }
        form.search method="get" action=(action) role="search" aria-label=(lang.t("pl-species-search")) {
            label for="species_q" { (lang.t("pl-species-search")) }
            div.inline {
                input type="search" id="species_q" name="species_q" value=(species_q) maxlength="100"
                    hx-get=(action) hx-trigger="input changed delay:400ms, search"
                    hx-select="#species-results" hx-target="#species-results" hx-swap="outerHTML";
                button.secondary type="submit" { (lang.t("pl-search")) }
            }
        }
        (failure_notice(f))
        form.stack method="post" action=(action) {
            (csrf_field(&o.csrf))
            input type="hidden" name="species_q" value=(species_q);
            fieldset id="species-results" {
                legend { (lang.t("pl-species")) }
                @if c.species.is_empty() {
                    p.empty { (lang.t("pl-species-none")) }
                }
                @for (i, s) in c.species.iter().enumerate() {
                    @let key = text_of(s, "key");
                    label.check {
                        input type="radio" name="species_key" value=(key) required
                            checked[chosen == key || (chosen.is_empty() && i == 0 && c.species.len() == 1)];
                        (species_label(lang, s))
                    }
                }
            }
            label for="name" { (lang.t("pl-name")) }
            input type="text" id="name" name="name" maxlength="120" value=(typed(f, "name"));
            p.meta { (lang.t("pl-name-hint")) }
            label for="count" { (lang.t("pl-count")) }
            input type="number" id="count" name="count" min="1" max=(MANY_MAX) inputmode="numeric"
                value=(if typed(f, "count").is_empty() { "1" } else { typed(f, "count") });
            label for="location_key" { (lang.t("pl-location")) }
            select id="location_key" name="location_key" {
                option value="" { (lang.t("pl-none-chosen")) }
                @for (k, n) in &c.locations {
                    option value=(k.to_string()) selected[typed(f, "location_key") == k.to_string()] { (n) }
                }
            }
            label for="slot_key" { (lang.t("pl-slot")) }
            select id="slot_key" name="slot_key" {
                option value="" { (lang.t("pl-none-chosen")) }
                @for (k, n) in &c.slots {
                    option value=(k.to_string()) selected[typed(f, "slot_key") == k.to_string()] { (n) }
                }
            }
            label for="substrate_batch_key" { (lang.t("pl-substrate")) }
            select id="substrate_batch_key" name="substrate_batch_key" {
                option value="" { (lang.t("pl-none-chosen")) }
                @for (k, n) in &c.batches {
                    option value=(k.to_string()) selected[typed(f, "substrate_batch_key") == k.to_string()] { (n) }
                }
            }
            label for="planted_on" { (lang.t("pl-planted-on")) }
            input type="date" id="planted_on" name="planted_on" value=(typed(f, "planted_on"));
            (acknowledge_box(lang, f))
            button type="submit" { (lang.t("pl-create")) }
        }
        p { a href=(o.base()) { (lang.t("pl-all-plants")) } }
    };
    let frame = o.frame(req, lang.t("pl-new-title"));
    layout::render(res, status, layout::document(&frame, body));
}

/// `POST /app/g/{slug}/plants/new`: one plant (`create_plant_acknowledged`, as the REST
/// create), or `count` plants named `{name} 1…n`: every one read first, the first checked
/// by a dry run of the same function, then each created by it.
#[handler]
pub(super) async fn create_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let max = match depot.app_state() {
        Ok(s) => s.config().max_body_bytes,
        Err(e) => return fail(req, res, crate::web::session::visitor_lang(req), e),
    };
    let Some((o, posted)) = open_post(req, depot, res, max).await else {
        return;
    };
    let lang = o.lang();
    let state = &o.ctx.state;
    let tenant = &o.garden.tenant;
    let actor = o.actor();
    let spec = [
        ("species_key", Field::Text),
        ("name", Field::Optional),
        ("location_key", Field::Optional),
        ("slot_key", Field::Optional),
        ("substrate_batch_key", Field::Optional),
        ("planted_on", Field::Optional),
        ("acknowledge_rotation", Field::Checkbox),
        ("acknowledge_companions", Field::Checkbox),
    ];
    let count = match posted.get("count").map(str::trim).filter(|c| !c.is_empty()) {
        None => Ok(1),
        Some(raw) => raw
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=MANY_MAX).contains(n))
            .ok_or_else(|| {
                AppError::validation(vec![crate::error::ErrorDetail::new(
                    "body.count",
                    format!("a whole number from 1 to {MANY_MAX}"),
                    "value_error",
                )])
            }),
    };
    let outcome = async {
        let count = count?;
        let first: crate::garden::plants::model::PlantCreate = parse(posted.object(&spec))?;
        if count == 1 {
            let plant = crate::garden::plants::service::create_plant_acknowledged(
                state,
                tenant,
                &first.plant,
                first.acknowledge,
                &actor,
                true,
            )
            .await?;
            return Ok((Some(plant.key), 1));
        }
        // The first checked without writing (species, place, substrate, conflicts); its name
        // is the species' default when none was typed.
        let dry = crate::garden::plants::service::create_plant_acknowledged(
            state,
            tenant,
            &first.plant,
            first.acknowledge,
            &actor,
            false,
        )
        .await?;
        let base = first.plant.name.clone().unwrap_or(dry.name);
        let mut all = Vec::new();
        for i in 1..=count {
            let mut map = posted.object(&spec);
            map.insert("name".into(), Value::String(format!("{base} {i}")));
            let one: crate::garden::plants::model::PlantCreate = parse(map)?;
            all.push(one);
        }
        let mut made = 0;
        for one in &all {
            if let Err(e) = crate::garden::plants::service::create_plant_acknowledged(
                state,
                tenant,
                &one.plant,
                one.acknowledge,
                &actor,
                true,
            )
            .await
            {
                // Those made stay (each is a plant of its own); the page says how many.
                tracing::info!(made, error = %e, "web: several plants, one refused");
                return Err(if made > 0 {
                    AppError::new(
                        e.code(),
                        format!("{made} of {count} plants were created; then: {e}"),
                    )
                    .with_details(e.details().to_vec())
                } else {
                    e
                });
            }
            made += 1;
        }
        Ok((None, made))
    }
    .await;
    match outcome {
        Ok((Some(key), _)) => see_other(req, res, &format!("{}/{key}?done=created", o.base())),
        Ok((None, n)) => see_other(req, res, &format!("{}?done=created&n={n}", o.base())),
        Err(e) if e.code().status().is_server_error() || e.code() == ErrorCode::Forbidden => {
            o.fail(req, res, e)
        }
        Err(e) => {
            let f = failure(lang, "create", &e, &posted);
            let q = posted.get("species_q").unwrap_or("").to_owned();
            render_new(req, res, &o, &q, Some(&f), e.code().status()).await;
        }
    }
}
