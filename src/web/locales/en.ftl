# Kultiva pages, English. Every message here exists in de.ftl too (a unit test checks).
skip-to-content = Skip to content
nav-label = Main
nav-today = Today
nav-api = API
sign-out = Sign out
gardens-label = Your gardens
offline-note = No connection: your last action did not reach the server. Try again when you are back online.
language = Language
error-title = Something went wrong
back-home = Back to your gardens
try-again = Try again

err-missing = this field is required.
err-too-short = too short.
err-too-long = too long.
err-invalid = not a valid value.
err-not-found = Not found: it does not exist or is not yours to see.
err-duplicate = This already exists.
err-unauthorized = Wrong e-mail address or password.
err-link-invalid = This link is invalid, already used or expired.
err-forbidden = You are not allowed to do this.
err-email-not-verified = Please confirm your e-mail address first: follow the link in the mail we sent you.
err-locked = Too many failed sign-ins: this account is locked for a while. Try again later.
err-too-many = Too many attempts from here. Please wait a minute and try again.
err-unavailable = The service is briefly unavailable. Please try again in a moment.
err-too-large = What you sent is too large.
err-conflict = This cannot be done in the current state.
err-internal = An unexpected error happened on our side. It has been logged.
err-refused = This could not be done.
err-csrf = This form has expired or did not come from this site. Reload the page and try again.

field-email = E-mail address
field-password = Password
field-new-password = New password
field-name = Your name
field-link = Link
field-remember = Stay signed in on this device

sign-in-title = Sign in
sign-in = Sign in
sign-up-title = Create your account
sign-up = Create account
sign-up-intro = Your account comes with a garden of your own. You can invite others later.
sign-up-done-title = Almost there
sign-up-done = Your account is created. We sent you a mail: follow its link to confirm your address, then sign in.
have-account = Already have an account?
no-account = New here?
forgot-password = Forgot your password?
password-hint = At least 10 characters.
signed-out = You are signed out.
verified-sign-in = Your address is confirmed. You can sign in now.

verify-title = Confirm your e-mail address
verify-intro = Confirm that this address is yours.
verify-button = Confirm address

reset-title = Reset your password
reset-intro = Enter your e-mail address. If it belongs to an account, we send a link to set a new password.
reset-send = Send the link
reset-sent = If the address belongs to an account, a mail with a link is on its way. The link is valid for one hour.
reset-new-title = Choose a new password
reset-save = Save the new password
reset-done = Your password is changed and every session has ended. Sign in with the new password.

invitation-title = Invitation to a garden
invitation-intro = You were invited to join a garden. Accept to see it among your gardens.
invitation-accept = Accept the invitation
invitation-sign-in-first = Sign in (or create an account with the invited address) to accept the invitation.
invitation-invalid = This invitation is invalid, expired, already answered, or meant for another address.
invitation-joined = You joined the garden.

gardens-title = Your gardens
gardens-none = You are not a member of any garden yet.
role-admin = Administrator
role-grower = Grower
role-viewer = Viewer

today-care = Care due
today-care-none = No care is due. Well done.
today-tasks = Tasks due
today-tasks-none = No tasks are due.
today-harvest = Ready to harvest
today-harvest-none = No plant is ready to harvest yet.
today-safety = Safety intervals running
today-safety-none = No safety interval is running: harvests are not blocked.
today-diary = Latest diary entries
today-diary-none = No diary entries yet.
due-on = due
safety-until = blocked until
safety-harvest-from = harvest from

safety-source = source

care-watering = Watering
care-fertilizing = Fertilising
care-repotting = Repotting
care-pruning = Pruning
care-pest-check = Pest check
care-overwintering = Overwintering
care-due-today = due today
care-overdue-days = { $days ->
    [one] overdue by 1 day
   *[other] overdue by { $days } days
}
care-confirm = Done
care-snooze = Tomorrow
care-confirmed = Care recorded.
care-snoozed = Reminder moved to tomorrow.
care-confirmed-next = Recorded. Next time: { $date }.
care-snoozed-next = Moved to { $date }.

## places, calendar and settings pages
nav-places = Places
nav-calendar = Calendar
nav-settings = Settings

field-place-name = Name
field-kind = Kind
field-parent = Place
field-slot-code = Slot code
field-capacity = Plants it holds
field-substrate = Substrate
field-substrate-type = Type
field-reusable = Reusable (can be used for more than one cycle)
field-label = Label
field-mixed-on = Mixed on
field-month = Month
field-timezone = Time zone
field-notify-email = E-mail notifications
field-notify-care-due = Reminders of care that is due
field-notify-push = Also send the summary to my browsers (Web Push)
field-notify-digest = Summary mail
field-digest-hour = Hour of the summary mail (0–23, your time)
field-current-password = Current password
field-key-scope = Gardens the key works in
field-role = Role

