//! The **mixing protocol** as a form (`/app/g/{slug}/nutrition/mix`): products (the garden's
//! and the catalogue's, each with an optional recipe dose), tank volume, target EC, phase, the
//! water (EC, pH, alkalinity, temperature) and the substrate; or a nutrient plan whose entry
//! for the phase gives the products and the target EC. The answer is the protocol of
//! `calculations::service::mixing_protocol`, the function `POST /api/v1/t/{slug}/mixing-protocol`
//! and the tool `calculate_mixing_protocol` call: doses in mixing order, the pH step, the
//! instructions and every warning. A refusal of the reader or the service is shown next to
//! its field; the protocol writes nothing, so every member may mix (as on REST).

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::{Map, Value};

use super::{fertilizer_choices, fertilizer_options, num, nutrition_page};
use crate::calculations::model::MixingProtocolBody;
use crate::calculations::service::{self as calculations, ProductSource};
use crate::error::{AppError, ErrorCode};
use crate::garden::fertilizers::model::GardenFertilizer;
use crate::garden::nutrient_plans::model::{NutrientPlan, PlanSummary};
use crate::garden::nutrient_plans::service as plans;
use crate::rules::mixing_protocol::{EC_PHASES, MixingProtocol, SUBSTRATE_TYPES};
use crate::values::page::PageRequest;
use crate::web::forms::{Field, Posted, code_text, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{csrf_field, refused};
use crate::web::pages::PageCtx;
use crate::web::pages::scope::{GardenScope, open_garden};

pub fn router() -> Router {
    Router::with_path("mix").get(mix_page).post(calculate)
}

/// Product rows the form offers (the service takes up to 20; a plan's entry may fill more).
const PRODUCT_ROWS: usize = 6;

/// The number fields of the form, named as the service's body names them.
const NUMBERS: &[&str] = &[
    "target_volume_liters",
    "target_ec_ms",
    "base_water_ec_ms",
    "base_water_ph",
    "alkalinity_ppm",
    "target_ph",
    "water_temp_c",
];

/// What the form shows besides its fields: the result or the refusal.
#[derive(Default)]
struct Outcome {
    protocol: Option<MixingProtocol>,
    /// Sentences per form field (`target_ec_ms`, `product_2`, …).
    fields: Vec<(String, String)>,
    /// Sentences for the whole form.
    general: Vec<String>,
}

impl Outcome {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_str())
    }
}

/// What the form needs to offer its choices.
struct Choices {
    products: Vec<GardenFertilizer>,
    plans: Vec<PlanSummary>,
}

async fn choices(ctx: &PageCtx, scope: &GardenScope<'_>) -> Result<Choices, AppError> {
    let products = fertilizer_choices(ctx, scope).await?;
    let plans = plans::list_plans(
        &ctx.state,
        &scope.garden.tenant,
        &plans::Query::default(),
        PageRequest {
            skip: 0,
            limit: 200,
        },
    )
    .await?
    .items;
    Ok(Choices { products, plans })
}

#[handler]
async fn mix_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    show(
        req,
        res,
        &ctx,
        &scope,
        StatusCode::OK,
        None,
        &Outcome::default(),
    )
    .await;
}

/// The form's rows as the body's `fertilizers`, with the row of each item (a refusal names
/// the item by its place in the list; the page shows it at its row). A row with a dose but no
/// product goes in with an empty key, so the reader refuses it.
fn product_rows(posted: &Posted) -> (Vec<Value>, Vec<usize>) {
    let mut items = Vec::new();
    let mut rows = Vec::new();
    for i in 0..PRODUCT_ROWS {
        let key = posted
            .get(&format!("product_{i}"))
            .unwrap_or("")
            .trim()
            .to_owned();
        let dose_name = format!("dose_{i}");
        let dose = posted.object(&[(dose_name.as_str(), Field::Number)]);
        if key.is_empty() && dose.is_empty() {
            continue;
        }
        let mut item = Map::new();
        item.insert("fertilizer_key".to_owned(), Value::String(key));
        if let Some(d) = dose.get(&dose_name) {
            item.insert("ml_per_liter".to_owned(), d.clone());
        }
        items.push(Value::Object(item));
        rows.push(i);
    }
    (items, rows)
}

