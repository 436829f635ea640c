//! Import use cases: check a CSV against the kind's field table and the catalogue (preview),
//! and apply a checked file in one transaction (confirm). The CSV columns are the seed
//! file's fields: references by name, lists separated by `;`, objects as JSON.

use std::collections::HashMap;

use serde_json::{Map, Value};
use sqlx::PgConnection;
use uuid::Uuid;

use super::csv;
use super::model::{
    ImportJob, ImportStatus, ImportSummary, KINDS, MAX_ROWS, RowError, RowPlan, Upload,
};
use super::repo;
use crate::catalog::engine::fields::Kind;
use crate::catalog::engine::service::{Upserted, natural_key, plan_upsert};
use crate::catalog::seed::load::{SeedError, index, load_in};
use crate::catalog::seed::validate::{SeedRecord, ValidSeed, reference_name, to_doc};
use crate::catalog::seed::{FILES, SeedFile};
use crate::error::{AppError, ErrorCode, ErrorDetail};
use crate::rules::names::normalise;
use crate::state::AppState;
use crate::values::page::{Page, PageRequest};

fn csv_error(reason: impl Into<String>) -> AppError {
    AppError::validation(vec![ErrorDetail::new("body.csv", reason, "value_error")])
}

fn file_of(kind: &str) -> Result<&'static SeedFile, AppError> {
    KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .and_then(|(_, f)| FILES.iter().find(|s| s.file == *f))
        .ok_or_else(|| AppError::internal(format!("no seed file for import kind {kind}")))
}

/// A cell as the value its column's field expects; an empty cell is absent.
fn cell(kind: Option<Kind>, raw: &str) -> Option<Value> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    let list = |raw: &str| {
        raw.split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect::<Vec<_>>()
    };
    Some(match kind {
        Some(Kind::Int(..)) => raw
            .parse::<i64>()
            .map_or_else(|_| Value::from(raw), Value::from),
        Some(Kind::Num(..)) => raw
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::from(raw), Value::Number),
        Some(Kind::Bool) => match raw.to_ascii_lowercase().as_str() {
            "true" | "yes" => Value::Bool(true),
            "false" | "no" => Value::Bool(false),
            _ => Value::from(raw),
        },
        Some(Kind::TextList { .. } | Kind::EnumList(_) | Kind::RefList(..)) => {
            Value::from(list(raw))
        }
        Some(Kind::Months) => Value::Array(
            list(raw)
                .into_iter()
                .map(|m| {
                    m.parse::<i64>()
                        .map_or_else(|_| Value::from(m), Value::from)
                })
                .collect(),
        ),
        Some(Kind::Object(_) | Kind::ObjectList(..)) => {
            serde_json::from_str(raw).unwrap_or_else(|_| Value::from(raw))
        }
        _ => Value::from(raw),
    })
}

/// A checked file: its records, the problems per row and what confirming would do.
struct Checked {
    records: Vec<SeedRecord>,
    rows: usize,
    errors: Vec<RowError>,
    preview: Vec<RowPlan>,
}

