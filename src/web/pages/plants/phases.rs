//! A plant's phases: where it stands, its history, and the transition form.

use super::*;

pub(super) fn phase_section(
    o: &Open,
    d: &PlantData,
    base: &str,
    can_write: bool,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let lang = o.lang();
    let f = failed.and_then(|f| f.of("phase"));
    let next = d
        .plant
        .phase
        .as_ref()
        .and_then(|ph| ph.next_phase_key.clone());
    let chosen = match typed(f, "target_phase_key") {
        "" => next.clone().unwrap_or_default(),
        t => t.to_owned(),
    };
    html! {
        section.card aria-labelledby="sec-phase" id="phase" {
            h2 id="sec-phase" { (lang.t("pl-phase")) }
            @if let Some(ph) = &d.plant.phase {
                p {
                    strong { (phase_name(d, &ph.phase_key)) } " · "
                    (lang.t_with("pl-phase-days", &[("days", ph.day_count.into()), ("expected", ph.expected_duration_days.into())]))
                }
            } @else {
                p.empty { (lang.t("pl-phase-none")) }
            }
            @if !d.history.is_empty() {
                h3 { (lang.t("pl-timeline")) }
                ol.timeline {
                    @for h in &d.history {
                        li {
                            strong { (d.phase_names.get(&h.phase_key).unwrap_or(&h.phase_name)) }
                            " · " (lang.date(local_day(&o.tz, h.entered_at)))
                            @if let Some(out) = h.exited_at { " – " (lang.date(local_day(&o.tz, out))) }
                            " · " (lang.t_with("pl-days", &[("days", h.duration_days.into())]))
                            @if let Some(w) = &h.warning { br; span.meta { (w) } }
                        }
                    }
                }
            }
            @if can_write && !d.status.allowed_targets.is_empty() {
                (failure_notice(f))
                form.stack method="post" action=(format!("{base}/phase")) {
                    (csrf_field(&o.csrf))
                    label for="target_phase_key" { (lang.t("pl-phase-target")) }
                    select id="target_phase_key" name="target_phase_key" {
                        @for k in &d.status.allowed_targets {
                            option value=(k) selected[&chosen == k] {
                                (phase_name(d, k))
                                @if next.as_deref() == Some(k.as_str()) { " (" (lang.t("pl-phase-next")) ")" }
                            }
                        }
                    }
                    button type="submit" { (lang.t("pl-phase-move")) }
                }
            }
        }
    }
}

/// `POST …/plants/{key}/phase` (`target_phase_key`): `plants::service::transition`.
#[handler]
pub(super) async fn phase_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((o, posted)) = small_form(req, depot, res).await else {
        return;
    };
    let Some((key, _)) = form_plant(req, res, &o).await else {
        return;
    };
    let outcome = async {
        let body: crate::garden::plants::model::TransitionBody =
            parse(posted.object(&[("target_phase_key", Field::Text)]))?;
        crate::garden::plants::service::transition(
            &o.ctx.state,
            &o.garden.tenant,
            &key,
            &body,
            &o.actor(),
            true,
        )
        .await
        .map(|_| ())
    }
    .await;
    after(req, res, &o, &key, "phase", "moved", &posted, outcome).await;
}
