import { cache } from '../cache/cache';
import type { FillOptions } from '../cache/locked-fill';
import { redis } from '../platform/clients/redis';
import { loggableError, logger } from '../platform/logger';
import { count } from '../platform/metrics';
import { feedKeys, type FeedReader } from './feed-access';
import { buildFeed, FEED_MAX_BYTES, type FeedFormat, type FeedLinks, type FeedScope } from './feeds';

/**
 * Built feeds kept in Redis, which never evicts and holds the sales and sessions: their bytes are
 * held under FEED_CACHE.budgetBytes. Every body is at most FEED_MAX_BYTES, and lives at most
 * WINDOW_MS (its TTL with jitter, no stale serving). Each fill adds its bytes to the counter of its
 * window; a body filled in window n is gone before window n + 2 starts, so the counters of the
 * current window and the one before bound what is alive. A fill is stored only while they are
 * below the budget less one body; past that, feeds are built for each poll and not kept (the
 * token's rate bounds the cost). Fills that pass the check at once can each add one body: the
 * budget can be passed by at most one body per concurrent fill (the API's concurrency).
 */
export const FEED_CACHE = {
  budgetBytes: 64 * 1024 * 1024,
  /**
   * No reading through: a poll has needed Redis already (its token, its version), so Redis failing
   * mid-fill is a retry-safe 503 rather than one 390 KB build per poll at once.
   */
  fill: {
    ttlSeconds: 600,
    jitter: 0.1,
    staleSeconds: 0,
    leaseMs: 5_000,
    maxWaitMs: 8_000,
    earlyRefreshBeta: 0,
    nearCopies: false,
    readThrough: false,
  } satisfies FillOptions,
};

/** An entry's key and its framing beside its body, in bytes: counted with each body, roughly as Redis stores them. */
const ENTRY_OVERHEAD = 200;
const WINDOW_MS = Math.ceil(FEED_CACHE.fill.ttlSeconds * (1 + FEED_CACHE.fill.jitter)) * 1000;
/** Every window's counter in one slot, so the two are read in one MGET. */
const windowKey = (window: number) => `{feed-cache}:bytes:${window}`;

/** The counters of the windows around a time, oldest first, for a reader of the budget from outside (tests, the bench). */
export const feedCacheCounterKeys = (now: number) => [-2, -1, 0, 1].map((offset) => windowKey(Math.floor(now / WINDOW_MS) + offset));

async function cachedBytes(now: number): Promise<number> {
  const window = Math.floor(now / WINDOW_MS);
  const counts = await redis().mget(windowKey(window), windowKey(window - 1));
  return counts.reduce((sum, value) => sum + Number(value ?? 0), 0);
}

async function countFill(bytes: number, now: number): Promise<void> {
  const key = windowKey(Math.floor(now / WINDOW_MS));
  // The counter outlives every body it counts. A count that fails (Redis slow) leaves the body
  // uncounted rather than failing the poll that built it: a failed poll would hand the lease to a
  // waiter, who would build the feed again.
  await Promise.all([redis().incrby(key, bytes), redis().pexpire(key, 2 * WINDOW_MS)]).catch((error: Error) =>
    logger.warn('Feed body not counted against the budget', { error: loggableError(error) }),
  );
}

/**
 * The body of one feed at the reader's current version: from Redis when built since the last
 * change, else built once however many polls ask at once (the locked fill: one builds, the others
 * wait for its body). Kept per base URL too, so a client naming another host never puts its links
 * in the body others are served.
 */
export async function feedBody(reader: FeedReader, scope: FeedScope, format: FeedFormat, links: FeedLinks): Promise<string> {
  const build = async () => {
    count('feeds.build');
    return buildFeed(reader.userId, scope, format, links);
  };
  if ((await cachedBytes(Date.now())) > FEED_CACHE.budgetBytes - FEED_MAX_BYTES - ENTRY_OVERHEAD) {
    count('feeds.overBudget');
    return build();
  }
  const keys = feedKeys(reader.hash);
  return cache().getOrFill({ versionKey: keys.version, prefix: keys.bodies, suffix: `${format}:${scope}:${links.base}` }, FEED_CACHE.fill, async () => {
    const body = await build();
    await countFill(Buffer.byteLength(body) + ENTRY_OVERHEAD, Date.now());
    return body;
  });
}