places-sites = Sites, locations and slots
places-sites-none = No sites yet. A site is a place you garden in: a balcony, a greenhouse, a flat.
places-locations-none = No locations in this site yet.
places-slots = Slots
places-add-site = Add a site
places-add-location = Add a location
places-add-sublocation = Add a location inside
places-add-slot = Add a slot
places-change = Rename or delete
places-rename = Save the name
places-delete = Delete
places-delete-named = Delete { $name }
places-admin-only = Only the garden's administrators change sites, locations and slots.
places-slot-code-hint = Capital letters and digits joined by _, for example BOX1_A1; unique in the garden.
places-slot-use = { $live } of { $capacity } places taken
places-substrates = Your substrates
places-substrates-none = No substrates of your own yet; the shared catalogue's are always there.
places-add-substrate = Add a substrate
places-reuse-cycles = up to { $cycles } cycles
places-batches = Substrate batches
places-batches-none = No substrate batches yet.
places-add-batch = Add a batch
places-batch-cycles = cycle { $used } of { $max }
places-live-plants = { $count ->
    [one] 1 plant
   *[other] { $count } plants
}
places-mixed-on = mixed on
places-done-site-created = Site added.
places-done-site-renamed = Site renamed.
places-done-site-deleted = Site deleted.
places-done-location-created = Location added.
places-done-location-renamed = Location renamed.
places-done-location-deleted = Location deleted.
places-done-slot-created = Slot added.
places-done-slot-deleted = Slot deleted.
places-done-substrate-created = Substrate added.
places-done-batch-created = Batch added.
places-refused-site = This site still has locations: move or delete them first. Nothing was deleted.
places-refused-location = This location still holds locations inside it or plants (live ones, or archived ones that keep it in their history). Nothing was deleted.
places-refused-slot = This slot holds plants (live ones, or archived ones that keep it in the crop-rotation history). Nothing was deleted.

site-kind-apartment = flat
site-kind-garden = garden
site-kind-balcony = balcony
site-kind-greenhouse = greenhouse
site-kind-windowsill = windowsill
site-kind-grow_tent = grow tent
location-kind-zone = zone
location-kind-home = home
location-kind-garden = garden
location-kind-greenhouse = greenhouse
location-kind-building = building
location-kind-room = room
location-kind-balcony = balcony
location-kind-terrace = terrace
location-kind-tent = tent
location-kind-bed = bed
location-kind-shelf = shelf
location-kind-container = container
substrate-type-soil = soil
substrate-type-coco = coco
substrate-type-clay_pebbles = clay pebbles
substrate-type-perlite = perlite
substrate-type-living_soil = living soil
substrate-type-peat = peat
substrate-type-rockwool_slab = rockwool slab
substrate-type-rockwool_plug = rockwool plug
substrate-type-vermiculite = vermiculite
substrate-type-none = none
substrate-type-orchid_bark = orchid bark
substrate-type-pon_mineral = pon (mineral)
substrate-type-sphagnum = sphagnum
substrate-type-hydro_solution = hydroponic solution

calendar-months = Months
calendar-this-month = This month
calendar-none = Nothing in the calendar this month.
calendar-today = today
calendar-feed = Calendar subscription (iCal)
calendar-feed-intro = Subscribe to this garden's calendar in your calendar app. The address is secret: whoever has it sees the garden's calendar.
calendar-feed-none = You have no subscription address for this garden.
calendar-feed-active = Your subscription address is active.
calendar-feed-since = Issued on
calendar-feed-create = Create a subscription address
calendar-feed-rotate = New address (the old one stops working)
calendar-feed-revoke = Revoke the address
calendar-feed-made = Your new subscription address is ready.
calendar-feed-shown-once = Copy it now: it is shown only this once.
calendar-feed-url = Subscription address
calendar-feed-revoked = The subscription address is revoked; it no longer works.
calendar-feed-exists = You already have a subscription address for this garden: make a new one to replace it.
event-kind-care_reminder = care
event-kind-harvest = harvest
event-kind-phase = phase
event-kind-sowing = sowing
event-kind-task = task
event-kind-treatment = treatment
month-1 = January
month-2 = February
month-3 = March
month-4 = April
month-5 = May
month-6 = June
month-7 = July
month-8 = August
month-9 = September
month-10 = October
month-11 = November
month-12 = December
weekday-1 = Mon
weekday-2 = Tue
weekday-3 = Wed
weekday-4 = Thu
weekday-5 = Fri
weekday-6 = Sat
weekday-7 = Sun

