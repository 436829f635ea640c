//! The diary list's filters read from query values by name: one reader for the REST query and
//! the diary page's filter form, so both refuse the same values with the same details.

use time::Date;

use super::model::{EntryFilter, TAG_MAX, parse_entry_type};
use crate::error::{AppError, ErrorDetail};
use crate::rules::diary_analysis::AnalysisState;
use crate::values::json::is_blank;

fn query_error(name: &str, reason: &str) -> ErrorDetail {
    ErrorDetail::new(format!("query.{name}"), reason, "value_error")
}

/// The list filters from query values by name (the REST query; the diary page passes its
/// filter form's, leaving out those left empty); every bad one is its own detail.
pub fn filter_of(q: &dyn Fn(&str) -> Option<String>) -> Result<EntryFilter, AppError> {
    let mut errors = Vec::new();
    let mut f = EntryFilter::default();
    for (name, slot) in [("plant", &mut f.plant), ("run", &mut f.run)] {
        if let Some(raw) = q(name) {
            match crate::garden::plants::model::parse_key(&raw) {
                Some(k) => *slot = Some(k),
                None => errors.push(query_error(name, "must be a key (UUID)")),
            }
        }
    }
    // Text filters are checked as sent, as the document states them (the single-line pattern:
    // one visible character, no control characters), then trimmed.
    let line_ok = |s: &str, max: usize| {
        !s.trim_matches(is_blank).is_empty()
            && s.chars().count() <= max
            && !s.chars().any(char::is_control)
    };
    if let Some(s) = q("species") {
        let t = s.trim_matches(is_blank);
        if !line_ok(&s, 100) {
            errors.push(query_error(
                "species",
                "must be a species key of 1 to 100 characters",
            ));
        } else {
            f.species = Some(t.to_owned());
        }
    }
    if let Some(s) = q("entry_type") {
        f.entry_type = parse_entry_type(&s);
        if f.entry_type.is_none() {
            errors.push(query_error(
                "entry_type",
                "must be one of: observation, measurement, care, problem, harvest, milestone, note",
            ));
        }
    }
    if let Some(s) = q("tag") {
        let t = s.trim_matches(is_blank).to_lowercase();
        if !line_ok(&s, TAG_MAX) {
            errors.push(query_error("tag", "must be a tag of 1 to 50 characters"));
        } else {
            f.tag = Some(t);
        }
    }
    if let Some(s) = q("analysis_state") {
        f.analysis_state = AnalysisState::parse(&s);
        if f.analysis_state.is_none() {
            errors.push(query_error(
                "analysis_state",
                "must be one of: requested, in_progress, completed, failed",
            ));
        }
    }
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    for (name, slot) in [("from", &mut f.from), ("to", &mut f.to)] {
        if let Some(raw) = q(name) {
            *slot = Date::parse(&raw, &fmt).ok();
            if slot.is_none() {
                errors.push(query_error(name, "must be a date YYYY-MM-DD"));
            }
        }
    }
    if errors.is_empty()
        && let (Some(a), Some(b)) = (f.from, f.to)
        && a > b
    {
        errors.push(query_error("to", "must not lie before from"));
    }
    if errors.is_empty() {
        Ok(f)
    } else {
        Err(AppError::validation(errors))
    }
}
