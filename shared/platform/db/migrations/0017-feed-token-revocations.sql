-- The feed tokens a rotation replaced whose revocation in Redis has not succeeded yet. MySQL forgets
-- a replaced token at once, but Redis may still know it (a reader it learnt lives a day there) and
-- answer its polls: the rotation writes the row in the transaction that replaces the token, and
-- deletes it once Redis said "-" for it. Until then the retry of the rotation (or any later one) and
-- the sweep every minute (revoke-feed-tokens) try again.
CREATE TABLE feed_token_revocations (
  token_hash  CHAR(43)        NOT NULL,
  user_id     BIGINT UNSIGNED NOT NULL,
  replaced_at TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (token_hash),
  KEY feed_token_revocations_user (user_id)
) ENGINE = InnoDB DEFAULT CHARSET = ascii COLLATE = ascii_bin;
