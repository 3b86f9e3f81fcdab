-- The reservation pipeline's ledger: every decision about a reservation, orders and coupons alike.
-- Its primary key makes the first decision final, whatever Redis loses: 'cancelled' is written by
-- the compensating path before Redis gives the units back, 'promised' when a retry was told the
-- reservation stands, 'confirmed' or 'rejected' by the writer, with the kind's own row.
CREATE TABLE reservation_ledger (
  id         VARCHAR(96)     NOT NULL,
  kind       ENUM('order', 'coupon') NOT NULL,
  owner_id   VARCHAR(64)     NOT NULL,
  buyer_id   BIGINT UNSIGNED NOT NULL,
  units      INT UNSIGNED    NOT NULL,
  state      ENUM('promised', 'confirmed', 'rejected', 'cancelled') NOT NULL,
  decided_at TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY ledger_owner (kind, owner_id, state)
) ENGINE = InnoDB DEFAULT CHARSET = ascii COLLATE = ascii_bin;

-- What was stored before the ledger existed, so a late duplicate of it is still recognised.
INSERT INTO reservation_ledger (id, kind, owner_id, buyer_id, units, state)
  SELECT id, 'order', item_id, user_id, quantity, status FROM orders;
INSERT INTO reservation_ledger (id, kind, owner_id, buyer_id, units, state)
  SELECT id, 'coupon', deal_id, user_id, 1, 'confirmed' FROM coupons;

-- The coupons' database guard, as items.sold is the orders': issued never exceeds the limit.
ALTER TABLE deals ADD COLUMN issued INT UNSIGNED NOT NULL DEFAULT 0;
UPDATE deals SET issued = (SELECT COUNT(*) FROM coupons WHERE coupons.deal_id = deals.id);
ALTER TABLE deals ADD CONSTRAINT deals_not_overissued CHECK (issued <= coupon_limit);
