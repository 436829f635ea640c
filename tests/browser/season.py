"""The season beyond the daily loop, walked in a real browser (part of tests/browser/web_test.py).

On a phone (390 px), signed in as the grower of web_test.py's walk, whose garden has the
"Balcony tomato" treated with Abamectin by now: in English a weekly task for the plant created and
completed on the Tasks page, the tomato's harvest refused on the Harvests page inside its interval
(the treatment named, no batch written), and a mixing protocol from two catalogue products (CalMag
first); in German a planting run created, given the plant and started, and a diary entry with its
photo marked for analysis with the person's consent. On every page: axe, the 390 px fit, nothing
from another origin, no console error (the checks of web_test.Pages and web_test.Watch).
Also in English: a catalogue nutrient plan cloned and assigned to the tomato, a feeding recorded
for it, a tank created and filled with its water test, the fertilisers, an inspection on its page seen on the Protection page; in German a second, new garden set
up from a starter kit on its Today, and a harvest there allowed (no interval runs); the
catalogue: a species with its safety fields and phases, a treatment with its per-crop intervals.
"""

from __future__ import annotations

from datetime import date
from typing import Callable

from playwright.sync_api import Page

SEASON_TEXTS = {
    "en": {"tasks": "Tasks", "runs": "Runs", "task": "Tie in the tomato", "completed": "Task completed.",
           "run": "Tomatoes 2026", "created": "Run created.", "added": "Plants added.", "start": "Start the run",
           "active": "Active", "harvests": "Harvests", "refused": "Harvest refused", "diary": "Diary",
           "entry": "First flowers", "marked": "Marked for analysis"},
    "de": {"tasks": "Aufgaben", "runs": "Durchgänge", "task": "Tomate anbinden", "completed": "Aufgabe erledigt.",
           "run": "Tomaten 2026", "created": "Durchgang angelegt.", "added": "Pflanzen hinzugefügt.",
           "start": "Durchgang beginnen", "active": "Aktiv", "harvests": "Ernten", "refused": "Ernte abgelehnt",
           "diary": "Tagebuch", "entry": "Erste Blüten", "marked": "Zur Analyse vorgemerkt"},
}


def open_menu(page: Page) -> None:
    """Opens the garden's menu where it is a button (a phone); on a wide screen it is a row."""
    summary = page.locator("header nav details.menu > summary")
    if summary.is_visible() and page.locator("header nav details.menu").get_attribute("open") is None:
        summary.click()


def nav(page: Page, name: str) -> None:
    """A link of the garden's navigation, by its exact name ("Pflanzen" is not "Pflanzenschutz")."""
    open_menu(page)
    page.locator("header nav").get_by_role("link", name=name, exact=True).click()


def switch_language(page: Page, lang: str) -> None:
    if page.locator("html").get_attribute("lang") != lang:
        own = {"en": "English", "de": "Deutsch"}[lang]
        page.locator("footer button", has_text=own).click()
        page.wait_for_selector(f"html[lang={lang}]")


def walk_tasks(page: Page, check: Callable[[Page, str], None], lang: str) -> None:
    t = SEASON_TEXTS[lang]
    nav(page, t["tasks"])
    page.wait_for_url("**/tasks")
    check(page, f"tasks-{lang}")
    form = page.locator("#sec-new-task ~ details")
    if form.get_attribute("open") is None:
        form.locator("summary").click()
    page.fill("#task-name", t["task"])
    page.fill("#task-due_on", date.today().isoformat())
    page.select_option("#task-category", index=0)
    plant = page.locator("#task-plant_key option", has_text="Balcony tomato").first.get_attribute("value")
    page.select_option("#task-plant_key", plant)
    page.select_option("#task-recurrence_kind", "weekly")
    page.locator("#sec-new-task ~ details form button[type=submit]").click()
    page.wait_for_url("**done=created**")
    item = page.locator("main li", has_text=t["task"]).first
    assert item.count() == 1, page.content()
    check(page, f"tasks-created-{lang}")
    # Completed: a weekly task plans its next occurrence, which the list shows at once.
    item.locator("button[value=complete]").click()
    page.wait_for_url("**done=complete**")
    assert t["completed"] in page.locator("main .notice.ok").inner_text()
    assert page.locator("main li", has_text=t["task"]).count() >= 2, "the next occurrence is listed"
    check(page, f"tasks-completed-{lang}")