/// The entry of a plan for a phase: the first whose phase name (or key) is the phase, else the
/// plan's first entry.
fn plan_entry<'a>(
    plan: &'a NutrientPlan,
    phase: Option<&str>,
) -> Option<&'a crate::garden::nutrient_plans::model::PlanPhase> {
    let wanted = phase.map(str::trim).filter(|p| !p.is_empty());
    match wanted {
        Some(p) => plan
            .phases
            .iter()
            .find(|e| e.phase_name.eq_ignore_ascii_case(p) || e.key == p),
        None => plan.phases.first(),
    }
}

/// The body and the row of each product in it; or the field and phase a plan has no entry for.
type Body = Result<(Map<String, Value>, Vec<usize>), (String, String)>;

/// The body the form stands for. A plan chosen gives its entry's products as the recipe (when
/// no row is filled), its phase name (when none is typed) and its target EC (when none is
/// typed): the values the grower would otherwise copy by hand.
fn body_of(posted: &Posted, plan: Option<&NutrientPlan>) -> Body {
    let mut spec: Vec<(&str, Field)> = NUMBERS.iter().map(|n| (*n, Field::Number)).collect();
    spec.extend([
        ("phase", Field::Optional),
        ("substrate_type", Field::Optional),
        ("substrate_cycles_used", Field::Optional),
    ]);
    let mut map = posted.object(&spec);
    // A whole number, or text the reader refuses.
    if let Some(Value::String(raw)) = map.get("substrate_cycles_used").cloned() {
        let v = raw
            .trim()
            .parse::<i64>()
            .map_or(Value::String(raw), Value::from);
        map.insert("substrate_cycles_used".to_owned(), v);
    }
    let (mut items, mut rows) = product_rows(posted);
    if let Some(plan) = plan {
        let phase = map.get("phase").and_then(Value::as_str);
        let Some(entry) = plan_entry(plan, phase) else {
            return Err(("phase".to_owned(), phase.unwrap_or("").to_owned()));
        };
        if items.is_empty() {
            for p in &entry.products {
                let mut item = Map::new();
                let key = p.fertilizer_key.clone().unwrap_or_default();
                item.insert("fertilizer_key".to_owned(), Value::String(key));
                if let Some(n) = serde_json::Number::from_f64(p.ml_per_liter) {
                    item.insert("ml_per_liter".to_owned(), Value::Number(n));
                }
                items.push(Value::Object(item));
            }
            rows = Vec::new();
        }
        map.entry("phase")
            .or_insert_with(|| Value::String(entry.phase_name.clone()));
        if let Some(ec) = entry.target_ec_ms.and_then(serde_json::Number::from_f64) {
            map.entry("target_ec_ms").or_insert(Value::Number(ec));
        }
    }
    map.insert("fertilizers".to_owned(), Value::Array(items));
    Ok((map, rows))
}

/// The form field a detail names (`body.fertilizers[2].ml_per_liter` → `dose_<row>`).
fn form_field(detail: &str, rows: &[usize]) -> Option<String> {
    let field = detail.strip_prefix("body.").unwrap_or(detail);
    if let Some(rest) = field.strip_prefix("fertilizers[") {
        let (index, tail) = rest.split_once(']')?;
        let row = index.parse::<usize>().ok().and_then(|i| rows.get(i))?;
        let name = if tail.contains("ml_per_liter") {
            "dose"
        } else {
            "product"
        };
        return Some(format!("{name}_{row}"));
    }
    match field {
        "fertilizers" => Some("product_0".to_owned()),
        "substrate_key" => Some("substrate_type".to_owned()),
        f if NUMBERS.contains(&f)
            || ["phase", "substrate_type", "substrate_cycles_used"].contains(&f) =>
        {
            Some(f.to_owned())
        }
        _ => None,
    }
}

