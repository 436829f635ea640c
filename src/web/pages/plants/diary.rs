//! A plant's diary: entries, photos and the entry form; photo renditions for the pages.

use super::*;

pub(super) const ENTRY_TYPES: &[&str] = &[
    "note",
    "observation",
    "measurement",
    "care",
    "problem",
    "harvest",
    "milestone",
];

pub(super) fn diary_section(
    o: &Open,
    d: &PlantData,
    base: &str,
    can_write: bool,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let lang = o.lang();
    let f = failed.and_then(|f| f.of("diary"));
    let chosen = match typed(f, "entry_type") {
        "" => "observation",
        t => t,
    };
    html! {
        section.card aria-labelledby="sec-diary" id="diary" {
            h2 id="sec-diary" { (lang.t("pl-diary")) }
            @if can_write {
                (form_box(&lang.t("pl-diary-add"), f.is_some(), html! {
                    (failure_notice(f))
                    form.stack method="post" action=(format!("{base}/diary")) enctype="multipart/form-data" {
                        (csrf_field(&o.csrf))
                        label for="title" { (lang.t("pl-title")) }
                        input type="text" id="title" name="title" maxlength="200" value=(typed(f, "title"));
                        label for="text" { (lang.t("pl-text")) }
                        textarea id="text" name="text" rows="3" required { (typed(f, "text")) }
                        label for="entry_type" { (lang.t("pl-entry-type")) }
                        select id="entry_type" name="entry_type" {
                            @for t in ENTRY_TYPES {
                                option value=(t) selected[chosen == *t] { (choice_text(lang, "pl-entry", t)) }
                            }
                        }
                        label for="photo" { (lang.t("pl-photos")) }
                        input type="file" id="photo" name="photo" accept="image/*" capture="environment" multiple;
                        p.meta { (lang.t("pl-photos-hint")) }
                        button type="submit" { (lang.t("pl-save")) }
                    }
                }))
            }
            @if d.diary.is_empty() {
                p.empty { (lang.t("pl-diary-none")) }
            } @else {
                ul.items {
                    @for (e, photos) in &d.diary {
                        li {
                            span.what {
                                strong { (e.title.clone().unwrap_or_else(|| choice_text(lang, "pl-entry", crate::garden::diary::model::entry_type_str(e.entry_type)))) }
                                br;
                                span.meta { (lang.iso_date(&e.entry_date)) }
                            }
                            @if !photos.is_empty() {
                                div.photos {
                                    @for (i, ph) in photos.iter().enumerate() {
                                        @if ph.renditions.contains(&512) {
                                            img src=(format!("/app/g/{}/photos/{}/512", o.slug, ph.key))
                                                alt=(lang.t_with("pl-photo-alt", &[("n", (i as i64 + 1).into())]))
                                                width="160" height="120" loading="lazy";
                                        } @else {
                                            span.pending { (lang.t("pl-photo-pending")) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `POST …/plants/{key}/diary` (multipart): `diary::service::create_entry`, then each photo
/// through `photos::service::upload` (the REST upload's checks and limits). The photos' types
/// are checked before the entry is written; should an upload still be refused, the entry goes
/// again (`delete_entry`), so a refused form leaves nothing.
#[handler]
pub(super) async fn diary_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let max = match depot.app_state() {
        Ok(s) => s.config().photo_max_upload_bytes,
        Err(e) => return fail(req, res, crate::web::session::visitor_lang(req), e),
    };
    let Some((o, posted)) = open_post(req, depot, res, max).await else {
        return;
    };
    let Some((key, plant)) = form_plant(req, res, &o).await else {
        return;
    };
    let state = &o.ctx.state;
    let tenant = &o.garden.tenant;
    let outcome = async {
        let mut map = posted.object(&[
            ("title", Field::Optional),
            ("text", Field::Text),
            ("entry_type", Field::Optional),
        ]);
        map.insert("plant_key".into(), Value::String(plant.key.to_string()));
        let new: crate::garden::diary::model::EntryInput = parse(map)?;
        let photos: Vec<_> = posted.files("photo").collect();
        for p in &photos {
            crate::garden::photos::service::declared_format(p.content_type.as_deref())?;
        }
        let author = crate::garden::diary::service::Author {
            id: o.user,
            kind: "user",
            via: "rest",
        };
        let entry =
            crate::garden::diary::service::create_entry(state, tenant, &new, &author, true).await?;
        let editor = crate::garden::diary::service::Editor {
            id: o.user,
            admin: o.garden.role == Role::Admin,
        };
        let entry_key = entry.key.to_string();
        for p in photos {
            if let Err(e) = crate::garden::photos::service::upload(
                state,
                tenant,
                &entry_key,
                p.content_type.as_deref(),
                p.bytes.clone(),
                &editor,
            )
            .await
            {
                if let Err(undo) =
                    crate::garden::diary::service::delete_entry(state, tenant, &entry_key, &editor)
                        .await
                {
                    tracing::warn!(error = %undo, "web: a diary entry whose photo was refused stays");
                }
                // A picture the checks refuse is named as the form's photo field.
                return Err(if e.code() == ErrorCode::ValidationError {
                    AppError::validation(vec![crate::error::ErrorDetail::new(
                        "photo",
                        e.to_string(),
                        "value_error",
                    )])
                } else {
                    e
                });
            }
        }
        Ok(())
    }
    .await;
    after(req, res, &o, &key, "diary", "noted", &posted, outcome).await;
}

/// `GET /app/g/{slug}/photos/{photo_key}/{512|1280}`: a photo's rendition for the pages (the
/// session's cookie, not a bearer token): `photos::service::rendition`, as the REST route.
#[handler]
pub(super) async fn photo_get(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(o) = open_get(req, depot, res).await else {
        return;
    };
    let size = match req.param::<String>("size").as_deref() {
        Some("512") => 512,
        Some("1280") => 1280,
        _ => return o.fail(req, res, AppError::not_found("photo")),
    };
    let key = req.param::<String>("photo_key").unwrap_or_default();
    match crate::garden::photos::service::rendition(&o.ctx.state, &o.garden.tenant, &key, size)
        .await
    {
        Ok(bytes) => {
            res.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("image/webp"));
            res.headers_mut().insert(
                CACHE_CONTROL,
                HeaderValue::from_static("private, max-age=3600"),
            );
            res.status_code(StatusCode::OK);
            let _ = res.write_body(bytes);
        }
        Err(e) => o.fail(req, res, e),
    }
}
