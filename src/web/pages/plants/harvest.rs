//! A plant's harvests: readiness, batches and the harvest form (the safety interval's gate).

use super::*;

pub(super) fn harvest_section(
    o: &Open,
    d: &PlantData,
    base: &str,
    can_write: bool,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let lang = o.lang();
    let f = failed.and_then(|f| f.of("harvest"));
    let karenz = f.is_some_and(|f| {
        f.lines
            .first()
            .is_some_and(|l| *l == lang.t("pl-err-karenz"))
    });
    html! {
        section.card aria-labelledby="sec-harvest" id="harvest" {
            h2 id="sec-harvest" { (lang.t("pl-harvests")) }
            @if can_write {
                (form_box(&lang.t("pl-harvest-add"), f.is_some(), html! {
                    @if karenz {
                        div.notice.bad role="alert" {
                            p { strong { (lang.t("pl-harvest-refused")) } }
                            @for i in &d.readiness.safety_intervals {
                                p {
                                    (lang.t_with("pl-karenz-line", &[
                                        ("treatment", i.treatment_name.clone().into()),
                                        ("days", i.days_remaining.into()),
                                        ("until", lang.iso_date(&i.last_blocked_day).into()),
                                        ("from", lang.iso_date(&i.safe_on).into()),
                                    ]))
                                }
                            }
                            @if let Some(f) = f {
                                details {
                                    summary { (lang.t("pl-details")) }
                                    ul.reasons { @for r in &f.details { li { (r) } } }
                                }
                            }
                        }
                    } @else {
                        (failure_notice(f))
                    }
                    form.stack method="post" action=(format!("{base}/harvest")) {
                        (csrf_field(&o.csrf))
                        label for="wet_weight_g" { (lang.t("pl-wet-weight")) }
                        input type="text" inputmode="decimal" id="wet_weight_g" name="wet_weight_g" required value=(typed(f, "wet_weight_g"));
                        label for="harvest_type" { (lang.t("pl-harvest-type")) }
                        select id="harvest_type" name="harvest_type" {
                            @for h in crate::garden::harvest::model::HARVEST_TYPES {
                                option value=(h) selected[typed(f, "harvest_type") == *h || (typed(f, "harvest_type").is_empty() && *h == "partial")] { (choice_text(lang, "pl-harvest-type", h)) }
                            }
                        }
                        label for="h-notes" { (lang.t("pl-notes")) }
                        textarea id="h-notes" name="notes" rows="2" { (typed(f, "notes")) }
                        button type="submit" { (lang.t("pl-save")) }
                    }
                }))
            }
            @if d.batches.is_empty() {
                p.empty { (lang.t("pl-harvests-none")) }
            } @else {
                ul.items {
                    @for b in &d.batches {
                        li {
                            span.what { (num(lang, b.wet_weight_g)) " g · " (b.label) }
                            span.meta { (lang.iso_date(&b.harvest_date)) }
                        }
                    }
                }
            }
        }
    }
}

/// `POST …/plants/{key}/harvest`: `harvest::service::create_batch`; inside a safety interval
/// the service refuses (`KARENZ_VIOLATION`) and the page says until when, with the days left.
#[handler]
pub(super) async fn harvest_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((o, posted)) = small_form(req, depot, res).await else {
        return;
    };
    let Some((key, plant)) = form_plant(req, res, &o).await else {
        return;
    };
    let outcome = async {
        let mut map = posted.object(&[
            ("wet_weight_g", Field::Number),
            ("harvest_type", Field::Optional),
            ("notes", Field::Optional),
        ]);
        map.insert("plant_key".into(), Value::String(plant.key.to_string()));
        let new: crate::garden::harvest::model::NewBatch = parse(map)?;
        crate::garden::harvest::service::create_batch(
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
    after(req, res, &o, &key, "harvest", "harvested", &posted, outcome).await;
}
