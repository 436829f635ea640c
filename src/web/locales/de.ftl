# Kultiva-Seiten, Deutsch. Jede Nachricht gibt es auch in en.ftl (ein Unit-Test prüft das).
skip-to-content = Zum Inhalt springen
nav-label = Hauptmenü
nav-today = Heute
nav-api = API
sign-out = Abmelden
gardens-label = Deine Gärten
offline-note = Keine Verbindung: deine letzte Aktion hat den Server nicht erreicht. Versuche es erneut, sobald du wieder online bist.
language = Sprache
error-title = Etwas ist schiefgegangen
back-home = Zurück zu deinen Gärten
try-again = Erneut versuchen

err-missing = dieses Feld ist erforderlich.
err-too-short = zu kurz.
err-too-long = zu lang.
err-invalid = kein gültiger Wert.
err-not-found = Nicht gefunden: es gibt das nicht, oder du darfst es nicht sehen.
err-duplicate = Das gibt es schon.
err-unauthorized = E-Mail-Adresse oder Passwort ist falsch.
err-link-invalid = Dieser Link ist ungültig, schon benutzt oder abgelaufen.
err-forbidden = Das darfst du nicht.
err-email-not-verified = Bitte bestätige zuerst deine E-Mail-Adresse: folge dem Link in der Mail, die wir dir geschickt haben.
err-locked = Zu viele fehlgeschlagene Anmeldungen: dieses Konto ist eine Weile gesperrt. Versuche es später erneut.
err-too-many = Zu viele Versuche von hier. Bitte warte eine Minute und versuche es erneut.
err-unavailable = Der Dienst ist kurz nicht erreichbar. Bitte versuche es gleich noch einmal.
err-too-large = Was du gesendet hast, ist zu groß.
err-conflict = Das geht im jetzigen Zustand nicht.
err-internal = Bei uns ist ein unerwarteter Fehler aufgetreten. Er wurde protokolliert.
err-refused = Das ließ sich nicht erledigen.
err-csrf = Dieses Formular ist abgelaufen oder kam nicht von dieser Seite. Lade die Seite neu und versuche es erneut.

field-email = E-Mail-Adresse
field-password = Passwort
field-new-password = Neues Passwort
field-name = Dein Name
field-link = Link
field-remember = Auf diesem Gerät angemeldet bleiben

sign-in-title = Anmelden
sign-in = Anmelden
sign-up-title = Konto anlegen
sign-up = Konto anlegen
sign-up-intro = Zu deinem Konto gehört ein eigener Garten. Andere kannst du später einladen.
sign-up-done-title = Fast geschafft
sign-up-done = Dein Konto ist angelegt. Wir haben dir eine Mail geschickt: folge ihrem Link, um deine Adresse zu bestätigen, und melde dich dann an.
have-account = Du hast schon ein Konto?
no-account = Neu hier?
forgot-password = Passwort vergessen?
password-hint = Mindestens 10 Zeichen.
signed-out = Du bist abgemeldet.
verified-sign-in = Deine Adresse ist bestätigt. Du kannst dich jetzt anmelden.

verify-title = E-Mail-Adresse bestätigen
verify-intro = Bestätige, dass diese Adresse dir gehört.
verify-button = Adresse bestätigen

reset-title = Passwort zurücksetzen
reset-intro = Gib deine E-Mail-Adresse ein. Gehört sie zu einem Konto, schicken wir einen Link, mit dem du ein neues Passwort festlegst.
reset-send = Link senden
reset-sent = Gehört die Adresse zu einem Konto, ist eine Mail mit einem Link unterwegs. Der Link gilt eine Stunde.
reset-new-title = Neues Passwort wählen
reset-save = Neues Passwort speichern
reset-done = Dein Passwort ist geändert und alle Sitzungen sind beendet. Melde dich mit dem neuen Passwort an.

invitation-title = Einladung in einen Garten
invitation-intro = Du wurdest in einen Garten eingeladen. Nimm an, dann erscheint er bei deinen Gärten.
invitation-accept = Einladung annehmen
invitation-sign-in-first = Melde dich an (oder lege ein Konto mit der eingeladenen Adresse an), um die Einladung anzunehmen.
invitation-invalid = Diese Einladung ist ungültig, abgelaufen, schon beantwortet oder für eine andere Adresse bestimmt.
invitation-joined = Du bist dem Garten beigetreten.