/// What a refusal says, next to the fields it names: the page's sentence and the service's
/// own reason.
fn refusal(lang: Lang, err: &AppError, rows: &[usize]) -> Outcome {
    let mut out = Outcome::default();
    let sentence = |code: &str| match (err.code(), code) {
        (ErrorCode::EntityNotFound, _) => lang.t("err-not-found"),
        (_, "missing") => lang.t("err-missing"),
        _ => lang.t("err-invalid"),
    };
    for d in err.details() {
        let text = format!("{} ({})", sentence(&d.code), d.reason);
        match form_field(&d.field, rows) {
            Some(f) => out.fields.push((f, text)),
            None => out.general.push(text),
        }
    }
    if err.details().is_empty() {
        out.general.push(lang.t(code_text(err.code())));
    } else if !out.fields.is_empty() {
        out.general.insert(0, lang.t("nut-mix-refused"));
    }
    out
}

/// `POST …/nutrition/mix`: the protocol for the form's values (any member; nothing written).
#[handler]
async fn calculate(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let Some(posted) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let lang = ctx.lang;
    let tenant = &scope.garden.tenant;
    let plan_key = posted.get("plan_key").map(str::trim).unwrap_or("");
    let plan = if plan_key.is_empty() {
        None
    } else {
        match plans::get_plan(&ctx.state, tenant, plan_key).await {
            Ok(p) => Some(p),
            Err(e) if e.code() == ErrorCode::EntityNotFound => {
                let out = Outcome {
                    fields: vec![("plan_key".to_owned(), lang.t("err-not-found"))],
                    general: vec![lang.t("nut-mix-refused")],
                    ..Outcome::default()
                };
                let status = StatusCode::UNPROCESSABLE_ENTITY;
                return show(req, res, &ctx, &scope, status, Some(&posted), &out).await;
            }
            Err(e) => return ctx.fail(req, res, e),
        }
    };
    let (map, rows) = match body_of(&posted, plan.as_ref()) {
        Ok(b) => b,
        Err((field, phase)) => {
            let text = lang.t_with("nut-mix-plan-no-phase", &[("phase", phase.into())]);
            let out = Outcome {
                fields: vec![(field, text)],
                general: vec![lang.t("nut-mix-refused")],
                ..Outcome::default()
            };
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            return show(req, res, &ctx, &scope, status, Some(&posted), &out).await;
        }
    };
    let outcome = async {
        let body: MixingProtocolBody = parse(map)?;
        calculations::mixing_protocol(&ctx.state, ProductSource::Garden(tenant), &body).await
    }
    .await;
    match outcome {
        Ok(protocol) => {
            let out = Outcome {
                protocol: Some(protocol),
                ..Outcome::default()
            };
            show(req, res, &ctx, &scope, StatusCode::OK, Some(&posted), &out).await;
        }
        // A product key the garden does not know is the service's 404 naming the field: said
        // next to the row, like any other refusal of what was typed.
        Err(err)
            if err.code() == ErrorCode::ValidationError
                || (err.code() == ErrorCode::EntityNotFound && !err.details().is_empty()) =>
        {
            let out = refusal(lang, &err, &rows);
            let status = err.code().status();
            show(req, res, &ctx, &scope, status, Some(&posted), &out).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}

async fn show(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    posted: Option<&Posted>,
    out: &Outcome,
) {
    let choices = match choices(ctx, scope).await {
        Ok(c) => c,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let view = View {
        lang,
        posted,
        out,
        choices: &choices,
    };
    let action = format!("/app/g/{}/nutrition/mix", scope.slug);
    let body = html! {
        p { (lang.t("nut-mix-intro")) }
        (refused(&out.general))
        @if let Some(p) = &out.protocol { (result(lang, p)) }
        (view.form(&action, &scope.s.csrf))
    };
    nutrition_page(req, res, ctx, scope, status, "mix", lang.t("nut-mix"), body);
}

struct View<'a> {
    lang: Lang,
    posted: Option<&'a Posted>,
    out: &'a Outcome,
    choices: &'a Choices,
}

impl View<'_> {
    fn typed(&self, name: &str) -> &str {
        self.posted.and_then(|p| p.get(name)).unwrap_or("")
    }

    fn error(&self, name: &str) -> Markup {
        html! {
            @if let Some(text) = self.out.field(name) {
                p class="notice bad" id=(format!("mix-{name}-err")) { (text) }
            }
        }
    }

    fn described(&self, name: &str) -> Option<String> {
        self.out.field(name).map(|_| format!("mix-{name}-err"))
    }

    fn invalid(&self, name: &str) -> Option<&'static str> {
        self.out.field(name).map(|_| "true")
    }

    /// A number field named as the body names it.
    fn number(&self, name: &str) -> Markup {
        let lang = self.lang;
        html! {
            label for=(format!("mix-{name}")) { (lang.t(&format!("nut-mix-{name}"))) }
            input id=(format!("mix-{name}")) type="text" inputmode="decimal" name=(name)
                value=(self.typed(name)) aria-invalid=[self.invalid(name)] aria-describedby=[self.described(name)];
            (self.error(name))
        }
    }

    fn form(&self, action: &str, csrf: &str) -> Markup {
        let lang = self.lang;
        let substrate = self.typed("substrate_type");
        let plan = self.typed("plan_key");
        html! {
            section.card aria-labelledby="sec-mix-form" {
                h2 id="sec-mix-form" { (lang.t("nut-mix-form")) }
                form.stack method="post" action=(action) novalidate {
                    (csrf_field(csrf))
                    fieldset {
                        legend { (lang.t("nut-mix-tank")) }
                        (self.number("target_volume_liters"))
                        (self.number("target_ec_ms"))
                        label for="mix-phase" { (lang.t("nut-mix-phase")) }
                        input id="mix-phase" type="text" name="phase" list="mix-phases" maxlength="50"
                            value=(self.typed("phase")) aria-invalid=[self.invalid("phase")] aria-describedby=[self.described("phase")];
                        datalist id="mix-phases" {
                            @for p in EC_PHASES { option value=(p) {} }
                        }
                        (self.error("phase"))
                        label for="mix-plan_key" { (lang.t("nut-mix-plan")) }
                        select id="mix-plan_key" name="plan_key" aria-invalid=[self.invalid("plan_key")] aria-describedby=[self.described("plan_key")] {
                            option value="" { (lang.t("nut-mix-no-plan")) }
                            @for p in &self.choices.plans {
                                option value=(p.key) selected[p.key == plan] { (p.name) }
                            }
                        }
                        (self.error("plan_key"))
                        p.meta { (lang.t("nut-mix-plan-hint")) }
                    }
                    fieldset {
                        legend { (lang.t("nut-mix-products")) }
                        p.meta { (lang.t("nut-mix-products-hint")) }
                        @for i in 0..PRODUCT_ROWS {
                            @let product = format!("product_{i}");
                            @let dose = format!("dose_{i}");
                            label for=(format!("mix-{product}")) { (lang.t_with("nut-mix-product-n", &[("n", (i as i64 + 1).into())])) }
                            select id=(format!("mix-{product}")) name=(product.as_str())
                                aria-invalid=[self.invalid(&product)] aria-describedby=[self.described(&product)] {
                                (fertilizer_options(lang, &self.choices.products, self.typed(&product)))
                            }
                            (self.error(&product))
                            label for=(format!("mix-{dose}")) { (lang.t_with("nut-mix-dose-n", &[("n", (i as i64 + 1).into())])) }
                            input id=(format!("mix-{dose}")) type="text" inputmode="decimal" name=(dose.as_str())
                                value=(self.typed(&dose)) aria-invalid=[self.invalid(&dose)] aria-describedby=[self.described(&dose)];
                            (self.error(&dose))
                        }
                    }
                    fieldset {
                        legend { (lang.t("nut-mix-water")) }
                        (self.number("base_water_ec_ms"))
                        (self.number("base_water_ph"))
                        (self.number("alkalinity_ppm"))
                        (self.number("target_ph"))
                        (self.number("water_temp_c"))
                    }
                    fieldset {
                        legend { (lang.t("nut-mix-substrate")) }
                        label for="mix-substrate_type" { (lang.t("nut-mix-substrate_type")) }
                        select id="mix-substrate_type" name="substrate_type" aria-invalid=[self.invalid("substrate_type")] aria-describedby=[self.described("substrate_type")] {
                            option value="" { (lang.t("nut-mix-substrate-default")) }
                            @for s in SUBSTRATE_TYPES {
                                option value=(s) selected[*s == substrate] { (s) }
                            }
                        }
                        (self.error("substrate_type"))
                        label for="mix-substrate_cycles_used" { (lang.t("nut-mix-substrate_cycles_used")) }
                        input id="mix-substrate_cycles_used" type="number" min="0" max="50" inputmode="numeric" name="substrate_cycles_used"
                            value=(self.typed("substrate_cycles_used"))
                            aria-invalid=[self.invalid("substrate_cycles_used")] aria-describedby=[self.described("substrate_cycles_used")];
                        (self.error("substrate_cycles_used"))
                    }
                    button type="submit" { (lang.t("nut-mix-calculate")) }
                }
            }
        }
    }
}