fn row_of(label: &str) -> usize {
    label
        .strip_prefix("row ")
        .and_then(|r| r.split(' ').next())
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

async fn check(
    db: &mut PgConnection,
    file: &'static SeedFile,
    text: &str,
) -> Result<Checked, AppError> {
    let spec = file.spec;
    let rows =
        csv::parse(text).map_err(|line| csv_error(format!("malformed quoting on line {line}")))?;
    let Some((header, data)) = rows.split_first() else {
        return Err(csv_error("the file needs a header row"));
    };
    if data.len() > MAX_ROWS {
        return Err(csv_error(format!("at most {MAX_ROWS} rows per file")));
    }
    // Columns: the seed file's field names (references by their seed name).
    let column_kind = |c: &str| -> Option<Option<Kind>> {
        if spec.kind == "species" && c == "phase_sequence" {
            return Some(None);
        }
        spec.fields
            .iter()
            .filter(|f| !f.read_only)
            .find(|f| f.seed_name.unwrap_or(f.name) == c)
            .map(|f| Some(f.kind))
    };
    let mut problems = Vec::new();
    for (i, c) in header.iter().enumerate() {
        if column_kind(c.trim()).is_none() {
            problems.push(ErrorDetail::new(
                "body.csv",
                format!("unknown column {c:?}"),
                "value_error",
            ));
        } else if header[..i].iter().any(|o| o.trim() == c.trim()) {
            problems.push(ErrorDetail::new(
                "body.csv",
                format!("column {c:?} appears twice"),
                "value_error",
            ));
        }
    }
    if !problems.is_empty() {
        return Err(AppError::validation(problems));
    }
    let mut errors = Vec::new();
    let mut records = Vec::new();
    for (i, row) in data.iter().enumerate() {
        let n = i + 2;
        if row.len() != header.len() {
            errors.push(RowError {
                row: n,
                message: format!("has {} cells, the header {}", row.len(), header.len()),
            });
            continue;
        }
        let mut seed = Map::new();
        for (c, raw) in header.iter().zip(row) {
            let c = c.trim();
            if let Some(v) = cell(column_kind(c).flatten(), raw) {
                seed.insert(c.to_owned(), v);
            }
        }
        let binding = seed
            .get("phase_sequence")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .filter(|_| spec.kind == "species");
        let name = reference_name(spec, &seed).unwrap_or_default();
        records.push(SeedRecord {
            seed,
            label: format!("row {n} {name}"),
            binding,
        });
    }
    // References resolve against the catalogue, and against this file for its own kind.
    let mut known = index(db).await?;
    for (i, r) in records.iter().enumerate() {
        if let Some(name) = reference_name(spec, &r.seed) {
            known
                .entry((spec.kind.to_owned(), name))
                .or_insert_with(|| Uuid::from_u128(i as u128 + 1));
        }
    }
    let resolve = |kind: &str, name: &str| known.get(&(kind.to_owned(), name.to_owned())).copied();
    let mut preview = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for r in &records {
        let row = row_of(&r.label);
        let mut problems = Vec::new();
        let doc = to_doc(spec, r, &resolve, &mut problems);
        if let Some(b) = &r.binding
            && resolve("phase_sequence", &normalise(b)).is_none()
        {
            problems.push(format!("{}: unknown phase_sequence {b:?}", r.label));
        }
        let prefix = format!("{}: ", r.label);
        errors.extend(problems.iter().map(|p| RowError {
            row,
            message: p.strip_prefix(&prefix).unwrap_or(p).to_owned(),
        }));
        let Some(doc) = doc.filter(|_| problems.is_empty()) else {
            continue;
        };
        let (name, norm) = natural_key(spec, &doc)?;
        if let Some(first) = seen.insert(norm, row) {
            errors.push(RowError {
                row,
                message: format!(
                    "the same record as row {first} (names compare lower-case, × = x)"
                ),
            });
            continue;
        }
        let action = match plan_upsert(db, spec, &doc).await?.0 {
            Upserted::Created => "create",
            Upserted::Updated => "update",
            Upserted::Unchanged => "unchanged",
        };
        preview.push(RowPlan {
            row,
            name,
            action: action.to_owned(),
        });
    }
    errors.sort_by_key(|e| e.row);
    Ok(Checked {
        records,
        rows: data.len(),
        errors,
        preview,
    })
}

/// Checks an uploaded file and keeps it with its preview; nothing is imported yet.
pub async fn upload(state: &AppState, upload: &Upload) -> Result<ImportJob, AppError> {
    let file = file_of(&upload.kind)?;
    let mut db = state.platform_pool().acquire().await?;
    let checked = check(&mut db, file, &upload.csv).await?;
    let job = ImportJob {
        key: Uuid::now_v7(),
        kind: upload.kind.clone(),
        status: ImportStatus::Previewed,
        rows: checked.rows,
        valid: checked.errors.is_empty(),
        errors: checked.errors,
        preview: checked.preview,
        summary: None,
        created_at: time::OffsetDateTime::now_utc(),
        confirmed_at: None,
    };
    Ok(repo::insert(&mut db, &job, &upload.csv).await?)
}

/// Applies a previewed file in one transaction: checked again against the catalogue as it is
/// now; any bad row refuses the whole file (422) and nothing is written.
pub async fn confirm(state: &AppState, key: &str) -> Result<ImportJob, AppError> {
    let id = Uuid::parse_str(key).map_err(|_| AppError::not_found("import"))?;
    let mut tx = state.platform_pool().begin().await?;
    let (job, text) = repo::get_for_update(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::not_found("import"))?;
    if job.status == ImportStatus::Confirmed {
        return Err(AppError::new(
            ErrorCode::StateConflict,
            "this import was confirmed already",
        ));
    }
    let file = file_of(&job.kind)?;
    let checked = check(&mut tx, file, &text).await?;
    if !checked.errors.is_empty() {
        let details = checked
            .errors
            .iter()
            .map(|e| {
                ErrorDetail::new(
                    format!("csv.row[{}]", e.row),
                    e.message.clone(),
                    "value_error",
                )
            })
            .collect();
        return Err(AppError::validation(details));
    }
    let seed = ValidSeed {
        files: vec![(file, checked.records)],
    };
    let report = load_in(&mut tx, &seed).await.map_err(|e| match e {
        SeedError::Store(e) => e,
        SeedError::Invalid(problems) => AppError::validation(
            problems
                .into_iter()
                .map(|p| ErrorDetail::new("body.csv", p, "value_error"))
                .collect(),
        ),
    })?;
    let (_, created, updated, unchanged) = report
        .files
        .first()
        .copied()
        .unwrap_or((file.file, 0, 0, 0));
    let summary = ImportSummary {
        created,
        updated,
        unchanged,
    };
    let job = repo::confirm(
        &mut tx,
        id,
        &serde_json::to_value(&summary).map_err(AppError::internal)?,
    )
    .await?;
    tx.commit().await?;
    state.caches().forget_catalog();
    tracing::info!(import = %id, kind = %job.kind, created, updated, unchanged, "catalogue import confirmed");
    Ok(job)
}

pub async fn get(state: &AppState, key: &str) -> Result<ImportJob, AppError> {
    let id = Uuid::parse_str(key).map_err(|_| AppError::not_found("import"))?;
    let mut db = state.platform_pool().acquire().await?;
    repo::get(&mut db, id)
        .await?
        .ok_or_else(|| AppError::not_found("import"))
}

pub async fn list(state: &AppState, page: PageRequest) -> Result<Page<ImportJob>, AppError> {
    let mut db = state.platform_pool().acquire().await?;
    let total = repo::count(&mut db).await?;
    let items = if total > page.skip {
        repo::list(&mut db, page).await?
    } else {
        Vec::new()
    };
    Ok(Page::new(items, total, page))
}
