-- An order's row is its decision record: a cancellation or a promise is a row of its own, which the
-- writer later finds (locked) and, for a promise, turns into the guard's decision; the writer no
-- longer keeps a ledger row beside every order (shared/reservations/ledger.ts). The new values are
-- appended, so the rows' stored values keep their meaning and InnoDB changes only the definition.
ALTER TABLE orders MODIFY status ENUM('confirmed', 'rejected', 'promised', 'cancelled') NOT NULL;

-- Decisions the ledger took before this, for orders not stored yet: the writer reads them from here now.
INSERT IGNORE INTO orders (id, item_id, user_id, quantity, status, reserved_at)
  SELECT id, owner_id, buyer_id, units, state, decided_at FROM reservation_ledger WHERE kind = 'order' AND state IN ('promised', 'cancelled');

-- The ledger's order rows stay until a later contract removes them: the previous deploy's writer
-- reads them while this one's functions replace it (docs/deploy.md, "Orders' decisions").
