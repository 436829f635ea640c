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
