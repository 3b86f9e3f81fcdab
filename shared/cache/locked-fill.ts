import type { Redis } from 'ioredis';
import { UnavailableError } from '../platform/errors';
import { loggableError, logger } from '../platform/logger';
import { count } from '../platform/metrics';
import type { RedisClient } from '../platform/redis/script';
import { channelOf, decodeEntry, entryKeyOf, type CacheKey, type Entry } from './entries';
import { Leases } from './leases';
import { NEAR_COPY_CHARS, NearCopies } from './near-copies';
import { NO_VERSION, Versions } from './versions';
import { FillWaiters } from './waiters';

export type { CacheKey } from './entries';

/** Reads that find the version moved on again before giving up and treating the entry as missing. */
const VERSION_CHASES = 3;

export interface FillOptions {
  ttlSeconds: number;
  /** Spread of the TTL, as a fraction, so entries filled together do not expire together. */
  jitter?: number;
  /** How long an expired entry may still be served while one caller refreshes it. */
  staleSeconds?: number;
  /** How long a filler may take before another caller may take over. */
  leaseMs?: number;
  /**
   * The longest a caller waits for others' fills (each lease that runs out goes to one waiter)
   * before it gives up with a 503: keep it below the function's timeout.
   */
  maxWaitMs?: number;
  /** XFetch β: refresh early with rising probability as expiry nears; 0 turns it off. */
  earlyRefreshBeta?: number;
  /**
   * Keep near copies (the default), so a hit asks Redis for the version alone. Off for key spaces
   * an instance reads too rarely for a copy to be read again; they keep no version key either.
   */
  nearCopies?: boolean;
  /**
   * When Redis fails mid-way (a command timed out), call the loader directly (the default), or
   * give up with a 503. Off where the loader is too costly to run once per caller at once (a feed's
   * build), or where the caller has needed Redis anyway and a retry will find it again.
   */
  readThrough?: boolean;
}

/**
 * Values are strings, stored and returned as they are: a hit costs no parse or serialisation, and
 * an HTTP handler can answer with the cached body itself.
 */
export interface LockedCache {
  getOrFill(key: CacheKey, options: FillOptions, loader: () => Promise<string>): Promise<string>;
  /** Moves readers to a new key space; returns the new version. */
  bumpVersion(versionKey: string): Promise<string>;
  /** Closes the subscriber connection, if waiting ever opened one. */
  close(): void;
}

const UNREACHABLE = new Set(['reconnecting', 'close', 'end']);
let degradedLogged = false;

/** Marks a failure that is the caller's to see (its loader's, or a wait past maxWaitMs), apart from Redis failures. */
class LoaderFailure {
  constructor(readonly error: unknown) {}
}

function degrade(error: unknown): void {
  if (degradedLogged) return;
  degradedLogged = true;
  logger.error('Cache unavailable; reading through to the source', { error: loggableError(error) });
}

/** XFetch (Vattani et al. 2015), with the caller's one draw of ln(rand): due once expired, or early with rising odds. */
function refreshDue(entry: Entry, now: number, beta: number, logRandom: number): boolean {
  return now >= entry.expires || (beta > 0 && now - entry.delta * beta * logRandom >= entry.expires);
}

interface Read {
  version: string;
  entry: Entry | null;
}

export interface LockedCacheOptions {
  /** Bound on this instance's near copies, in characters of key and value plus a per-copy overhead (about bytes). */
  nearCopyChars?: number;
}

/**
 * A look-aside cache whose fills are coordinated through Redis, so that across every instance
 * one caller loads a missing value while the others wait to be woken (a lease, as in Facebook's
 * memcache). A lease holder that pauses past its lease cannot overwrite a newer value; one that
 * dies is replaced by one waiter when the lease expires. Hot entries are refreshed early (XFetch)
 * and served stale while one caller refreshes them, and served from a near copy while their version
 * holds. Without Redis, the loader is called directly (unless readThrough is off: then 503).
 */