def walk_runs(page: Page, check: Callable[[Page, str], None], lang: str) -> None:
    t = SEASON_TEXTS[lang]
    nav(page, t["runs"])
    page.wait_for_url("**/runs")
    check(page, f"runs-{lang}")
    page.locator("#sec-new-run ~ details > summary").click()
    page.fill("#run-name", t["run"])
    page.locator("#sec-new-run ~ details form button[type=submit]").click()
    page.wait_for_url("**done=created**")
    assert t["created"] in page.locator("main .notice.ok").inner_text()
    assert page.locator("h1").inner_text().startswith(t["run"]), page.locator("h1").inner_text()
    check(page, f"run-{lang}")
    # The garden's plant joins the run, then the run starts.
    page.locator("label.check", has_text="Balcony tomato").first.locator("input").check()
    page.locator("form[action$='/plants'] button[type=submit]").click()
    page.wait_for_url("**done=plants**")
    assert page.locator("#sec-run-plants ~ ul.items li", has_text="Balcony tomato").count() == 1, page.content()
    page.locator("form[action$='/status'] button", has_text=t["start"]).click()
    page.wait_for_url("**done=status**")
    assert t["active"] in page.locator("h1 .badge").inner_text()
    check(page, f"run-started-{lang}")


def walk_harvests(page: Page, check: Callable[[Page, str], None], lang: str, treated: str,
                  expect_refusal: Callable[[int], None]) -> None:
    """The treated plant's harvest from the Harvests page: refused inside its interval, with the
    treatment and its first allowed day; no batch appears."""
    t = SEASON_TEXTS[lang]
    nav(page, t["harvests"])
    page.wait_for_url("**/harvests")
    check(page, f"harvests-{lang}")
    batches = page.locator("section[aria-labelledby=sec-batches] ul.items li").count()
    page.select_option("#hv-plant_key", treated)
    page.fill("#wet_weight_g", "250")
    expect_refusal(422)
    page.locator("#record form button[type=submit]").click()
    page.wait_for_selector(f"text={t['refused']}")
    refusal = page.locator("#record .notice.bad").first.inner_text()
    assert "Abamectin" in refusal, refusal
    assert page.locator("section[aria-labelledby=sec-batches] ul.items li").count() == batches
    check(page, f"harvests-refused-{lang}")


def walk_diary(page: Page, check: Callable[[Page, str], None], lang: str) -> None:
    """The garden's diary filtered to photo entries' tag-less list, an entry's page with its photo,
    and the entry marked for analysis with the person's consent."""
    t = SEASON_TEXTS[lang]
    nav(page, t["diary"])
    page.wait_for_url("**/diary")
    check(page, f"diary-{lang}")
    page.locator("section[aria-labelledby=sec-entries] a", has_text=t["entry"]).first.click()
    page.wait_for_url("**/diary/**")
    assert page.locator("section[aria-labelledby=sec-photos] img").count() >= 1, page.content()
    check(page, f"diary-entry-{lang}")
    page.check("#dy-consent")
    page.locator("#analysis form button[type=submit]").click()
    page.wait_for_url("**done=marked**")
    assert t["marked"] in page.locator("main .notice.ok").inner_text()
    check(page, f"diary-marked-{lang}")


def walk_mixing(page: Page, check: Callable[[Page, str], None]) -> None:
    """A 10-litre tank at EC 1.6 from two catalogue products: the doses in mixing order (the
    CalMag before the base), the pH step; the same form works as a page without JavaScript."""
    nav(page, "Nutrition")
    page.wait_for_url("**/nutrition")
    check(page, "nutrition-en")
    page.locator("main a", has_text="Mixing protocol").first.click()
    page.wait_for_url("**/nutrition/mix")
    page.fill("#mix-target_volume_liters", "10")
    page.fill("#mix-target_ec_ms", "1.6")
    page.fill("#mix-phase", "vegetative")
    for row, name in ((0, "General Hydroponics FloraGro"), (1, "General Hydroponics CALiMAGic")):
        value = page.locator(f"#mix-product_{row} option", has_text=name).first.get_attribute("value")
        page.select_option(f"#mix-product_{row}", value)
    page.fill("#mix-dose_1", "1")
    page.fill("#mix-base_water_ec_ms", "0.3")
    page.locator("section[aria-labelledby=sec-mix-form] button[type=submit]").click()
    page.wait_for_selector("#mix-result")
    doses = page.locator("#mix-doses li")
    assert doses.count() >= 2, page.locator("main").inner_text()
    assert "CALiMAGic" in doses.first.inner_text(), doses.first.inner_text()
    check(page, "nutrition-mix-en")