gardens-title = Deine Gärten
gardens-none = Du bist noch in keinem Garten Mitglied.
role-admin = Verwaltung
role-grower = Gärtner/in
role-viewer = Nur lesen

today-care = Fällige Pflege
today-care-none = Keine Pflege fällig. Gut gemacht.
today-tasks = Fällige Aufgaben
today-tasks-none = Keine Aufgaben fällig.
today-harvest = Erntereif
today-harvest-none = Noch keine Pflanze ist erntereif.
today-safety = Laufende Wartezeiten
today-safety-none = Keine Wartezeit läuft: Ernten sind nicht gesperrt.
today-diary = Neueste Tagebucheinträge
today-diary-none = Noch keine Tagebucheinträge.
due-on = fällig am
safety-until = gesperrt bis
safety-harvest-from = Ernte ab

safety-source = Quelle

care-watering = Gießen
care-fertilizing = Düngen
care-repotting = Umtopfen
care-pruning = Schneiden
care-pest-check = Schädlingskontrolle
care-overwintering = Überwinterung
care-due-today = heute fällig
care-overdue-days = { $days ->
    [one] 1 Tag überfällig
   *[other] { $days } Tage überfällig
}
care-confirm = Erledigt
care-snooze = Morgen
care-confirmed = Pflege eingetragen.
care-snoozed = Erinnerung auf morgen verschoben.
care-confirmed-next = Eingetragen. Nächstes Mal: { $date }.
care-snoozed-next = Verschoben auf { $date }.

## places, calendar and settings pages
nav-places = Orte
nav-calendar = Kalender
nav-settings = Einstellungen

field-place-name = Name
field-kind = Art
field-parent = Ort
field-slot-code = Stellplatz-Code
field-capacity = Pflanzen pro Stellplatz
field-substrate = Substrat
field-substrate-type = Typ
field-reusable = Wiederverwendbar (für mehr als einen Durchgang)
field-label = Bezeichnung
field-mixed-on = Gemischt am
field-month = Monat
field-timezone = Zeitzone
field-notify-email = Benachrichtigungen per E-Mail
field-notify-care-due = Erinnerungen an fällige Pflege
field-notify-push = Die Zusammenfassung auch an meine Browser senden (Web Push)
field-notify-digest = Zusammenfassung per Mail
field-digest-hour = Uhrzeit der Zusammenfassung (0–23, deine Zeit)
field-current-password = Aktuelles Passwort
field-key-scope = Gärten, in denen der Schlüssel gilt
field-role = Rolle

places-sites = Standorte, Plätze und Stellplätze
places-sites-none = Noch keine Standorte. Ein Standort ist ein Ort, an dem du gärtnerst: ein Balkon, ein Gewächshaus, eine Wohnung.
places-locations-none = In diesem Standort gibt es noch keine Plätze.
places-slots = Stellplätze
places-add-site = Standort hinzufügen
places-add-location = Platz hinzufügen
places-add-sublocation = Platz darin hinzufügen
places-add-slot = Stellplatz hinzufügen
places-change = Umbenennen oder löschen
places-rename = Namen speichern
places-delete = Löschen
places-delete-named = { $name } löschen
places-admin-only = Nur die Administratoren des Gartens ändern Standorte, Plätze und Stellplätze.
places-slot-code-hint = Großbuchstaben und Ziffern, mit _ verbunden, zum Beispiel BOX1_A1; im Garten eindeutig.
places-slot-use = { $live } von { $capacity } Plätzen belegt
places-substrates = Eigene Substrate
places-substrates-none = Noch keine eigenen Substrate; die des gemeinsamen Katalogs stehen immer bereit.
places-add-substrate = Substrat hinzufügen
places-reuse-cycles = bis zu { $cycles } Durchgänge
places-batches = Substrat-Chargen
places-batches-none = Noch keine Substrat-Chargen.
places-add-batch = Charge hinzufügen
places-batch-cycles = Durchgang { $used } von { $max }
places-live-plants = { $count ->
    [one] 1 Pflanze
   *[other] { $count } Pflanzen
}
places-mixed-on = gemischt am
places-done-site-created = Standort hinzugefügt.
places-done-site-renamed = Standort umbenannt.
places-done-site-deleted = Standort gelöscht.
places-done-location-created = Platz hinzugefügt.
places-done-location-renamed = Platz umbenannt.
places-done-location-deleted = Platz gelöscht.
places-done-slot-created = Stellplatz hinzugefügt.
places-done-slot-deleted = Stellplatz gelöscht.
places-done-substrate-created = Substrat hinzugefügt.
places-done-batch-created = Charge hinzugefügt.
places-refused-site = In diesem Standort gibt es noch Plätze: verschiebe oder lösche sie zuerst. Es wurde nichts gelöscht.
places-refused-location = In diesem Platz liegen noch weitere Plätze oder Pflanzen (lebende oder archivierte, in deren Verlauf er steht). Es wurde nichts gelöscht.
places-refused-slot = Auf diesem Stellplatz stehen Pflanzen (lebende oder archivierte, die ihn für die Fruchtfolge brauchen). Es wurde nichts gelöscht.

