//! A plant's pest and disease management: running safety intervals, inspections and treatments.

use super::*;

pub(super) fn safety_section(lang: Lang, d: &PlantData) -> Markup {
    html! {
        section.card aria-labelledby="sec-safety" id="safety" {
            h2 id="sec-safety" { (lang.t("today-safety")) }
            @if d.readiness.safety_intervals.is_empty() {
                p.empty { (lang.t("pl-safety-none")) }
            } @else {
                ul.items {
                    @for i in &d.readiness.safety_intervals {
                        li {
                            span.what { strong { (i.treatment_name) } " · " (lang.t_with("pl-days-left", &[("days", i.days_remaining.into())])) }
                            span.meta {
                                (lang.t("safety-until")) " " (lang.iso_date(&i.last_blocked_day)) "; "
                                (lang.t("safety-harvest-from")) " " (lang.iso_date(&i.safe_on))
                                " (" (lang.t("safety-source")) ": " (i.interval_source.clone().unwrap_or_else(|| lang.t("pl-no-source"))) ")"
                            }
                        }
                    }
                }
            }
        }
    }
}

pub(super) const PRESSURE: &[&str] = crate::garden::ipm::model::PRESSURE;
pub(super) const DOSE_UNITS: &[&str] = crate::garden::ipm::model::DOSE_UNITS;