def walk_plan_and_feeding(page: Page, check: Callable[[Page, str], None]) -> None:
    """A catalogue plan cloned into the garden and assigned to the tomato, then a feeding of
    two litres recorded for it on the Feedings page."""
    nav(page, "Nutrition")
    page.locator("main a", has_text="Nutrient plans").first.click()
    page.wait_for_url("**/nutrition/plans")
    check(page, "nutrition-plans-en")
    page.locator("section[aria-labelledby=sec-plans-catalogue] a", has_text="Tomato in soil").first.click()
    page.wait_for_url("**/nutrition/plans/**")
    assert page.locator("#plan-phases li").count() >= 1, page.content()
    check(page, "nutrition-plan-en")
    page.fill("#clone-name", "Balcony tomato plan")
    page.locator("section[aria-labelledby=sec-plan-clone] button[type=submit]").click()
    page.wait_for_url("**done=cloned**")
    assert "Balcony tomato plan" in page.locator("main").inner_text(), page.content()
    plant = page.locator("#assign-plant option", has_text="Balcony tomato").first.get_attribute("value")
    page.select_option("#assign-plant", plant)
    page.locator("section[aria-labelledby=sec-plan-assign] form", has=page.locator("#assign-plant")) \
        .locator("button[type=submit]").click()
    page.wait_for_url("**done=assigned**")
    assert "Plan assigned." in page.locator("main .notice.ok").inner_text()
    check(page, "nutrition-plan-assigned-en")
    nav(page, "Nutrition")
    page.locator("main a", has_text="Feedings").first.click()
    page.wait_for_url("**/nutrition/feedings")
    form = page.locator("section[aria-labelledby=sec-feed-new] details")
    if form.get_attribute("open") is None:
        form.locator("summary").click()
    form.locator("label.check", has_text="Balcony tomato").first.locator("input").check()
    page.fill("#feed-volume_liters", "2")
    form.locator("button[type=submit]").click()
    page.wait_for_url("**done=recorded**")
    assert "Feeding recorded." in page.locator("main .notice.ok").inner_text()
    assert page.locator("section[aria-labelledby=sec-feed-list] li", has_text="Balcony tomato").count() >= 1, \
        page.content()
    check(page, "nutrition-feedings-en")


def walk_tank_and_fertilisers(page: Page, check: Callable[[Page, str], None]) -> None:
    """A 20-litre tank created, filled to 15 litres with its water test (EC 1.4, pH 6.0), its
    maintenance due listed; then the fertilisers, the garden's and the catalogue's."""
    nav(page, "Nutrition")
    page.locator("main a", has_text="Tanks").first.click()
    page.wait_for_url("**/nutrition/tanks")
    page.locator("section[aria-labelledby=sec-tank-new] details > summary").click()
    page.fill("#tank-name", "Rain barrel")
    page.fill("#tank-volume_liters", "20")
    page.locator("section[aria-labelledby=sec-tank-new] button[type=submit]").click()
    page.wait_for_url("**done=created**")
    assert "Tank created." in page.locator("main .notice.ok").inner_text()
    page.locator("section[aria-labelledby=sec-tank-fill] details > summary").click()
    page.fill("#fill-volume_liters", "15")
    page.fill("#fill-ec_ms", "1.4")
    page.fill("#fill-ph", "6.0")
    page.locator("section[aria-labelledby=sec-tank-fill] button[type=submit]").click()
    page.wait_for_url("**done=filled**")
    assert "Fill recorded." in page.locator("main .notice.ok").inner_text()
    assert page.locator("#tank-fills li").count() == 1, page.content()
    check(page, "nutrition-tank-en")
    nav(page, "Nutrition")
    page.locator("main a", has_text="Fertilisers").first.click()
    page.wait_for_url("**/nutrition/fertilizers")
    assert "CALiMAGic" in page.locator("main").inner_text()
    check(page, "nutrition-fertilisers-en")


