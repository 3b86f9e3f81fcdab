-- A reader's newsletters new in the last day are counted against their cap on every new one.
CREATE INDEX subscriptions_by_day ON subscriptions (user_id, subscribed_at);