settings-profile = Profile
settings-preferences = Preferences
settings-notifications = Notifications
settings-timezone-hint = A time zone name such as Europe/Berlin or UTC. Your day (what is due today) is counted in it.
settings-save = Save
settings-digest-off = off
settings-digest-daily = daily
settings-digest-weekly = weekly
settings-password = Password
settings-password-intro = After the change every session ends, this one too: you sign in again with the new password.
settings-password-change = Change the password
settings-password-wrong = The current password is wrong. Nothing was changed.
settings-keys = API keys
settings-keys-intro = Keys let programs and assistants (the tool server) act for you. A key is shown once, when it is made.
settings-keys-none = You have no active API keys.
settings-key-create = Create a key
settings-key-shown-once = Copy the key now: it is shown only this once.
settings-key-all-gardens = all your gardens
settings-key-created = made
settings-key-used = last used
settings-key-revoke = Revoke
settings-key-revoke-named = Revoke the key { $label }
settings-gardens = Your gardens
settings-garden-members = Members and access
settings-more = More
settings-more-intro = Everything without a page yet (the nutrition planner, the platform administration) is in the
settings-api-docs = API documentation (Swagger UI)
settings-done-profile = Profile saved.
settings-done-preferences = Preferences saved.
settings-done-key-created = Key created.
settings-done-key-revoked = Key revoked: it no longer works.

members-title = Members and access
members-your-role = Your role
members-members = Members
members-you = (you)
members-admin-only = Only the garden's administrators invite, change roles and manage service accounts.
members-role-of = Role of { $name }
members-change-role = Change the role
members-remove = Remove
members-remove-named = Remove { $name }
members-leave = Leave this garden
members-invitations = Invitations
members-invitations-none = No open invitations.
members-invitation-until = valid until
members-invite = Send the invitation
members-withdraw = Withdraw
members-withdraw-named = Withdraw the invitation of { $email }
members-service-accounts = Service accounts
members-service-accounts-intro = Accounts for programs (the tool server): each gets a key that works in this garden only, shown once.
members-service-accounts-none = No service accounts.
members-create-account = Create a service account
members-personal-settings = Your own settings
members-done-invited = Invitation sent.
members-done-withdrawn = Invitation withdrawn.
members-done-role = Role changed.
members-done-removed = Member removed.
members-done-account-created = Service account created.
members-done-account-removed = Service account removed; its key no longer works here.
members-last-admin = The last administrator of a garden can be neither removed nor demoted: make someone else an administrator first. Nothing was changed.
members-invite-duplicate = This address already belongs to a member or has an open invitation. Nothing was sent.

