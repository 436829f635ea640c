//! RFC 5545 text of a calendar feed: lines end in CRLF, content lines are folded at 75 octets
//! (a continuation line starts with one space and the fold never splits a UTF-8 character),
//! TEXT values escape `\`, `;`, `,` and newlines, and every event has a UID and a DTSTAMP.
//! All-day events use `VALUE=DATE` with an exclusive DTEND (the day after the last day).

use time::{Date, OffsetDateTime};

/// What one VEVENT says.
#[derive(Debug, Clone, PartialEq)]
pub struct IcalEvent<'a> {
    pub uid: &'a str,
    pub summary: &'a str,
    pub description: Option<&'a str>,
    pub categories: &'a str,
    /// First day.
    pub start: Date,
    /// Last day, inclusive (`None`: one day).
    pub end: Option<Date>,
}

/// Escapes a TEXT value (RFC 5545 3.3.11).
pub fn escape_text(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push_str("\\n");
            }
            '\n' => out.push_str("\\n"),
            // Other control characters are not allowed in TEXT: dropped.
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Folds one content line: at most 75 octets per physical line, continuation lines start with
/// one space (which counts towards their 75), each line ends with CRLF.
pub fn fold_line(line: &str, out: &mut String) {
    let mut width = 0usize;
    for c in line.chars() {
        let n = c.len_utf8();
        if width + n > 75 {
            out.push_str("\r\n ");
            width = 1;
        }
        out.push(c);
        width += n;
    }
    out.push_str("\r\n");
}

fn date(d: Date) -> String {
    format!("{:04}{:02}{:02}", d.year(), u8::from(d.month()), d.day())
}

fn stamp(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{}T{:02}{:02}{:02}Z",
        date(t.date()),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// The whole VCALENDAR. `name` is the calendar's display name (X-WR-CALNAME).
pub fn render(name: &str, events: &[IcalEvent<'_>], now: OffsetDateTime) -> String {
    let mut out = String::with_capacity(256 + events.len() * 256);
    let dtstamp = stamp(now);
    for l in [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//Kultiva//Garden calendar//EN",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
    ] {
        fold_line(l, &mut out);
    }
    fold_line(&format!("X-WR-CALNAME:{}", escape_text(name)), &mut out);
    for e in events {
        fold_line("BEGIN:VEVENT", &mut out);
        fold_line(&format!("UID:{}", escape_text(e.uid)), &mut out);
        fold_line(&format!("DTSTAMP:{dtstamp}"), &mut out);
        fold_line(&format!("DTSTART;VALUE=DATE:{}", date(e.start)), &mut out);
        let last = e.end.unwrap_or(e.start).max(e.start);
        let exclusive = last.next_day().unwrap_or(last);
        fold_line(&format!("DTEND;VALUE=DATE:{}", date(exclusive)), &mut out);
        fold_line(&format!("SUMMARY:{}", escape_text(e.summary)), &mut out);
        if let Some(d) = e.description {
            fold_line(&format!("DESCRIPTION:{}", escape_text(d)), &mut out);
        }
        fold_line(
            &format!("CATEGORIES:{}", escape_text(e.categories)),
            &mut out,
        );
        fold_line("TRANSP:TRANSPARENT", &mut out);
        fold_line("END:VEVENT", &mut out);
    }
    fold_line("END:VCALENDAR", &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{date, datetime};

    #[test]
    fn text_escaping() {
        for (raw, want) in [
            ("plain", "plain"),
            ("a,b;c", "a\\,b\\;c"),
            ("back\\slash", "back\\\\slash"),
            ("two\nlines", "two\\nlines"),
            ("crlf\r\nend", "crlf\\nend"),
            ("bell\u{7}", "bell"),
        ] {
            assert_eq!(escape_text(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn folding_at_75_octets_never_splits_a_character() {
        // 80 ASCII octets: 75 on the first line, then " " + 5.
        let mut out = String::new();
        fold_line(&"x".repeat(80), &mut out);
        let lines: Vec<&str> = out.split("\r\n").collect();
        assert_eq!(lines[0].len(), 75);
        assert_eq!(lines[1], format!(" {}", "x".repeat(5)));
        assert_eq!(lines[2], "");
        // "ä" is 2 octets: 37 of them are 74 octets, the 38th would make 76 → folded before it.
        let mut out = String::new();
        fold_line(&"ä".repeat(40), &mut out);
        for l in out.split("\r\n") {
            assert!(l.len() <= 75, "{l:?} is {} octets", l.len());
        }
        assert_eq!(out.split("\r\n").next().map(str::len), Some(74));
        // Unfolding (remove CRLF + space) gives the line back.
        assert_eq!(out.replace("\r\n ", "").trim_end(), "ä".repeat(40));
    }

    #[test]
    fn all_day_events_have_an_exclusive_end_and_the_required_properties() {
        let events = [
            IcalEvent {
                uid: "sowing:abc",
                summary: "Sow tomato, indoors",
                description: Some("zone 7a; window"),
                categories: "sowing",
                start: date!(2026 - 03 - 01),
                end: Some(date!(2026 - 03 - 31)),
            },
            IcalEvent {
                uid: "phase:x",
                summary: "One day",
                description: None,
                categories: "phase",
                start: date!(2026 - 12 - 31),
                end: None,
            },
        ];
        let text = render("Garden", &events, datetime!(2026-11-24 16:30:05 UTC));
        assert!(text.ends_with("END:VCALENDAR\r\n"));
        assert!(!text.replace("\r\n", "").contains('\n'));
        assert!(text.contains("DTSTART;VALUE=DATE:20260301\r\nDTEND;VALUE=DATE:20260401\r\n"));
        // A one-day event on Dec 31 ends (exclusively) on Jan 1 of the next year.
        assert!(text.contains("DTSTART;VALUE=DATE:20261231\r\nDTEND;VALUE=DATE:20270101\r\n"));
        assert_eq!(text.matches("DTSTAMP:20261124T163005Z\r\n").count(), 2);
        assert!(text.contains("DESCRIPTION:zone 7a\\; window\r\n"));
        assert!(text.contains("SUMMARY:Sow tomato\\, indoors\r\n"));
    }
}
