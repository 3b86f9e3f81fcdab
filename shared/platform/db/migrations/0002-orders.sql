-- A flash sale: initial_stock is what the admin opened the sale with; sold only grows, inside the
-- writer's transaction, and the CHECK is the last line against overselling.
CREATE TABLE items (
  id             VARCHAR(64)  NOT NULL,
  initial_stock  INT UNSIGNED NOT NULL,
  sold           INT UNSIGNED NOT NULL DEFAULT 0,
  per_user_limit INT UNSIGNED NOT NULL,
  created_at     TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at     TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  CONSTRAINT items_not_oversold CHECK (sold <= initial_stock)
) ENGINE = InnoDB DEFAULT CHARSET = ascii COLLATE = ascii_bin;

-- One row per order the Redis reservation accepted. 'rejected' marks an order the database guard
-- refused because it would have oversold (Redis lost writes); reconciliation counts those.
CREATE TABLE orders (
  id          VARCHAR(96)     NOT NULL,
  item_id     VARCHAR(64)     NOT NULL,
  user_id     BIGINT UNSIGNED NOT NULL,
  quantity    INT UNSIGNED    NOT NULL,
  status      ENUM('confirmed', 'rejected') NOT NULL,
  reserved_at TIMESTAMP(3)    NOT NULL,
  written_at  TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY orders_item_status (item_id, status),
  KEY orders_user (user_id)
) ENGINE = InnoDB DEFAULT CHARSET = ascii COLLATE = ascii_bin;
