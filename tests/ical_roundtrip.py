"""Parses a Kultiva iCal feed with the `icalendar` package and checks it against the JSON
events of the same window: every event present once, with its title, dates, kind and detail.

Usage: ical_roundtrip.py FEED.ics EVENTS.json  (prints "ok <n>" or exits non-zero)."""

import datetime
import json
import sys

import icalendar


def main() -> int:
    raw = open(sys.argv[1], "rb").read()
    events = json.load(open(sys.argv[2]))["items"]
    # RFC 5545: CRLF line ends, no bare LF, lines of at most 75 octets.
    assert raw.endswith(b"\r\n"), "feed does not end with CRLF"
    assert b"\n" not in raw.replace(b"\r\n", b""), "bare LF in feed"
    for line in raw.split(b"\r\n"):
        assert len(line) <= 75, f"line of {len(line)} octets: {line!r}"
    cal = icalendar.Calendar.from_ical(raw)
    assert str(cal["VERSION"]) == "2.0"
    assert cal.get("PRODID")
    by_uid = {}
    for comp in cal.walk("VEVENT"):
        uid = str(comp["UID"])
        assert uid not in by_uid, f"duplicate UID {uid}"
        assert comp.get("DTSTAMP") is not None, f"{uid}: no DTSTAMP"
        by_uid[uid] = comp
    assert len(by_uid) == len(events), f"{len(by_uid)} VEVENTs for {len(events)} events"
    for e in events:
        comp = by_uid[e["uid"]]
        start = comp.decoded("DTSTART")
        end = comp.decoded("DTEND")
        # All-day: dates, not datetimes.
        assert type(start) is datetime.date and type(end) is datetime.date, e["uid"]
        assert start.isoformat() == e["date"], (e["uid"], start, e["date"])
        last = datetime.date.fromisoformat(e["end_date"] or e["date"])
        assert end == last + datetime.timedelta(days=1), (e["uid"], end, last)
        assert str(comp["SUMMARY"]) == e["title"], (comp["SUMMARY"], e["title"])
        if e["detail"] is None:
            assert "DESCRIPTION" not in comp, e["uid"]
        else:
            assert str(comp["DESCRIPTION"]) == e["detail"], (comp["DESCRIPTION"], e["detail"])
        cats = comp.get("CATEGORIES")
        assert cats is not None and e["kind"] in [str(c) for c in cats.cats], e["uid"]
    print(f"ok {len(events)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
