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
