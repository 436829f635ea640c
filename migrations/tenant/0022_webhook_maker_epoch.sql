-- The maker's take-back epoch (platform.users.grants_epoch) when the webhook was made, or when
-- a person last pointed it (`url`) or enabled it again and so became its maker. The delivery
-- worker sends nothing for a webhook whose maker was taken back since, is no longer an admin
-- of the garden, or is gone (the webhook is disabled with the reason instead). Rows from
-- before: epoch 0, so the maker's first take-back ends them.
ALTER TABLE webhooks ADD COLUMN maker_epoch integer NOT NULL DEFAULT 0;
