-- Each reader sees a newsletter under the name the mail they received gave it: the shared row's
-- name is only whatever the first mail said, which any sender could choose.
ALTER TABLE subscriptions ADD COLUMN name VARCHAR(200) NOT NULL DEFAULT '';

-- Attachments are listed up to a cap; the count says how many there were in all.
ALTER TABLE issues ADD COLUMN attachment_count INT UNSIGNED NOT NULL DEFAULT 0;
