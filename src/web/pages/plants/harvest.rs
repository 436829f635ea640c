//! A plant's harvests: readiness, batches and the harvest form (the safety interval's gate);
//! the form's fields, its body and the gate's refusal are the harvests page's (`pages::harvests`).

use super::*;
use crate::web::pages::harvests::{batch_body, batch_fields, karenz_refusal};

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
                        (karenz_refusal(lang, &d.readiness.safety_intervals, f.map_or(&[][..], |f| f.details.as_slice())))
                    } @else {
                        (failure_notice(f))
                    }
                    form.stack method="post" action=(format!("{base}/harvest")) {
                        (csrf_field(&o.csrf))
                        (batch_fields(lang, &|name| typed(f, name).to_owned()))
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
        let mut map = batch_body(&posted);
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