export function createLockedCache(
  redis: RedisClient,
  connectSubscriber: () => Redis,
  { nearCopyChars = NEAR_COPY_CHARS }: LockedCacheOptions = {},
): LockedCache {
  const waiters = new FillWaiters(connectSubscriber);
  const near = new NearCopies(nearCopyChars);
  const versions = new Versions(redis);
  const leases = new Leases(redis);

  /**
   * The entry under the current version, in one round trip while the version holds still: the
   * version and the entry this instance expects are read together (MGET is atomic, and both keys
   * share a slot), so a bump committed before the read is always seen. Only after a bump does a
   * read take a second round trip, with the new version.
   */
  async function readNow(key: CacheKey, keepCopy: boolean): Promise<Read> {
    let version = versions.seen(key.versionKey);
    for (let chase = 0; ; chase++) {
      const entryKey = entryKeyOf(key, version);
      const [current, raw] = await redis.mget(key.versionKey, entryKey);
      const actual = current ?? NO_VERSION;
      if (actual === version) {
        if (!raw) {
          near.drop(entryKey);
          return { version, entry: null };
        }
        const entry = decodeEntry(raw);
        if (keepCopy) near.keepUnder(version, entryKey, entry);
        return { version, entry };
      }
      version = await versions.moveTo(key.versionKey, version, actual);
      // A version bumped again and again: its entries would be outdated as soon as read anyway.
      if (chase === VERSION_CHASES) return { version, entry: null };
    }
  }

  /**
   * Reads of one entry asked for on this instance before the first of them is sent share that one
   * read: an instance serving many callers at once (the twin's, or any host that runs invocations
   * concurrently) sends one MGET per round of its event loop, not one per caller. Otherwise, just
   * after a bump, every caller pulls the entry of the version it last saw (a feed: 390 KB) only to
   * find the version moved, and a thousand of them keep the connection busy past its command
   * timeout. A read that is already sent is never joined: it may have reached Redis before the
   * joining caller's write (a bump) committed.
   */
  const pendingReads = new Map<string, Promise<Read>>();
  function read(key: CacheKey, keepCopy: boolean): Promise<Read> {
    const id = `${key.versionKey}\n${key.prefix}\n${key.suffix}\n${keepCopy}`;
    let pending = pendingReads.get(id);
    if (!pending) {
      pending = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        pendingReads.delete(id);
        return readNow(key, keepCopy);
      });
      pendingReads.set(id, pending);
    }
    return pending;
  }

  async function fill(version: string, entryKey: string, token: string, options: FillOptions, loader: () => Promise<string>): Promise<string> {
    count('cache.fill');
    const started = Date.now();
    let value: string;
    try {
      value = await loader();
    } catch (error) {
      // Let a waiter take over now rather than when the lease runs out.
      await leases.release(entryKey, token).catch(() => undefined);
      throw error;
    }
    const now = Date.now();
    const ttlMs = options.ttlSeconds * 1000 * (1 + (options.jitter ?? 0.1) * (Math.random() * 2 - 1));
    const physicalMs = Math.ceil(ttlMs + (options.staleSeconds ?? 60) * 1000);
    const entry: Entry = { value, expires: Math.floor(now + ttlMs), delta: now - started };
    // Once loaded, the value is this caller's answer even if Redis fails to keep it; it is kept near
    // only if Redis kept it, so a filler that lost its lease never serves its own value again.
    const stored = await leases
      .fill(entryKey, token, entry, physicalMs)
      .catch((error: Error) => logger.warn('Cache fill not stored', { key: entryKey, error: loggableError(error) }));
    if (stored === true && (options.nearCopies ?? true)) near.keepUnder(version, entryKey, entry);
    return value;
  }

  /** Redis failing at any step means reading through to the source; the loader's own failure is thrown. */
  async function getOrFill(key: CacheKey, options: FillOptions, loader: () => Promise<string>): Promise<string> {
    try {
      // Still connecting at a cold start is fine (commands queue); lost is not worth waiting for.
      if (UNREACHABLE.has(redis.status)) throw new Error(`Redis is ${redis.status}`);
      return await coordinatedFill(key, options, () => loader().catch((error: unknown) => Promise.reject(new LoaderFailure(error))));
    } catch (error) {
      if (error instanceof LoaderFailure) throw error.error;
      // A retry-safe 503 (the API's error handler logs it) rather than one load per caller at once.
      if (options.readThrough === false) throw new UnavailableError('The value is being loaded, try again shortly', error);
      degrade(error);
      return loader();
    }
  }

  async function coordinatedFill(key: CacheKey, options: FillOptions, loader: () => Promise<string>): Promise<string> {
    const leaseMs = options.leaseMs ?? 5_000;
    const deadline = Date.now() + (options.maxWaitMs ?? 10_000);
    const beta = options.earlyRefreshBeta ?? 1;
    // One draw per request: the near copy and the entry behind it get the same XFetch verdict.
    const logRandom = Math.log(Math.random());

    const seen = versions.seen(key.versionKey);
    const copy = near.get(entryKeyOf(key, seen));
    if (copy && !refreshDue(copy, Date.now(), beta, logRandom)) {
      const current = (await redis.get(key.versionKey)) ?? NO_VERSION;
      if (current === seen) {
        count('cache.nearCopyHit');
        return copy.value;
      }
      await versions.moveTo(key.versionKey, seen, current);
    }

    const keepCopies = options.nearCopies ?? true;
    let { version, entry } = await read(key, keepCopies);
    if (version === NO_VERSION && keepCopies) {
      // Copies are kept only under a version Redis holds (see keepNear): a key space without one gets one.
      await versions.ensure(key.versionKey);
      ({ version, entry } = await read(key, keepCopies));
    }
    const entryKey = entryKeyOf(key, version);
    if (entry !== null) {
      if (refreshDue(entry, Date.now(), beta, logRandom)) {
        const token = await leases.take(entryKey, leaseMs);
        if (token) {
          // A refresh that fails still has a value to serve: the one it was replacing.
          return fill(version, entryKey, token, options, loader).catch((error: unknown) => {
            logger.warn('Cache refresh failed; serving the previous value', {
              key: entryKey,
              error: loggableError(error instanceof LoaderFailure ? error.error : error),
            });
            return entry.value;
          });
        }
      }
      count('cache.hit');
      return entry.value;
    }

    while (Date.now() < deadline) {
      const token = await leases.take(entryKey, leaseMs);
      if (token) {
        // Double-checked: the previous holder may have filled between our read and our lease.
        const filled = (await read(key, keepCopies)).entry;
        if (filled === null) return fill(version, entryKey, token, options, loader);
        await leases.release(entryKey, token);
        return filled.value;
      }
      let found: Entry | null = null;
      const recheck = async () => {
        found = (await read(key, keepCopies)).entry;
        return found !== null;
      };
      count('cache.leaseWait');
      const published = await waiters.wait(channelOf(entryKey), Math.min(leaseMs, Math.max(0, deadline - Date.now())), recheck);
      if (published !== undefined) {
        const filled = decodeEntry(published);
        if (keepCopies) near.keepUnder(version, entryKey, filled);
        return filled.value;
      }
      if (found === null) await recheck();
      if (found !== null) return (found as Entry).value;
    }
    // Every lease of the wait was held and ran out unfilled: the source is slower than the lease.
    // Loading here too would add a query per waiter to a source that is already behind.
    logger.warn('Gave up waiting for a cache fill', { key: entryKey });
    throw new LoaderFailure(new UnavailableError('The value is still being loaded, try again shortly'));
  }

  return {
    getOrFill,
    bumpVersion: (versionKey) => versions.bump(versionKey),
    close: () => waiters.close(),
  };
}
