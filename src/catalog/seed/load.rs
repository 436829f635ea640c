//! Loading a validated seed: one transaction (a bad record never leaves half a seed behind),
//! serialised by an advisory lock, upserting every record by natural key. Unchanged records
//! are not written, so a second run changes nothing.

use std::collections::HashMap;

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::validate::{ValidSeed, reference_name, to_doc, validate};
use super::{FILES, SeedSet};
use crate::catalog::engine::fields::Kind;
use crate::catalog::engine::service::{Upserted, upsert};
use crate::catalog::engine::{repo, spec::KindSpec};
use crate::catalog::species::service::BINDING;
use crate::error::AppError;
use crate::progress::Progress;
use crate::rules::names::normalise;
use crate::state::AppState;

/// What a seed run did, per file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// (file, created, updated, unchanged)
    pub files: Vec<(&'static str, usize, usize, usize)>,
    pub bindings_changed: usize,
}

impl Report {
    pub fn written(&self) -> usize {
        self.files.iter().map(|(_, c, u, _)| c + u).sum::<usize>() + self.bindings_changed
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error("the seed data is invalid ({} problem(s)): {}", .0.len(), .0.join("; "))]
    Invalid(Vec<String>),
    #[error("{0}")]
    Store(#[from] AppError),
}

impl From<sqlx::Error> for SeedError {
    fn from(e: sqlx::Error) -> Self {
        Self::Store(e.into())
    }
}

/// Every referenceable record of the kinds the seed touches: (kind, normalised name) → key.
pub type Index = HashMap<(String, String), Uuid>;

/// Builds the [`Index`].
pub async fn index(db: &mut PgConnection) -> Result<Index, sqlx::Error> {
    let mut out = HashMap::new();
    for f in FILES {
        for (norm, id) in repo::names(db, f.spec.kind).await? {
            out.insert((f.spec.kind.to_owned(), norm), id);
        }
    }
    Ok(out)
}

/// The fields of a kind that reference the kind itself (a treatment's contraindications).
fn self_refs(spec: &KindSpec) -> Vec<(&'static str, &'static str)> {
    spec.fields
        .iter()
        .filter_map(|f| match (f.kind, f.seed_name) {
            (Kind::RefList(t, _) | Kind::Ref(t), Some(seed)) if t == spec.kind => {
                Some((f.name, seed))
            }
            _ => None,
        })
        .collect()
}

pub async fn load(state: &AppState, set: &SeedSet) -> Result<Report, SeedError> {
    load_with(state, set, |_| None).await
}

/// As [`load`], reporting each record to a progress made by `progress(total)` once the set is
/// valid (`None`: no progress); the progress is finished here.
pub async fn load_with(
    state: &AppState,
    set: &SeedSet,
    progress: impl FnOnce(u64) -> Option<Progress>,
) -> Result<Report, SeedError> {
    let seed = validate(set).map_err(SeedError::Invalid)?;
    let total: usize = seed.files.iter().map(|(_, records)| records.len()).sum();
    let progress = progress(total as u64);
    let loaded = async {
        let mut tx = state.platform_pool().begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtext('kultiva.catalog.seed'))")
            .execute(&mut *tx)
            .await?;
        let report = load_in_with(&mut tx, &seed, progress.as_ref()).await?;
        tx.commit().await?;
        Ok::<_, SeedError>(report)
    }
    .await;
    if let Some(progress) = &progress {
        progress.finish(match &loaded {
            Ok(report) => format!("{} record(s) written", report.written()),
            Err(_) => "failed; nothing was written".to_owned(),
        });
    }
    let report = loaded?;
    state.caches().forget_catalog();
    Ok(report)
}

pub async fn load_in(db: &mut PgConnection, seed: &ValidSeed) -> Result<Report, SeedError> {
    load_in_with(db, seed, None).await
}

async fn load_in_with(
    db: &mut PgConnection,
    seed: &ValidSeed,
    progress: Option<&Progress>,
) -> Result<Report, SeedError> {
    let mut report = Report::default();
    let mut ids = index(db).await?;
    for (file, records) in &seed.files {
        let spec = file.spec;
        if let Some(progress) = progress {
            progress.set_message(file.file);
        }
        let (mut created, mut updated, mut unchanged) = (0, 0, 0);
        // Records that reference their own kind: first make the missing ones exist without
        // those references, then the full upsert below can resolve them.
        let own = self_refs(spec);
        if !own.is_empty() {
            for r in records {
                let name = reference_name(spec, &r.seed).unwrap_or_default();
                if ids.contains_key(&(spec.kind.to_owned(), name.clone())) {
                    continue;
                }
                let mut bare = r.clone();
                for (_, seed_name) in &own {
                    bare.seed.remove(*seed_name);
                }
                let doc = resolved(spec, &bare, &ids)?;
                let (_, id) = upsert(db, spec, &doc).await?;
                ids.insert((spec.kind.to_owned(), name), id);
            }
        }
        for r in records {
            let doc = resolved(spec, r, &ids)?;
            let (what, id) = upsert(db, spec, &doc).await?;
            match what {
                Upserted::Created => created += 1,
                Upserted::Updated => updated += 1,
                Upserted::Unchanged => unchanged += 1,
            }
            if let Some(name) = reference_name(spec, &r.seed) {
                ids.insert((spec.kind.to_owned(), name), id);
            }
            if let Some(binding) = &r.binding {
                let seq = ids
                    .get(&("phase_sequence".to_owned(), normalise(binding)))
                    .copied()
                    .ok_or_else(|| {
                        SeedError::Invalid(vec![format!(
                            "{}: unknown phase_sequence {binding:?}",
                            r.label
                        )])
                    })?;
                let current: Vec<Uuid> = repo::links_of(db, &[id])
                    .await?
                    .into_iter()
                    .filter(|(_, f, _)| f == BINDING)
                    .map(|(_, _, t)| t)
                    .collect();
                if current != [seq] {
                    repo::set_links(db, id, BINDING, &[seq]).await?;
                    report.bindings_changed += 1;
                }
            }
            if let Some(progress) = progress {
                progress.inc(1);
            }
        }
        report.files.push((file.file, created, updated, unchanged));
    }
    Ok(report)
}

fn resolved(
    spec: &KindSpec,
    record: &super::validate::SeedRecord,
    ids: &HashMap<(String, String), Uuid>,
) -> Result<serde_json::Map<String, Value>, SeedError> {
    let resolve = |kind: &str, name: &str| ids.get(&(kind.to_owned(), name.to_owned())).copied();
    let mut errors = Vec::new();
    let doc = to_doc(spec, record, &resolve, &mut errors);
    doc.filter(|_| errors.is_empty())
        .ok_or(SeedError::Invalid(errors))
}
