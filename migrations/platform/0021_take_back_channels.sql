-- Trust III (issue 43): the take-back of an account ends every channel it set up.

-- The invitation a membership came from (NULL: added another way: the garden's creator, the
-- operator, a service account). A take-back removes the members admitted through the account's
-- invitations; the invitation's `invited_by` says whose they were. Memberships from before
-- this column: the accepting transaction wrote the membership and the answer with one `now()`,
-- so an accepted invitation to the member's address with that very time is the one.
ALTER TABLE platform.memberships
    ADD COLUMN invitation_id uuid REFERENCES platform.invitations (id) ON DELETE SET NULL;
UPDATE platform.memberships m SET invitation_id = i.id
FROM platform.invitations i
JOIN platform.users u ON u.email = i.email
WHERE i.status = 'accepted' AND m.tenant_id = i.tenant_id AND m.user_id = u.id
  AND m.created_at = i.answered_at;
CREATE INDEX memberships_invitation_idx ON platform.memberships (invitation_id)
    WHERE invitation_id IS NOT NULL;

-- Bumped by every take-back of the account (a password reset, the first confirmation of an
-- address that could log in unconfirmed). A webhook keeps the epoch of its maker at the time it
-- was made (tenant migration 0022); the delivery worker sends nothing for one made under an
-- earlier epoch, so a webhook the take-back could not reach at once (its garden on a server
-- that did not answer, or made in the same instant) still never delivers again.
ALTER TABLE platform.users ADD COLUMN grants_epoch integer NOT NULL DEFAULT 0;

-- Push subscriptions need a session from now on (an API key is 403). Which credential made an
-- existing subscription was never recorded; one made while its account had no live API key
-- cannot have been made with a key and stays. The others may have been (a leaked key could
-- have pointed the account's digests at someone else's browser): they end, and the person's
-- own browsers subscribe again from the app.
DELETE FROM platform.push_subscriptions s
WHERE EXISTS (
    SELECT 1 FROM platform.api_keys k
    WHERE k.user_id = s.user_id AND k.created_at <= s.created_at
      AND (k.revoked_at IS NULL OR k.revoked_at > s.created_at)
);
