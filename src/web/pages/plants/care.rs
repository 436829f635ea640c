//! A plant's care: its due reminders, waterings and the watering form.

use super::*;

pub(super) fn care_section(o: &Open, d: &PlantData) -> Markup {
    let lang = o.lang();
    html! {
        section.card aria-labelledby="sec-care" id="care" {
            h2 id="sec-care" { (lang.t("pl-care-log")) }
            @if d.care.is_empty() {
                p.empty { (lang.t("pl-care-none")) }
            } @else {
                ul.items {
                    @for c in &d.care {
                        li {
                            span.what { (care_type_text(lang, &c.reminder_type)) " · " (choice_text(lang, "pl-care-action", &c.action)) }
                            span.meta { (lang.iso_date(&c.confirmed_on)) }
                        }
                    }
                }
            }
        }
    }
}

pub(super) fn watering_section(
    o: &Open,
    d: &PlantData,
    base: &str,
    can_write: bool,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let lang = o.lang();
    let f = failed.and_then(|f| f.of("watering"));
    html! {
        section.card aria-labelledby="sec-water" id="watering" {
            h2 id="sec-water" { (lang.t("pl-watering")) }
            @if can_write {
                (form_box(&lang.t("pl-watering-add"), f.is_some(), html! {
                    (failure_notice(f))
                    form.stack method="post" action=(format!("{base}/watering")) {
                        (csrf_field(&o.csrf))
                        label for="volume_liters" { (lang.t("pl-volume")) }
                        input type="text" inputmode="decimal" id="volume_liters" name="volume_liters" required value=(typed(f, "volume_liters"));
                        label for="fertilizer_key" { (lang.t("pl-fertilizer")) }
                        select id="fertilizer_key" name="fertilizer_key" {
                            option value="" { (lang.t("pl-fertilizer-none")) }
                            @for (k, n) in &d.fertilizers {
                                option value=(k) selected[typed(f, "fertilizer_key") == k] { (n) }
                            }
                        }
                        label for="ml_applied" { (lang.t("pl-fertilizer-amount")) }
                        input type="text" inputmode="decimal" id="ml_applied" name="ml_applied" value=(typed(f, "ml_applied"));
                        label for="ec_after_ms" { (lang.t("pl-ec")) }
                        input type="text" inputmode="decimal" id="ec_after_ms" name="ec_after_ms" value=(typed(f, "ec_after_ms"));
                        label for="ph_after" { (lang.t("pl-ph")) }
                        input type="text" inputmode="decimal" id="ph_after" name="ph_after" value=(typed(f, "ph_after"));
                        label for="w-notes" { (lang.t("pl-notes")) }
                        textarea id="w-notes" name="notes" rows="2" { (typed(f, "notes")) }
                        button type="submit" { (lang.t("pl-save")) }
                    }
                }))
            }
            @if d.waterings.is_empty() {
                p.empty { (lang.t("pl-watering-none")) }
            } @else {
                ul.items {
                    @for w in &d.waterings {
                        li {
                            span.what {
                                (choice_text(lang, "pl-kind", &w.kind)) " · " (num(lang, w.volume_liters)) " l"
                                @for u in &w.fertilizers_used {
                                    " · " (d.fertilizers.iter().find(|(k, _)| *k == u.fertilizer_key).map_or(u.fertilizer_key.as_str(), |(_, n)| n.as_str()))
                                    " " (num(lang, u.ml_applied)) " ml"
                                }
                            }
                            span.meta {
                                (local_stamp(lang, &o.tz, w.occurred_at))
                                @if let Some(ec) = w.fed_ec() { " · EC " (num(lang, ec)) }
                                @if let Some(ph) = w.ph_after.or(w.ph_before) { " · pH " (num(lang, ph)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `POST …/plants/{key}/watering`: `watering::service::record_event` for this plant, with one
/// fertiliser and its amount when chosen (a feeding).
#[handler]
pub(super) async fn watering_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((o, posted)) = small_form(req, depot, res).await else {
        return;
    };
    let Some((key, plant)) = form_plant(req, res, &o).await else {
        return;
    };
    let outcome = async {
        let mut map = posted.object(&[
            ("volume_liters", Field::Number),
            ("ec_after_ms", Field::Number),
            ("ph_after", Field::Number),
            ("notes", Field::Optional),
        ]);
        map.insert("plant_keys".into(), json!([plant.key]));
        if let Some(fert) = posted
            .get("fertilizer_key")
            .filter(|k| !k.trim().is_empty())
        {
            let amount = posted.object(&[("ml_applied", Field::Number)]);
            let mut used = Map::new();
            used.insert("fertilizer_key".into(), Value::String(fert.to_owned()));
            if let Some(ml) = amount.get("ml_applied") {
                used.insert("ml_applied".into(), ml.clone());
            }
            map.insert("fertilizers_used".into(), json!([used]));
        }
        let new: crate::garden::watering::model::NewWateringEvent = parse(map)?;
        crate::garden::watering::service::record_event(
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
    after(req, res, &o, &key, "watering", "watered", &posted, outcome).await;
}
