-- Whether SES authenticated the newsletter's sender (DMARC PASS). Rows from before were created
-- by any mail at all, so they start unauthenticated; authenticated mail that finds one marks it.
ALTER TABLE newsletters ADD COLUMN authenticated BOOLEAN NOT NULL DEFAULT FALSE;