site-kind-apartment = Wohnung
site-kind-garden = Garten
site-kind-balcony = Balkon
site-kind-greenhouse = Gewächshaus
site-kind-windowsill = Fensterbank
site-kind-grow_tent = Growzelt
location-kind-zone = Zone
location-kind-home = Zuhause
location-kind-garden = Garten
location-kind-greenhouse = Gewächshaus
location-kind-building = Gebäude
location-kind-room = Raum
location-kind-balcony = Balkon
location-kind-terrace = Terrasse
location-kind-tent = Zelt
location-kind-bed = Beet
location-kind-shelf = Regal
location-kind-container = Gefäß
substrate-type-soil = Erde
substrate-type-coco = Kokos
substrate-type-clay_pebbles = Blähton
substrate-type-perlite = Perlit
substrate-type-living_soil = lebende Erde
substrate-type-peat = Torf
substrate-type-rockwool_slab = Steinwollmatte
substrate-type-rockwool_plug = Steinwollwürfel
substrate-type-vermiculite = Vermiculit
substrate-type-none = keins
substrate-type-orchid_bark = Orchideenrinde
substrate-type-pon_mineral = Pon (mineralisch)
substrate-type-sphagnum = Sphagnum
substrate-type-hydro_solution = Nährlösung (Hydrokultur)

calendar-months = Monate
calendar-this-month = Dieser Monat
calendar-none = In diesem Monat steht nichts im Kalender.
calendar-today = heute
calendar-feed = Kalender-Abo (iCal)
calendar-feed-intro = Abonniere den Kalender dieses Gartens in deiner Kalender-App. Die Adresse ist geheim: Wer sie hat, sieht den Kalender des Gartens.
calendar-feed-none = Du hast keine Abo-Adresse für diesen Garten.
calendar-feed-active = Deine Abo-Adresse ist aktiv.
calendar-feed-since = Ausgestellt am
calendar-feed-create = Abo-Adresse erstellen
calendar-feed-rotate = Neue Adresse (die alte hört auf zu funktionieren)
calendar-feed-revoke = Adresse widerrufen
calendar-feed-made = Deine neue Abo-Adresse ist fertig.
calendar-feed-shown-once = Kopiere sie jetzt: Sie wird nur dieses eine Mal angezeigt.
calendar-feed-url = Abo-Adresse
calendar-feed-revoked = Die Abo-Adresse ist widerrufen; sie funktioniert nicht mehr.
calendar-feed-exists = Du hast schon eine Abo-Adresse für diesen Garten: Erstelle eine neue, um sie zu ersetzen.
event-kind-care_reminder = Pflege
event-kind-harvest = Ernte
event-kind-phase = Phase
event-kind-sowing = Aussaat
event-kind-task = Aufgabe
event-kind-treatment = Behandlung
month-1 = Januar
month-2 = Februar
month-3 = März
month-4 = April
month-5 = Mai
month-6 = Juni
month-7 = Juli
month-8 = August
month-9 = September
month-10 = Oktober
month-11 = November
month-12 = Dezember
weekday-1 = Mo
weekday-2 = Di
weekday-3 = Mi
weekday-4 = Do
weekday-5 = Fr
weekday-6 = Sa
weekday-7 = So

