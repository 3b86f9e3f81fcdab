-- How many buckets an item's stock is split into in Redis, each on a hash slot of its own, so one
-- hot item is not bound to one shard (shared/reservations/buckets.ts); 1 keeps it whole. Kept in
-- MySQL so reconciliation finds every bucket even when Redis lost what it knew of the layout.
ALTER TABLE items ADD COLUMN buckets TINYINT UNSIGNED NOT NULL DEFAULT 1;
