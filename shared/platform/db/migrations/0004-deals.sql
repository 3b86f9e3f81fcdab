-- Time deals: a window in which at most coupon_limit coupons are issued, one per user.
CREATE TABLE deals (
  id           VARCHAR(64)  NOT NULL,
  title        VARCHAR(200) NOT NULL,
  opens_at     TIMESTAMP(3) NOT NULL,
  closes_at    TIMESTAMP(3) NOT NULL,
  coupon_limit INT UNSIGNED NOT NULL,
  created_at   TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at   TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  CONSTRAINT deals_window CHECK (opens_at < closes_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- The unique (deal, user) key means a redelivered or duplicated issue can never add a second row.
CREATE TABLE coupons (
  id        VARCHAR(96)     NOT NULL,
  deal_id   VARCHAR(64)     NOT NULL,
  user_id   BIGINT UNSIGNED NOT NULL,
  issued_at TIMESTAMP(3)    NOT NULL,
  stored_at TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY coupons_one_per_user (deal_id, user_id),
  KEY coupons_user (user_id)
) ENGINE = InnoDB DEFAULT CHARSET = ascii COLLATE = ascii_bin;
