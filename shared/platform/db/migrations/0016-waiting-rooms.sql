-- An item's waiting room as the admin last put it (shared/rooms/): Redis runs the room, this row
-- is what a repair puts back when Redis lost it (a failover under asynchronous replication, an AOF
-- restart), so a sale rebuilt from MySQL comes back behind its room, never open. No foreign key:
-- a room is put on a sale Redis has open, and its row outlives nothing it points at.
CREATE TABLE waiting_rooms (
  item_id                 VARCHAR(64)  NOT NULL,
  opens_at                TIMESTAMP(3) NOT NULL,
  admit_per_second        DOUBLE       NOT NULL,
  pass_seconds            INT UNSIGNED NOT NULL,
  grace_seconds           INT UNSIGNED NOT NULL,
  paused                  BOOLEAN      NOT NULL DEFAULT FALSE,
  status_reads_per_second INT UNSIGNED NOT NULL,
  updated_at              TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (item_id)
) ENGINE = InnoDB DEFAULT CHARSET = ascii COLLATE = ascii_bin;
