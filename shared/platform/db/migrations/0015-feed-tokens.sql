-- Each reader's feeds are read at /feeds/<token>/…, a secret apart from the inbox address so that
-- a leaked feed URL cannot be used to send them mail, nor a leaked address to read their feeds.
-- A poll finds its reader by the token's SHA-256 (token_hash, unique): the index compares hashes,
-- never the token itself, so how long a wrong token takes says nothing about the right one. The
-- token is kept beside its hash only to show it to its owner (GET /me/feeds); this table is in the
-- same database as the mail it opens, so hashing it alone would protect nothing more.
CREATE TABLE feed_tokens (
  user_id    BIGINT UNSIGNED NOT NULL,
  token      CHAR(43)        NOT NULL,
  token_hash CHAR(43)        NOT NULL,
  created_at TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (user_id),
  UNIQUE KEY feed_tokens_hash (token_hash)
) ENGINE = InnoDB DEFAULT CHARSET = ascii COLLATE = ascii_bin;
