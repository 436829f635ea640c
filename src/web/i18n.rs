//! The pages' languages: German and English, texts in Project Fluent files
//! (`src/web/locales/{en,de}.ftl`, compiled into the binary). The language is the signed-in
//! user's `locale` preference, else the `kv_lang` cookie a visitor chose, else the browser's
//! `Accept-Language`, else English. Dates and numbers are written the language's way.

use std::sync::LazyLock;

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use time::Date;
use unic_langid::LanguageIdentifier;

/// A language the pages speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    De,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::De];

    /// The tag written into `<html lang>` and the cookie.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::De => "de",
        }
    }

    /// The language's own name, for the switcher.
    pub fn own_name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::De => "Deutsch",
        }
    }

    /// A language tag such as `de`, `de-AT` or `en-GB`: its primary language, if spoken here.
    pub fn parse(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        match primary.as_str() {
            "en" => Some(Lang::En),
            "de" => Some(Lang::De),
            _ => None,
        }
    }

    /// The best language of an `Accept-Language` header (highest `q` first; ties keep the
    /// header's order), or `None` when it names none spoken here.
    pub fn from_accept_language(header: &str) -> Option<Lang> {
        let mut best: Option<(f32, Lang)> = None;
        for part in header.split(',') {
            let mut pieces = part.split(';');
            let tag = pieces.next().unwrap_or("");
            let q = pieces
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if let Some(lang) = Lang::parse(tag)
                && q > 0.0
                && best.is_none_or(|(b, _)| q > b)
            {
                best = Some((q, lang));
            }
        }
        best.map(|(_, lang)| lang)
    }

    /// A calendar day as the language writes it: `27 Nov 2026`, `27.11.2026`.
    pub fn date(self, day: Date) -> String {
        match self {
            Lang::En => {
                const MONTHS: [&str; 12] = [
                    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                    "Dec",
                ];
                let month = MONTHS[usize::from(u8::from(day.month())) - 1];
                format!("{} {month} {}", day.day(), day.year())
            }
            Lang::De => format!(
                "{:02}.{:02}.{}",
                day.day(),
                u8::from(day.month()),
                day.year()
            ),
        }
    }

    /// A decimal as the language writes it, rounded to at most `places` decimals without
    /// trailing zeros: `1.5`, `1,5`.
    pub fn decimal(self, x: f64, places: usize) -> String {
        let text = format!("{x:.places$}");
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.')
        } else {
            &text
        };
        match self {
            Lang::De => text.replace('.', ","),
            Lang::En => text.to_owned(),
        }
    }

    /// A `YYYY-MM-DD` day as the language writes it (as given when it is not one).
    pub fn iso_date(self, iso: &str) -> String {
        let format = time::macros::format_description!("[year]-[month]-[day]");
        match Date::parse(iso, &format) {
            Ok(day) => self.date(day),
            Err(_) => iso.to_owned(),
        }
    }

    /// A text of the catalogue.
    pub fn t(self, id: &str) -> String {
        self.format(id, None)
    }

    /// A text of the catalogue with arguments.
    pub fn t_with(self, id: &str, args: &[(&str, FluentValue<'_>)]) -> String {
        let mut fluent_args = FluentArgs::new();
        for (name, value) in args {
            fluent_args.set(*name, value.clone());
        }
        self.format(id, Some(&fluent_args))
    }

    fn format(self, id: &str, args: Option<&FluentArgs<'_>>) -> String {
        let bundle = CATALOG.bundle(self);
        let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) else {
            // A missing text shows its id (the unit tests keep both files complete).
            tracing::warn!(id, lang = self.code(), "web text missing");
            return id.to_owned();
        };
        let mut errors = Vec::new();
        let text = bundle.format_pattern(pattern, args, &mut errors);
        text.into_owned()
    }
}

const EN: &str = include_str!("locales/en.ftl");
const DE: &str = include_str!("locales/de.ftl");

struct Catalog {
    en: FluentBundle<FluentResource>,
    de: FluentBundle<FluentResource>,
}

impl Catalog {
    fn bundle(&self, lang: Lang) -> &FluentBundle<FluentResource> {
        match lang {
            Lang::En => &self.en,
            Lang::De => &self.de,
        }
    }
}

