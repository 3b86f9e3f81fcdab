-- Mail kept from a reader's inbox, which they can list and release while its raw message is kept
-- (inboundMail.retentionDays). mail_outcomes stays the record of what receipt did; this is the
-- reader's own list, with what they need to judge each mail and what releasing it needs.
CREATE TABLE quarantined_mail (
  id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  user_id        BIGINT UNSIGNED NOT NULL,
  ses_message_id VARCHAR(64)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  raw_key        VARCHAR(300)    NOT NULL,
  reason         VARCHAR(200)    NOT NULL,
  sender         VARCHAR(400)    NOT NULL DEFAULT '',
  subject        VARCHAR(500)    NOT NULL DEFAULT '',
  authenticated  BOOLEAN         NOT NULL DEFAULT FALSE,
  quarantined_at TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  released_at    TIMESTAMP(3)    NULL,
  PRIMARY KEY (id),
  UNIQUE KEY quarantined_once (ses_message_id, user_id),
  KEY quarantined_by_reader (user_id, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