def walk_inspection(page: Page, check: Callable[[Page, str], None], plant_page: str) -> None:
    """An inspection on the tomato's page (aphids, medium pressure), then the Protection page
    lists it beside the running interval."""
    page.goto(plant_page)
    box = page.locator("#ipm details", has_text="Record an inspection")
    box.locator("summary").click()
    page.select_option("#pressure_level", "medium")
    page.fill("#symptom", "Aphids on the youngest leaves")
    page.locator("#ipm form[action$=inspection] button[type=submit]").click()
    page.wait_for_url("**done=inspected**")
    nav(page, "Protection")
    page.wait_for_url("**/protection")
    text = page.locator("main").inner_text()
    assert "Abamectin" in text and "Aphids on the youngest leaves" in text, text
    check(page, "protection-inspected-en")


def walk_starter_kit(page: Page, check: Callable[[Page, str], None], today: str) -> None:
    """A new garden's Today (German): the first steps and the starter kits; the windowsill herbs
    with a zone set it up, the card goes, and a harvest of a herb is allowed at once (no
    interval runs there): recorded, one batch more."""
    page.goto(today)
    assert page.locator("#sec-start").count() == 1, page.content()
    check(page, "today-start-de")
    page.locator("label", has_text="Kräuter auf der Fensterbank").first.click()
    page.select_option("#kit-zone", "8a")
    page.locator("form[action$='/start/kit'] button[type=submit]").click()
    page.wait_for_url("**done=kit**")
    assert "Der Garten ist angelegt" in page.locator("main .notice.ok").inner_text()
    assert page.locator("#sec-start").count() == 0, "set up: no first steps any more"
    check(page, "today-kit-applied-de")
    nav(page, "Ernten")
    page.wait_for_url("**/harvests")
    batches = page.locator("section[aria-labelledby=sec-batches] ul.items li").count()
    page.select_option("#hv-plant_key", index=1)
    page.fill("#wet_weight_g", "40")
    page.locator("#record form button[type=submit]").click()
    page.wait_for_url("**done=recorded**")
    assert "Ernte eingetragen." in page.locator("main .notice.ok").inner_text()
    assert page.locator("section[aria-labelledby=sec-batches] ul.items li").count() == batches + 1, page.content()
    check(page, "harvest-allowed-de")


def walk_catalogue(page: Page, check: Callable[[Page, str], None]) -> None:
    """The catalogue (English): a species found by its Latin name with its safety card and
    phases, and Abamectin's page with its per-crop intervals and their labels."""
    nav(page, "Catalogue")
    page.wait_for_url("**/catalog")
    check(page, "catalogue-en")
    page.locator("main a", has_text="Species").first.click()
    page.wait_for_url("**/catalog/species**")
    page.fill("#cat-q", "Solanum lycopersicum")
    page.locator("form[role=search] button[type=submit]").click()
    page.wait_for_url("**q=Solanum**")
    # The link is the name in the page's language; the Latin name stands beside it.
    page.locator("section[aria-labelledby=sec-results] li", has_text="Solanum lycopersicum").first \
        .locator("a").first.click()
    page.wait_for_url("**/catalog/species/**")
    assert page.locator("#sec-safety").count() == 1 and page.locator("#sec-sequence").count() == 1, page.content()
    check(page, "catalogue-species-en")
    nav(page, "Catalogue")
    page.locator("main a", has_text="Treatments").first.click()
    page.fill("#cat-q", "Abamectin")
    page.locator("form[role=search] button[type=submit]").click()
    page.wait_for_url("**q=Abamectin**")
    page.locator("section[aria-labelledby=sec-results] li", has_text="Abamectin").first.locator("a").first.click()
    page.wait_for_url("**/catalog/treatments/**")
    assert page.locator("section[aria-labelledby=sec-intervals] table tr").count() >= 2, page.content()
    check(page, "catalogue-treatment-en")


def season(page: Page, check: Callable[[Page, str], None], treated: str,
           expect_refusal: Callable[[int], None], plant_page: str, kit_today: str) -> None:
    """Tasks, the refused harvest, mixing, a plan, a feeding and an inspection in English; runs,
    the diary and a new garden from a starter kit with an allowed harvest in German. `treated`
    is the key of the plant treated with Abamectin in web_test's walk (its page `plant_page`);
    `kit_today` is the Today of a new, empty garden of the same person."""
    switch_language(page, "en")
    walk_tasks(page, check, "en")
    walk_harvests(page, check, "en", treated, expect_refusal)
    walk_mixing(page, check)
    walk_plan_and_feeding(page, check)
    walk_tank_and_fertilisers(page, check)
    walk_inspection(page, check, plant_page)
    walk_catalogue(page, check)
    switch_language(page, "de")
    walk_runs(page, check, "de")
    walk_diary(page, check, "de")
    walk_starter_kit(page, check, kit_today)



