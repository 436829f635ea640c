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
