-- A buyer's decided reservations, e.g. the coupons the guard rejected, listed with theirs.
CREATE INDEX ledger_buyer ON reservation_ledger (kind, buyer_id, state);