settings-profile = Profil
settings-preferences = Vorlieben
settings-notifications = Benachrichtigungen
settings-timezone-hint = Ein Zeitzonen-Name wie Europe/Berlin oder UTC. Dein Tag (was heute fällig ist) wird darin gezählt.
settings-save = Speichern
settings-digest-off = aus
settings-digest-daily = täglich
settings-digest-weekly = wöchentlich
settings-password = Passwort
settings-password-intro = Nach der Änderung enden alle Sitzungen, auch diese: Du meldest dich mit dem neuen Passwort wieder an.
settings-password-change = Passwort ändern
settings-password-wrong = Das aktuelle Passwort ist falsch. Es wurde nichts geändert.
settings-keys = API-Schlüssel
settings-keys-intro = Mit Schlüsseln handeln Programme und Assistenten (der Tool-Server) für dich. Ein Schlüssel wird nur einmal angezeigt, wenn er erstellt wird.
settings-keys-none = Du hast keine aktiven API-Schlüssel.
settings-key-create = Schlüssel erstellen
settings-key-shown-once = Kopiere den Schlüssel jetzt: Er wird nur dieses eine Mal angezeigt.
settings-key-all-gardens = alle deine Gärten
settings-key-created = erstellt
settings-key-used = zuletzt benutzt
settings-key-revoke = Widerrufen
settings-key-revoke-named = Den Schlüssel { $label } widerrufen
settings-gardens = Deine Gärten
settings-garden-members = Mitglieder und Zugänge
settings-more = Mehr
settings-more-intro = Alles, was noch keine eigene Seite hat (der Nährstoffplaner, die Plattform-Verwaltung), findest du in der
settings-api-docs = API-Dokumentation (Swagger UI)
settings-done-profile = Profil gespeichert.
settings-done-preferences = Vorlieben gespeichert.
settings-done-key-created = Schlüssel erstellt.
settings-done-key-revoked = Schlüssel widerrufen: Er funktioniert nicht mehr.

members-title = Mitglieder und Zugänge
members-your-role = Deine Rolle
members-members = Mitglieder
members-you = (du)
members-admin-only = Nur die Administratoren des Gartens laden ein, ändern Rollen und verwalten Dienstkonten.
members-role-of = Rolle von { $name }
members-change-role = Rolle ändern
members-remove = Entfernen
members-remove-named = { $name } entfernen
members-leave = Diesen Garten verlassen
members-invitations = Einladungen
members-invitations-none = Keine offenen Einladungen.
members-invitation-until = gültig bis
members-invite = Einladung senden
members-withdraw = Zurückziehen
members-withdraw-named = Die Einladung an { $email } zurückziehen
members-service-accounts = Dienstkonten
members-service-accounts-intro = Konten für Programme (den Tool-Server): Jedes bekommt einen Schlüssel, der nur in diesem Garten gilt und nur einmal angezeigt wird.
members-service-accounts-none = Keine Dienstkonten.
members-create-account = Dienstkonto erstellen
members-personal-settings = Deine eigenen Einstellungen
members-done-invited = Einladung gesendet.
members-done-withdrawn = Einladung zurückgezogen.
members-done-role = Rolle geändert.
members-done-removed = Mitglied entfernt.
members-done-account-created = Dienstkonto erstellt.
members-done-account-removed = Dienstkonto entfernt; sein Schlüssel gilt hier nicht mehr.
members-last-admin = Der letzte Administrator eines Gartens kann weder entfernt noch herabgestuft werden: Mach zuerst jemand anderen zum Administrator. Es wurde nichts geändert.
members-invite-duplicate = Diese Adresse gehört schon einem Mitglied oder hat eine offene Einladung. Es wurde nichts gesendet.

