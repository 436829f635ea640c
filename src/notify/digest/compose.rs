//! The digest's text, in German or English.

/// One garden's part of a digest.
#[derive(Debug, Clone, Default)]
pub struct GardenDigest {
    pub name: String,
    pub slug: String,
    /// (plant, care type, days overdue)
    pub overdue: Vec<(String, String, i64)>,
    /// (plant, care type)
    pub due_today: Vec<(String, String)>,
    /// (task, due day)
    pub tasks: Vec<(String, String)>,
    /// (plant, active ingredient or treatment, first day a harvest is allowed): safety
    /// intervals whose last blocked day is today.
    pub intervals_ending: Vec<(String, String, String)>,
    /// Plants ready to harvest (readiness `ready`).
    pub ready: Vec<String>,
    /// Open environment alerts: (plant or sensor, what it says).
    pub alerts: Vec<(String, String)>,
}

impl GardenDigest {
    pub fn items(&self) -> usize {
        self.overdue.len()
            + self.due_today.len()
            + self.tasks.len()
            + self.intervals_ending.len()
            + self.ready.len()
            + self.alerts.len()
    }
}

/// The mail's language: German for `de…`, else English.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    De,
    En,
}

impl Lang {
    pub fn of(locale: &str) -> Self {
        if locale.eq_ignore_ascii_case("de") || locale.to_ascii_lowercase().starts_with("de-") {
            Self::De
        } else {
            Self::En
        }
    }
}

fn care_name(kind: &str, lang: Lang) -> String {
    let de = match kind {
        "watering" => "Gießen",
        "fertilizing" => "Düngen",
        "repotting" => "Umtopfen",
        "pruning" => "Rückschnitt",
        "pest_check" => "Schädlingskontrolle",
        "overwintering" => "Überwinterung",
        other => other,
    };
    let en = match kind {
        "watering" => "watering",
        "fertilizing" => "fertilising",
        "repotting" => "repotting",
        "pruning" => "pruning",
        "pest_check" => "pest check",
        "overwintering" => "overwintering",
        other => other,
    };
    match lang {
        Lang::De => de.to_owned(),
        Lang::En => en.to_owned(),
    }
}

/// Subject and text of a digest for `day` (YYYY-MM-DD).
pub fn render(
    lang: Lang,
    day: &str,
    gardens: &[GardenDigest],
    frontend: &str,
    unsubscribe: &str,
) -> (String, String) {
    let total: usize = gardens.iter().map(GardenDigest::items).sum();
    let subject = match lang {
        Lang::De => format!("Kultiva: {total} Aufgaben für heute ({day})"),
        Lang::En => format!("Kultiva: {total} things to do today ({day})"),
    };
    let mut text = String::new();
    text.push_str(match lang {
        Lang::De => "Guten Morgen,\n\nhier ist, was heute in deinen Gärten ansteht.\n",
        Lang::En => "Good morning,\n\nhere is what your gardens need today.\n",
    });
    // Garden, plant, task and treatment names are user text (a garden admin's): quoted, links
    // and addresses defused, as in the invitation mail, so none reads as the service's own words.
    let q = crate::rules::mail::quoted_user_text;
    for g in gardens.iter().filter(|g| g.items() > 0) {
        text.push_str(&format!("\n== {} ==\n", q(&g.name)));
        if !g.overdue.is_empty() {
            text.push_str(match lang {
                Lang::De => "Überfällige Pflege:\n",
                Lang::En => "Care overdue:\n",
            });
            for (plant, kind, days) in &g.overdue {
                let plant = q(plant);
                let line = match lang {
                    Lang::De => format!(
                        "  - {plant}: {} (seit {days} Tagen fällig)\n",
                        care_name(kind, lang)
                    ),
                    Lang::En => format!(
                        "  - {plant}: {} ({days} days overdue)\n",
                        care_name(kind, lang)
                    ),
                };
                text.push_str(&line);
            }
        }
        if !g.due_today.is_empty() {
            text.push_str(match lang {
                Lang::De => "Heute fällige Pflege:\n",
                Lang::En => "Care due today:\n",
            });
            for (plant, kind) in &g.due_today {
                let plant = q(plant);
                text.push_str(&format!("  - {plant}: {}\n", care_name(kind, lang)));
            }
        }
        if !g.tasks.is_empty() {
            text.push_str(match lang {
                Lang::De => "Fällige Aufgaben:\n",
                Lang::En => "Tasks due:\n",
            });
            for (task, due) in &g.tasks {
                let task = q(task);
                let line = match lang {
                    Lang::De => format!("  - {task} (fällig {due})\n"),
                    Lang::En => format!("  - {task} (due {due})\n"),
                };
                text.push_str(&line);
            }
        }
        if !g.intervals_ending.is_empty() {
            text.push_str(match lang {
                Lang::De => "Wartezeiten, die heute enden:\n",
                Lang::En => "Safety intervals ending today:\n",
            });
            for (plant, what, safe_on) in &g.intervals_ending {
                let (plant, what) = (q(plant), q(what));
                let line = match lang {
                    Lang::De => format!("  - {plant}: {what} (Ernte ab {safe_on})\n"),
                    Lang::En => format!("  - {plant}: {what} (harvest allowed from {safe_on})\n"),
                };
                text.push_str(&line);
            }
        }
        if !g.ready.is_empty() {
            text.push_str(match lang {
                Lang::De => "Erntereif:\n",
                Lang::En => "Ready to harvest:\n",
            });
            for plant in &g.ready {
                text.push_str(&format!("  - {}\n", q(plant)));
            }
        }
        if !g.alerts.is_empty() {
            text.push_str(match lang {
                Lang::De => "Offene Warnungen (Sensoren):\n",
                Lang::En => "Open alerts (sensors):\n",
            });
            for (who, what) in &g.alerts {
                text.push_str(&format!("  - {}: {what}\n", q(who)));
            }
        }
        let link = format!("{frontend}/gardens/{}/today", g.slug);
        text.push_str(&match lang {
            Lang::De => format!("Öffnen: {link}\n"),
            Lang::En => format!("Open: {link}\n"),
        });
    }
    text.push_str(&match lang {
        Lang::De => format!(
            "\nDiese Zusammenfassung abbestellen (ohne Anmeldung): {unsubscribe}\n\
             Einstellungen: {frontend}/settings/notifications\n"
        ),
        Lang::En => format!(
            "\nUnsubscribe from this digest (no login needed): {unsubscribe}\n\
             Settings: {frontend}/settings/notifications\n"
        ),
    });
    (subject, text)
}