pub(super) fn ipm_section(
    o: &Open,
    d: &PlantData,
    base: &str,
    can_write: bool,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let lang = o.lang();
    let fi = failed.and_then(|f| f.of("inspection"));
    let ft = failed.and_then(|f| f.of("treatment"));
    let pressure = match typed(fi, "pressure_level") {
        "" => "none",
        p => p,
    };
    html! {
        section.card aria-labelledby="sec-ipm" id="ipm" {
            h2 id="sec-ipm" { (lang.t("pl-ipm")) }
            h3 { (lang.t("pl-inspections")) }
            @if can_write {
                (form_box(&lang.t("pl-inspection-add"), fi.is_some(), html! {
                    (failure_notice(fi))
                    form.stack method="post" action=(format!("{base}/inspection")) {
                        (csrf_field(&o.csrf))
                        label for="pressure_level" { (lang.t("pl-pressure")) }
                        select id="pressure_level" name="pressure_level" {
                            @for p in PRESSURE {
                                option value=(p) selected[pressure == *p] { (choice_text(lang, "pl-pressure", p)) }
                            }
                        }
                        label for="symptom" { (lang.t("pl-symptom")) }
                        input type="text" id="symptom" name="symptom" maxlength="500" value=(typed(fi, "symptom"));
                        label for="i-notes" { (lang.t("pl-notes")) }
                        textarea id="i-notes" name="notes" rows="2" { (typed(fi, "notes")) }
                        button type="submit" { (lang.t("pl-save")) }
                    }
                }))
            }
            @if d.inspections.is_empty() {
                p.empty { (lang.t("pl-inspections-none")) }
            } @else {
                ul.items {
                    @for i in &d.inspections {
                        @let level = serde_json::to_value(i.pressure_level).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
                        li {
                            span.what {
                                (lang.t("pl-pressure")) ": " (choice_text(lang, "pl-pressure", &level))
                                @for s in &i.symptoms_observed { " · " (s) }
                            }
                            span.meta { (local_stamp(lang, &o.tz, i.inspected_at)) }
                        }
                    }
                }
            }
            h3 { (lang.t("pl-treatments")) }
            @if can_write {
                (form_box(&lang.t("pl-treatment-add"), ft.is_some(), html! {
                    (failure_notice(ft))
                    form.stack method="post" action=(format!("{base}/treatment")) {
                        (csrf_field(&o.csrf))
                        label for="treatment_key" { (lang.t("pl-treatment")) }
                        select id="treatment_key" name="treatment_key" required {
                            option value="" { (lang.t("pl-choose")) }
                            @for t in &d.treatments {
                                @let key = text_of(t, "key");
                                @let days = t.get("safety_interval_days").and_then(Value::as_i64).unwrap_or(0);
                                option value=(key) selected[typed(ft, "treatment_key") == key] {
                                    (text_of(t, "name")) " · " (lang.t_with("pl-interval-days", &[("days", days.into())]))
                                }
                            }
                        }
                        p.meta { (lang.t("pl-treatment-hint")) }
                        label for="dose" { (lang.t("pl-dose")) }
                        input type="text" inputmode="decimal" id="dose" name="dose" value=(typed(ft, "dose"));
                        label for="dose_unit" { (lang.t("pl-dose-unit")) }
                        select id="dose_unit" name="dose_unit" {
                            option value="" { (lang.t("pl-none-chosen")) }
                            @for u in DOSE_UNITS {
                                option value=(u) selected[typed(ft, "dose_unit") == *u] { (choice_text(lang, "pl-unit", u)) }
                            }
                        }
                        label for="t-notes" { (lang.t("pl-notes")) }
                        textarea id="t-notes" name="notes" rows="2" { (typed(ft, "notes")) }
                        (acknowledge_box(lang, ft))
                        button type="submit" { (lang.t("pl-save")) }
                    }
                }))
            }
            @if d.applications.is_empty() {
                p.empty { (lang.t("pl-treatments-none")) }
            } @else {
                ul.items {
                    @for a in &d.applications {
                        @let mine = a.plants.iter().find(|t| t.plant_key == d.plant.key);
                        li {
                            span.what {
                                strong { (a.treatment_name) }
                                @if let Some(ai) = &a.active_ingredient { " (" (ai) ")" }
                            }
                            span.meta {
                                (local_stamp(lang, &o.tz, a.applied_at))
                                @if let Some(t) = mine {
                                    " · " (lang.t_with("pl-interval-days", &[("days", i64::from(t.safety_interval_days).into())]))
                                    @if let Some(last) = &t.last_blocked_day {
                                        "; " (lang.t("safety-until")) " " (lang.iso_date(last))
                                        "; " (lang.t("safety-harvest-from")) " " (lang.iso_date(&t.safe_on))
                                    }
                                    " (" (lang.t("safety-source")) ": " (t.interval_source.clone().unwrap_or_else(|| lang.t("pl-no-source"))) ")"
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `POST …/plants/{key}/inspection`: `ipm::service::create_inspection` of this plant.
#[handler]
pub(super) async fn inspection_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((o, posted)) = small_form(req, depot, res).await else {
        return;
    };
    let Some((key, plant)) = form_plant(req, res, &o).await else {
        return;
    };
    let outcome = async {
        let mut map = posted.object(&[("pressure_level", Field::Text), ("notes", Field::Optional)]);
        map.insert("plant_key".into(), Value::String(plant.key.to_string()));
        if let Some(s) = posted.get("symptom").filter(|s| !s.trim().is_empty()) {
            map.insert("symptoms_observed".into(), json!([s]));
        }
        let new: crate::garden::ipm::model::NewInspection = parse(map)?;
        crate::garden::ipm::service::create_inspection(
            &o.ctx.state,
            &o.garden.tenant,
            &new,
            &o.actor(),
            true,
        )
        .await
        .map(|_| ())
    }
    .await;
    after(
        req,
        res,
        &o,
        &key,
        "inspection",
        "inspected",
        &posted,
        outcome,
    )
    .await;
}

/// `POST …/plants/{key}/treatment`: `ipm::service::apply_treatment` to this plant; the page
/// then shows the safety interval it started (days, last blocked day, source).
#[handler]
pub(super) async fn treatment_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((o, posted)) = small_form(req, depot, res).await else {
        return;
    };
    let Some((key, plant)) = form_plant(req, res, &o).await else {
        return;
    };
    let outcome = async {
        let mut map = posted.object(&[
            ("treatment_key", Field::Text),
            ("dose", Field::Number),
            ("dose_unit", Field::Optional),
            ("notes", Field::Optional),
            ("acknowledge_resistance", Field::Checkbox),
        ]);
        map.insert("plant_keys".into(), json!([plant.key]));
        let new: crate::garden::ipm::model::NewApplication = parse(map)?;
        crate::garden::ipm::service::apply_treatment(
            &o.ctx.state,
            &o.garden.tenant,
            &new,
            &o.actor(),
            true,
        )
        .await
        .map(|_| ())
    }
    .await;
    after(req, res, &o, &key, "treatment", "treated", &posted, outcome).await;
}