## plants pages
nav-plants = Pflanzen
pl-list-title = Deine Pflanzen
pl-all-plants = Alle Pflanzen
pl-new = Neue Pflanze(n)
pl-new-title = Neue Pflanze(n)
pl-filters = Pflanzen filtern
pl-search-name = Name enthält
pl-all = Alle
pl-filter = Anzeigen
pl-none = Keine Pflanze passt. Lege eine mit „Neue Pflanze(n)“ an.
pl-showing = Pflanzen { $first } bis { $last } von { $total }
pl-pages = Seiten
pl-previous = Vorige Seite
pl-next = Nächste Seite
pl-planted = gepflanzt
pl-created-many = { $count ->
    [one] 1 Pflanze angelegt.
   *[other] { $count } Pflanzen angelegt.
}
pl-species = Art
pl-species-search = Art suchen (deutscher, englischer oder lateinischer Name)
pl-search = Suchen
pl-species-none = Keine Art gefunden. Suche mit einem anderen Namen.
pl-name = Name
pl-name-hint = Freiwillig: leer bleibt es der Name der Art. Mehrere Pflanzen werden nummeriert (Name 1, Name 2, …).
pl-count = Wie viele Pflanzen
pl-location = Standort
pl-slot = Platz
pl-substrate = Substrat
pl-planted-on = Gepflanzt am
pl-none-chosen = Keiner
pl-create = Anlegen
pl-acknowledge = Ich kenne diesen Konflikt und mache trotzdem weiter.
pl-about = Über diese Pflanze
pl-place = Ort
pl-no-place = Noch kein Ort
pl-none-recorded = Nichts eingetragen
pl-archived = Archiviert
pl-form-refused = Nichts wurde gespeichert: siehe das Formular unten.
pl-phase = Phase
pl-phase-none = Diese Pflanze hat noch keine Phase.
pl-phase-days = Tag { $days } von etwa { $expected }
pl-timeline = Verlauf der Phasen
pl-days = { $days ->
    [one] 1 Tag
   *[other] { $days } Tage
}
pl-phase-target = Wechseln zur Phase
pl-phase-next = nächste
pl-phase-move = Phase wechseln
pl-safety-none = Keine Wartezeit läuft: Ernten ist erlaubt.
pl-days-left = { $days ->
    [one] noch 1 Tag
   *[other] noch { $days } Tage
}
pl-no-source = keine Quelle eingetragen
pl-care-log = Pflegeprotokoll
pl-care-none = Noch keine Pflege eingetragen.
pl-care-action-confirmed = erledigt
pl-care-action-snoozed = verschoben
pl-watering = Gießen und Düngen
pl-watering-add = Gießen oder Düngen eintragen
pl-watering-none = Noch kein Gießen eingetragen.
pl-volume = Wasser (Liter)
pl-fertilizer = Dünger
pl-fertilizer-none = Keiner (nur Wasser)
pl-fertilizer-amount = Düngermenge (ml oder g)
pl-ec = EC der Gabe (mS/cm)
pl-ph = pH der Gabe
pl-notes = Notizen
pl-save = Speichern
pl-kind-watering = Gießen
pl-kind-feeding = Düngen
pl-ipm = Schädlinge, Krankheiten und Behandlungen
pl-inspections = Kontrollen
pl-inspection-add = Kontrolle eintragen
pl-inspections-none = Noch keine Kontrolle eingetragen.
pl-pressure = Befallsdruck
pl-pressure-none = keiner
pl-pressure-low = gering
pl-pressure-medium = mittel
pl-pressure-high = hoch
pl-pressure-critical = kritisch
pl-symptom = Was du gesehen hast
pl-treatments = Behandlungen
pl-treatment-add = Behandlung eintragen
pl-treatments-none = Noch keine Behandlung eingetragen.
pl-treatment = Behandlung
pl-choose = Bitte wählen…
pl-treatment-hint = Eine Behandlung mit Wartezeit sperrt die Ernte dieser Pflanze, bis die Wartezeit vorbei ist.
pl-interval-days = { $days ->
    [0] keine Wartezeit
    [one] Wartezeit 1 Tag
   *[other] Wartezeit { $days } Tage
}
pl-dose = Menge
pl-dose-unit = Einheit der Menge
pl-unit-ml-per-l = ml pro Liter
pl-unit-g-per-l = g pro Liter
pl-unit-ml = ml
pl-unit-g = g
pl-unit-count = Stück
pl-harvests = Ernten
pl-harvest-add = Ernte eintragen
pl-harvests-none = Noch keine Ernte eingetragen.
pl-wet-weight = Frischgewicht (Gramm)
pl-harvest-type = Art der Ernte
pl-harvest-type-partial = teilweise
pl-harvest-type-final = endgültig
pl-harvest-type-continuous = fortlaufend
pl-harvest-date = Erntetag
pl-batch-label = Bezeichnung
pl-harvest-refused = Ernte abgelehnt: Eine Wartezeit läuft noch. Nichts wurde gespeichert.
pl-karenz-line = { $treatment }: { $days ->
    [one] noch 1 Tag
   *[other] noch { $days } Tage
}. Keine Ernte bis einschließlich { $until }; ernten darfst du ab { $from }.
pl-details = Einzelheiten
pl-diary = Tagebuch
pl-diary-add = Tagebucheintrag schreiben
pl-diary-none = Noch kein Tagebucheintrag.
pl-title = Titel
pl-text = Eintrag
pl-entry-type = Art des Eintrags
pl-entry-note = Notiz
pl-entry-observation = Beobachtung
pl-entry-measurement = Messung
pl-entry-care = Pflege
pl-entry-problem = Problem
pl-entry-harvest = Ernte
pl-entry-milestone = Meilenstein
pl-photos = Fotos
pl-photos-hint = Auf dem Handy öffnet sich die Kamera. JPEG, PNG oder WebP.
pl-photo-alt = Foto { $n } dieses Eintrags
pl-photo-pending = Foto wird vorbereitet…
pl-done-created = Pflanze angelegt.
pl-done-moved = Phase gewechselt.
pl-done-watered = Gießen eingetragen.
pl-done-inspected = Kontrolle eingetragen.
pl-done-harvested = Ernte eingetragen.
pl-done-noted = Tagebucheintrag gespeichert.
pl-done-treated = Behandlung eingetragen.
pl-done-treated-interval = Behandlung eingetragen. Ihre Wartezeit von { $days } Tagen (Quelle: { $source }) sperrt die Ernte bis einschließlich { $until }; ernten darfst du ab { $from }.
pl-err-rotation = Auf diesem Platz wuchs zu kurz zuvor dieselbe Pflanzenfamilie (Fruchtfolge). Wähle einen anderen Platz oder bestätige unten, um trotzdem zu pflanzen.
pl-err-companion = Neben diesem Platz wächst ein unverträglicher Nachbar. Wähle einen anderen Platz oder bestätige unten, um trotzdem zu pflanzen.
pl-err-resistance = Die Wirkstoffgruppe dieser Behandlung wurde zuletzt zu oft eingesetzt. Wähle eine andere Behandlung oder bestätige unten, um sie trotzdem anzuwenden.
pl-err-substrate = Diese Substratcharge kann nicht noch einmal verwendet werden.
pl-err-phase = Dieser Phasenwechsel ist für diese Pflanze nicht erlaubt.
pl-err-photo-type = Dieser Fototyp wird nicht angenommen: nimm JPEG, PNG oder WebP.
pl-err-photo-bad = Dieses Foto konnte nicht als Bild gelesen werden.
pl-err-photo-quota = Der Fotospeicher des Gartens ist voll.
pl-err-karenz = Eine Wartezeit sperrt die Ernte.