def walk_sensors(page: Page, check: Callable[[Page, str], None], base: str, slug: str,
                 call: Callable, token: str) -> None:
    """The sensors page in English: a temperature sensor of a new grow tent (made through the API,
    with a week of hourly readings) listed with its latest reading, an MQTT pH sensor registered
    through the form, its topic copied with the button; then in German a plant of the tent whose
    page draws the week's chart (inline SVG with its table)."""
    from datetime import datetime, timedelta, timezone
    import math

    def api(path: str, body: dict) -> dict:
        status, made = call("POST", f"{base}/api/v1/t/{slug}/{path}", body, token)
        assert status in (200, 201), (path, status, made)
        return made

    site = api("sites", {"name": "Tent room", "kind": "grow_tent"})
    tent = api("locations", {"site_key": site["key"], "name": "Grow tent"})
    status, species = call("GET", f"{base}/api/v1/species?q=Solanum%20lycopersicum&limit=1", None, token)
    assert status == 200, (status, species)
    items = species["items"] if isinstance(species, dict) else species
    plant = api("plant-instances", {"species_key": items[0]["key"], "name": "Tent tomato",
                                    "location_key": tent["key"]})
    air = api("sensors", {"name": "Tent air", "metric": "temperature_c", "location_key": tent["key"],
                          "source": "http", "expected_interval_minutes": 60})
    now = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
    week = []
    for h in range(167, -1, -1):
        if 60 <= h < 66:
            continue  # six hours without readings: a gap in the line
        t = min(now - timedelta(hours=h) + timedelta(minutes=10), datetime.now(timezone.utc))
        week.append({"value": round(22 + 4 * math.sin(h / 24 * 2 * math.pi), 2),
                     "measured_at": t.isoformat().replace("+00:00", "Z")})
    api(f"sensors/{air['key']}/readings", {"readings": week})

    switch_language(page, "en")
    nav(page, "Sensors")
    page.wait_for_url("**/sensors")
    item = page.locator("#sensor-list li", has_text="Tent air")
    assert item.count() == 1, page.content()
    assert "°C" in item.locator(".latest").inner_text()
    form = page.locator("#sec-sensor-new ~ details")
    if form.get_attribute("open") is None:
        form.locator("summary").click()
    page.fill("#sensor-name", "Reservoir pH")
    page.select_option("#sensor-metric", "ph")
    page.select_option("#sensor-place", f"location:{tent['key']}")
    page.select_option("#sensor-source", "mqtt")
    page.fill("#sensor-topic", f"kultiva/{slug}/tent/reservoir/ph")
    page.locator("#sec-sensor-new ~ details form button[type=submit]").click()
    page.wait_for_url("**done=created**")
    assert "Sensor registered." in page.locator("main .notice.ok").inner_text()
    made = page.locator("#sensor-list li", has_text="Reservoir pH")
    field = made.locator("input[readonly]")
    assert field.input_value() == f"kultiva/{slug}/tent/reservoir/ph", field.input_value()
    button = made.locator("button[data-copy]")
    assert button.is_visible(), "the script shows the copy button"
    button.click()
    made.locator("[role=status]", has_text="Copied.").wait_for()
    check(page, "sensors-en")

    switch_language(page, "de")
    page.goto(f"{base}/app/g/{slug}/plants/{plant['key']}")
    chart = page.locator("#environment svg.chart")
    chart.wait_for()
    assert chart.get_attribute("role") == "img"
    # One chart per sensor (by name: "Reservoir pH" has no readings yet, so only a line says so).
    assert page.locator("#environment h3", has_text="Lufttemperatur").count() == 1, page.content()
    assert page.locator("#environment svg.chart").count() == 1
    assert page.locator("#environment path.line").count() == 2, "the gap breaks the line"
    assert page.locator("#environment .latest", has_text="°C").count() >= 1
    page.locator("#environment details summary", has_text="Pro Tag").first.click()
    assert page.locator("#environment table.daily tbody tr").count() >= 7
    check(page, "plant-chart-de")