fn bundle(tag: &str, source: &'static str) -> FluentBundle<FluentResource> {
    let id: LanguageIdentifier = tag.parse().unwrap_or_default();
    let mut bundle = FluentBundle::new_concurrent(vec![id]);
    // No Unicode isolation marks around arguments: the pages are HTML, escaped by maud.
    bundle.set_use_isolating(false);
    // The files are part of the binary and checked by the unit tests below; a broken entry
    // is left out rather than taking the service down.
    let resource =
        FluentResource::try_new(source.to_owned()).unwrap_or_else(|(partial, _)| partial);
    let _ = bundle.add_resource(resource);
    bundle
}

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| Catalog {
    en: bundle("en", EN),
    de: bundle("de", DE),
});

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn ids(source: &str) -> BTreeSet<String> {
        let resource = FluentResource::try_new(source.to_owned())
            .unwrap_or_else(|(_, errors)| panic!("FTL does not parse: {errors:?}"));
        resource
            .entries()
            .filter_map(|e| match e {
                fluent_syntax::ast::Entry::Message(m) => Some(m.id.name.to_owned()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn both_languages_parse_and_hold_the_same_texts() {
        let en = ids(EN);
        let de = ids(DE);
        assert!(en.len() > 50, "{}", en.len());
        let only_en: Vec<_> = en.difference(&de).collect();
        let only_de: Vec<_> = de.difference(&en).collect();
        assert!(only_en.is_empty(), "missing in de.ftl: {only_en:?}");
        assert!(only_de.is_empty(), "missing in en.ftl: {only_de:?}");
    }

    #[test]
    fn every_text_the_code_names_exists() {
        let en = ids(EN);
        // Texts named directly (`lang.t("…")`) and through the code's tables of ids.
        let re = regex::Regex::new(
            r#"\.t(?:_with)?\(\s*"([a-z0-9-]+)"|"((?:err|role|care|today|nav|field)-[a-z0-9-]+)""#,
        )
        .expect("pattern");
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/web");
        let mut missing = Vec::new();
        for file in walk(std::path::Path::new(dir)) {
            let code = std::fs::read_to_string(&file).expect("source");
            for cap in re.captures_iter(&code) {
                let Some(id) = cap.get(1).or_else(|| cap.get(2)) else {
                    continue;
                };
                if !en.contains(id.as_str()) {
                    missing.push(format!("{}: {}", file.display(), id.as_str()));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "texts named in code but not in en.ftl: {missing:?}"
        );
    }

    fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).expect("dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
        out
    }

    #[test]
    fn accept_language_picks_the_best_spoken_language() {
        assert_eq!(
            Lang::from_accept_language("de-DE,de;q=0.9,en;q=0.8"),
            Some(Lang::De)
        );
        assert_eq!(
            Lang::from_accept_language("fr-FR, en-GB;q=0.5"),
            Some(Lang::En)
        );
        assert_eq!(
            Lang::from_accept_language("en;q=0.4, de;q=0.7"),
            Some(Lang::De)
        );
        assert_eq!(Lang::from_accept_language("fr, es"), None);
        assert_eq!(Lang::from_accept_language("de;q=0"), None);
        assert_eq!(Lang::from_accept_language(""), None);
    }

    #[test]
    fn decimals_in_each_language() {
        assert_eq!(Lang::En.decimal(1.5, 2), "1.5");
        assert_eq!(Lang::De.decimal(1.5, 2), "1,5");
        assert_eq!(Lang::En.decimal(2.0, 3), "2");
        assert_eq!(Lang::De.decimal(1.2346, 3), "1,235");
        assert_eq!(Lang::En.decimal(120.0, 0), "120");
    }

    #[test]
    fn dates_and_texts_in_each_language() {
        let day = time::macros::date!(2026 - 11 - 27);
        assert_eq!(Lang::En.date(day), "27 Nov 2026");
        assert_eq!(Lang::De.date(day), "27.11.2026");
        assert_eq!(Lang::De.iso_date("2026-03-05"), "05.03.2026");
        assert_eq!(Lang::En.iso_date("not a day"), "not a day");
        assert_eq!(Lang::De.t("nav-today"), "Heute");
        assert_eq!(Lang::En.t("nav-today"), "Today");
        const MISSING: &str = "no-such-text";
        assert_eq!(Lang::En.t(MISSING), MISSING);
    }
}