# plant protection (issue 42)
nav-protection = Pflanzenschutz
pp-title = Pflanzenschutz
pp-resistance = Wirkstoffgruppen nahe an ihrer Grenze
pp-resistance-none = Keine Wirkstoffgruppe ist nahe an ihrer Grenze.
pp-resistance-advice = Wechseln Sie den Wirkmechanismus: Eine Gruppe an ihrer Grenze wird abgelehnt, bis das Zeitfenster vorbei ist (oder die Behandlung auf der Seite der Pflanze bestätigt wird).
pp-resistance-near = { $count } von { $limit } Anwendungen in { $window } Tagen: die nächste erreicht die Grenze
pp-resistance-reached = { $count } Anwendungen in { $window } Tagen: die Grenze von { $limit } ist erreicht, die nächste wird abgelehnt
pp-plants-treated = { $count ->
    [one] 1 Pflanze
   *[other] { $count } Pflanzen
}
pp-record = Pflanzenschutz-Aufzeichnung
pp-record-hint = Jede Anwendung des Zeitraums mit Mittel, Zulassungsnummer, Aufwandmenge, Kultur, Entwicklungsstadium und Wartezeit, datiert in der Zeitzone des Gartens. Leere Daten: vom 1. Januar bis heute.
pp-record-from = Von
pp-record-to = Bis
pp-record-format = Format
pp-record-download = Herunterladen

# first run (issue 42)
first-run-confirm-banner = Bitte bestätige deine E-Mail-Adresse: Wir haben einen Link an { $email } geschickt. Nach der Bestätigung meldest du dich einmal neu an.
