-- 0014 copied the ledger's promised and cancelled orders into orders with reserved_at = the ledger
-- row's decided_at (when the promise or cancellation was written), not when the order was reserved.
-- An order's id carries its reservation time: milliseconds since the epoch in 9 base-36 digits after
-- its item and a dot (shared/reservations/ids.ts; an item id has no dot). The rows 0014 wrote are
-- those whose reserved_at is still their ledger row's decided_at, the ledger row still a promise or
-- cancellation, and whose id has that shape (any other is left as it is). Bounded by the ledger's
-- order rows, each orders row found by its primary key: row locks only, no table lock. Decimal, not
-- floating, division: exact to the millisecond.
UPDATE orders
  JOIN reservation_ledger ON reservation_ledger.id = orders.id AND reservation_ledger.kind = 'order'
  SET orders.reserved_at = FROM_UNIXTIME(CAST(CONV(SUBSTRING(orders.id, LOCATE('.', orders.id) + 1, 9), 36, 10) AS DECIMAL(20, 0)) / 1000)
  WHERE reservation_ledger.state IN ('promised', 'cancelled') AND orders.reserved_at = reservation_ledger.decided_at
    AND orders.id REGEXP '^[A-Za-z0-9_-]{1,64}[.][0-9a-z]{9}';