## plants pages
nav-plants = Plants
pl-list-title = Your plants
pl-all-plants = All plants
pl-new = New plant(s)
pl-new-title = New plant(s)
pl-filters = Filter plants
pl-search-name = Name contains
pl-all = All
pl-filter = Show
pl-none = No plant matches. Create one with "New plant(s)".
pl-showing = Plants { $first } to { $last } of { $total }
pl-pages = Pages
pl-previous = Previous page
pl-next = Next page
pl-planted = planted
pl-created-many = { $count ->
    [one] 1 plant created.
   *[other] { $count } plants created.
}
pl-species = Species
pl-species-search = Search a species (name, Latin or common)
pl-search = Search
pl-species-none = No species found. Search by another name.
pl-name = Name
pl-name-hint = Optional: the species' name when left empty. Several plants are numbered (Name 1, Name 2, …).
pl-count = How many plants
pl-location = Location
pl-slot = Slot
pl-substrate = Substrate
pl-planted-on = Planted on
pl-none-chosen = None
pl-create = Create
pl-acknowledge = I know about this conflict and want to go ahead.
pl-about = About this plant
pl-place = Place
pl-no-place = No place yet
pl-none-recorded = None recorded
pl-archived = Archived
pl-form-refused = Nothing was saved: see the form below.
pl-phase = Phase
pl-phase-none = This plant has no phase yet.
pl-phase-days = day { $days } of about { $expected }
pl-timeline = Phase timeline
pl-days = { $days ->
    [one] 1 day
   *[other] { $days } days
}
pl-phase-target = Move to phase
pl-phase-next = next
pl-phase-move = Change phase
pl-safety-none = No safety interval is running: harvesting is allowed.
pl-days-left = { $days ->
    [one] 1 day left
   *[other] { $days } days left
}
pl-no-source = no source recorded
pl-care-log = Care log
pl-care-none = No care recorded yet.
pl-care-action-confirmed = done
pl-care-action-snoozed = moved
pl-watering = Watering and feeding
pl-watering-add = Record a watering or feeding
pl-watering-none = No watering recorded yet.
pl-volume = Water (litres)
pl-fertilizer = Fertiliser
pl-fertilizer-none = None (water only)
pl-fertilizer-amount = Fertiliser amount (ml or g)
pl-ec = EC as fed (mS/cm)
pl-ph = pH as fed
pl-notes = Notes
pl-save = Save
pl-kind-watering = Watering
pl-kind-feeding = Feeding
pl-ipm = Pests, diseases and treatments
pl-inspections = Inspections
pl-inspection-add = Record an inspection
pl-inspections-none = No inspection recorded yet.
pl-pressure = Pest pressure
pl-pressure-none = none
pl-pressure-low = low
pl-pressure-medium = medium
pl-pressure-high = high
pl-pressure-critical = critical
pl-symptom = What you saw
pl-treatments = Treatments
pl-treatment-add = Record a treatment
pl-treatments-none = No treatment recorded yet.
pl-treatment = Treatment
pl-choose = Choose…
pl-treatment-hint = A treatment with a safety interval blocks harvesting this plant until the interval has passed.
pl-interval-days = { $days ->
    [0] no safety interval
    [one] safety interval 1 day
   *[other] safety interval { $days } days
}
pl-dose = Dose
pl-dose-unit = Dose unit
pl-unit-ml-per-l = ml per litre
pl-unit-g-per-l = g per litre
pl-unit-ml = ml
pl-unit-g = g
pl-unit-count = pieces
pl-harvests = Harvests
pl-harvest-add = Record a harvest
pl-harvests-none = No harvest recorded yet.
pl-wet-weight = Fresh weight (grams)
pl-harvest-type = Kind of harvest
pl-harvest-type-partial = partial
pl-harvest-type-final = final
pl-harvest-type-continuous = continuous
pl-harvest-date = Harvest day
pl-batch-label = Label
pl-harvest-refused = Harvest refused: a safety interval is still running. Nothing was saved.
pl-karenz-line = { $treatment }: { $days ->
    [one] 1 day left
   *[other] { $days } days left
}. No harvest until { $until }; harvesting is allowed from { $from }.
pl-details = Details
pl-diary = Diary
pl-diary-add = Write a diary entry
pl-diary-none = No diary entry yet.
pl-title = Title
pl-text = Entry
pl-entry-type = Kind of entry
pl-entry-note = Note
pl-entry-observation = Observation
pl-entry-measurement = Measurement
pl-entry-care = Care
pl-entry-problem = Problem
pl-entry-harvest = Harvest
pl-entry-milestone = Milestone
pl-photos = Photos
pl-photos-hint = On a phone this opens the camera. JPEG, PNG or WebP.
pl-photo-alt = Photo { $n } of this entry
pl-photo-pending = Photo being prepared…
pl-done-created = Plant created.
pl-done-moved = Phase changed.
pl-done-watered = Watering recorded.
pl-done-inspected = Inspection recorded.
pl-done-harvested = Harvest recorded.
pl-done-noted = Diary entry saved.
pl-done-treated = Treatment recorded.
pl-done-treated-interval = Treatment recorded. Its safety interval of { $days } days (source: { $source }) blocks harvesting until { $until }; harvesting is allowed from { $from }.
pl-err-rotation = The same plant family grew in this slot too recently (crop rotation). Choose another slot, or confirm below to plant anyway.
pl-err-companion = An incompatible neighbour grows next to this slot. Choose another slot, or confirm below to plant anyway.
pl-err-resistance = This treatment's resistance group was used too often recently. Choose another treatment, or confirm below to apply it anyway.
pl-err-substrate = This substrate batch cannot be used again.
pl-err-phase = This phase change is not allowed for this plant.
pl-err-photo-type = This photo's type is not accepted: use JPEG, PNG or WebP.
pl-err-photo-bad = This photo could not be read as a picture.
pl-err-photo-quota = The garden's photo storage is full.
pl-err-karenz = Harvesting is blocked by a safety interval.

# plant protection (issue 42)
nav-protection = Protection
pp-title = Plant protection
pp-resistance = Resistance groups near their limit
pp-resistance-none = No resistance group is near its limit.
pp-resistance-advice = Rotate to another mode of action: a group at its limit is refused until the window has passed (or the treatment is acknowledged on the plant's page).
pp-resistance-near = { $count } of { $limit } applications in { $window } days: the next one reaches the limit
pp-resistance-reached = { $count } applications in { $window } days: the limit of { $limit } is reached, the next one is refused
pp-plants-treated = { $count ->
    [one] 1 plant
   *[other] { $count } plants
}
pp-record = Plant-protection record
pp-record-hint = Every application of the period with product, authorisation number, dose, crop, growth stage and safety interval, dated in the garden's time zone. Empty dates: from 1 January to today.
pp-record-from = From
pp-record-to = To
pp-record-format = Format
pp-record-download = Download

# first run (issue 42)
first-run-confirm-banner = Please confirm your e-mail address: we sent a link to { $email }. Confirming signs you out once; then sign in again.