/// The protocol as the service returned it: doses in mixing order, the pH step, the steps and
/// every warning (the service's words).
fn result(lang: Lang, p: &MixingProtocol) -> Markup {
    let ph = &p.ph_adjustment;
    html! {
        section.card aria-labelledby="sec-mix-result" id="mix-result" {
            h2 id="sec-mix-result" { (lang.t("nut-mix-result")) }
            @if p.valid {
                (crate::web::layout::notice("ok", &lang.t("nut-mix-valid")))
            } @else {
                (crate::web::layout::notice("bad", &lang.t("nut-mix-not-valid")))
            }
            @if !p.warnings.is_empty() {
                h3 { (lang.t("nut-mix-warnings")) }
                ul.items id="mix-warnings" {
                    @for w in &p.warnings {
                        li {
                            span.what {
                                @if w.severity == "critical" {
                                    span.badge.overdue { (lang.t("nut-mix-critical")) }
                                } @else {
                                    span.badge.due { (lang.t("nut-mix-warning")) }
                                }
                                " " (w.message)
                            }
                        }
                    }
                }
            }
            dl.facts {
                dt { (lang.t("nut-mix-calculated-ec")) }
                dd { (num(lang, p.calculated_ec)) " mS/cm (± " (num(lang, p.tolerance_ms)) ")" }
                dt { (lang.t("nut-mix-range")) }
                dd {
                    (num(lang, p.ec_range_min_ms)) "–" (num(lang, p.ec_range_max_ms)) " mS/cm · "
                    (p.ec_range_crop.as_deref().unwrap_or(&p.substrate_class))
                    @if let Some(src) = &p.ec_range_source { " (" (lang.t("safety-source")) ": " (src) ")" }
                }
                dt { (lang.t("nut-mix-phase")) }
                dd { (p.phase) @if let Some(r) = &p.resolved_ec_phase { @if r != &p.phase { " (" (r) ")" } } }
                dt { (lang.t("nut-mix-volume")) }
                dd { (num(lang, p.target_volume_liters)) " L" }
            }
            h3 { (lang.t("nut-mix-doses")) }
            @if p.dosages.is_empty() {
                p.empty { (lang.t("nut-mix-no-doses")) }
            } @else {
                ol.timeline id="mix-doses" {
                    @for d in &p.dosages {
                        li {
                            strong { (d.product_name) } " · "
                            (num(lang, d.ml_per_liter)) " ml/L · " (num(lang, d.total_ml)) " ml"
                            span.meta { " · +" (num(lang, d.ec_contribution)) " mS/cm" }
                            @if d.capped { " " span.badge.due { (lang.t("nut-mix-capped")) } }
                        }
                    }
                }
            }
            h3 { (lang.t("nut-mix-ph-step")) }
            p id="mix-ph" {
                @if ph.measure_after_additions { (lang.t("nut-mix-ph-after")) " " }
                (lang.t_with("nut-mix-ph-target", &[("ph", num(lang, ph.target_ph).into())]))
            }
            ul {
                li { (lang.t("nut-mix-ph-lower")) ": " (ph.lower_with.join(", ")) }
                li { (lang.t("nut-mix-ph-raise")) ": " (ph.raise_with.join(", ")) }
                li { (lang.t("nut-mix-ph-ec")) ": " (num(lang, ph.expected_ec_ms)) " mS/cm" }
            }
            @if !p.instructions.is_empty() {
                h3 { (lang.t("nut-mix-steps")) }
                ol.timeline { @for s in &p.instructions { li { (s) } } }
            }
        }
    }
}
