-- Each reader's inbound address is <token>@<inbound domain>; rotating replaces the token, so mail
-- to the old address no longer finds anyone.
CREATE TABLE inbox_addresses (
  user_id    BIGINT UNSIGNED NOT NULL,
  token      VARCHAR(32)     NOT NULL,
  created_at TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (user_id),
  UNIQUE KEY inbox_addresses_token (token)
) ENGINE = InnoDB DEFAULT CHARSET = ascii COLLATE = ascii_bin;

-- A newsletter is known by its List-Id, or by its sender without one. identity_key is the SHA-256
-- of the normalised identity: the unique backstop behind the lock-guarded find-or-create.
CREATE TABLE newsletters (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  identity_key CHAR(64)        CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  identity     VARCHAR(320)    NOT NULL,
  kind         ENUM('list-id', 'sender') NOT NULL,
  name         VARCHAR(200)    NOT NULL,
  created_at   TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY newsletters_identity (identity_key)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE subscriptions (
  user_id       BIGINT UNSIGNED NOT NULL,
  newsletter_id BIGINT UNSIGNED NOT NULL,
  muted         BOOLEAN         NOT NULL DEFAULT FALSE,
  subscribed_at TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (user_id, newsletter_id)
) ENGINE = InnoDB;

-- One row per (SES message, reader): a redelivered receipt event finds its row and files nothing.
CREATE TABLE issues (
  id               BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  user_id          BIGINT UNSIGNED NOT NULL,
  newsletter_id    BIGINT UNSIGNED NOT NULL,
  ses_message_id   VARCHAR(64)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  subject          VARCHAR(500)    NOT NULL,
  sender           VARCHAR(400)    NOT NULL,
  sent_at          TIMESTAMP(3)    NULL,
  html             MEDIUMTEXT      NULL,
  text             MEDIUMTEXT      NULL,
  list_unsubscribe VARCHAR(2000)   NULL,
  attachments      TEXT            NOT NULL,
  read_at          TIMESTAMP(3)    NULL,
  filed_at         TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY issues_once (ses_message_id, user_id),
  KEY issues_inbox (user_id, newsletter_id, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- What became of every (message, recipient): filed, or why not. Counts of dropped and
-- quarantined mail come from here; quarantined mail stays in the raw-mail bucket under raw_key.
CREATE TABLE mail_outcomes (
  ses_message_id VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  recipient      VARCHAR(320) NOT NULL,
  outcome        ENUM('filed', 'duplicate', 'muted', 'quarantined', 'dropped', 'rejected') NOT NULL,
  reason         VARCHAR(200) NOT NULL DEFAULT '',
  user_id        BIGINT UNSIGNED NULL,
  raw_key        VARCHAR(300) NOT NULL,
  recorded_at    TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (ses_message_id, recipient),
  KEY mail_outcomes_outcome (outcome, recorded_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