/// The push message's title and one-line body: counts only (a lock screen is not the place
/// for plant names), the details are in the app behind the link.
pub fn push_summary(lang: Lang, gardens: &[GardenDigest]) -> (String, String) {
    let sum = |f: fn(&GardenDigest) -> usize| gardens.iter().map(f).sum::<usize>();
    let care = sum(|g| g.overdue.len() + g.due_today.len());
    let tasks = sum(|g| g.tasks.len());
    let intervals = sum(|g| g.intervals_ending.len());
    let ready = sum(|g| g.ready.len());
    let alerts = sum(|g| g.alerts.len());
    let mut parts = Vec::new();
    match lang {
        Lang::De => {
            if care > 0 {
                parts.push(format!("{care} Pflege"));
            }
            if tasks > 0 {
                parts.push(format!("{tasks} Aufgaben"));
            }
            if intervals > 0 {
                parts.push(format!("{intervals} Wartezeiten enden"));
            }
            if ready > 0 {
                parts.push(format!("{ready} erntereif"));
            }
            if alerts > 0 {
                parts.push(format!("{alerts} Warnungen"));
            }
            ("Kultiva: heute".to_owned(), parts.join(", "))
        }
        Lang::En => {
            if care > 0 {
                parts.push(format!("{care} care"));
            }
            if tasks > 0 {
                parts.push(format!("{tasks} tasks"));
            }
            if intervals > 0 {
                parts.push(format!("{intervals} safety intervals ending"));
            }
            if ready > 0 {
                parts.push(format!("{ready} ready to harvest"));
            }
            if alerts > 0 {
                parts.push(format!("{alerts} alerts"));
            }
            ("Kultiva: today".to_owned(), parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names a garden admin wrote come out quoted with links and addresses defused; the
    /// service's own links (the garden's page, unsubscribe) stay usable.
    #[test]
    fn user_names_are_quoted_and_links_defused() {
        let phishing =
            "Account locked! Log in at https://evil.example/login or mail help@evil.example";
        let garden = GardenDigest {
            name: phishing.to_owned(),
            slug: "allotment".to_owned(),
            overdue: vec![(format!("Rose {phishing}"), "watering".to_owned(), 2)],
            due_today: vec![("Basil evil.example".to_owned(), "pruning".to_owned())],
            tasks: vec![(phishing.to_owned(), "2026-12-02".to_owned())],
            intervals_ending: vec![(
                "Tomato".to_owned(),
                "see https://evil.example".to_owned(),
                "2026-12-03".to_owned(),
            )],
            ready: vec!["Kale \"Visit www.evil.example\"".to_owned()],
            alerts: vec![(
                format!("Chili {phishing}"),
                "ph 7.9 outside 5.8–6.3".to_owned(),
            )],
        };
        for lang in [Lang::En, Lang::De] {
            let (_, text) = render(
                lang,
                "2026-12-02",
                std::slice::from_ref(&garden),
                "https://app.kultiva.example",
                "https://app.kultiva.example/unsubscribe?t=x",
            );
            for raw in ["https://evil", "evil.example", "help@", "www.evil"] {
                assert!(!text.contains(raw), "{raw} shown raw in {text}");
            }
            let quoted = crate::rules::mail::quoted_user_text(phishing);
            assert!(text.contains(&format!("== {quoted} ==")), "{text}");
            assert!(text.contains(&format!("  - {quoted} (")), "{text}");
            assert!(text.contains("\"Basil evil[.]example\""), "{text}");
            assert!(
                text.contains("\"Kale 'Visit www[.]evil[.]example'\""),
                "{text}"
            );
            assert!(text.contains("https://app.kultiva.example/gardens/allotment/today"));
            assert!(text.contains("https://app.kultiva.example/unsubscribe?t=x"));
        }
    }
}
