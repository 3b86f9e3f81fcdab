import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { UnavailableError } from '../errors';
import { loggableError, logger } from '../logger';
import { luaScript, type RedisClient } from '../redis/script';

const fillScript = luaScript<[entry: string, lease: string], [token: string, entry: string, lifetimeMs: number, channel: string]>(
  new URL('./lua/cache-fill-2.lua', import.meta.url),
);
const releaseScript = luaScript<[lease: string], [token: string, channel: string]>(new URL('./lua/cache-release-1.lua', import.meta.url));
const bumpScript = luaScript<[version: string], [candidate: string]>(new URL('./lua/version-bump-1.lua', import.meta.url));
const raiseScript = luaScript<[version: string], [seen: string, candidate: string]>(new URL('./lua/version-raise-1.lua', import.meta.url));

/**
 * Where an entry lives: `<prefix>e<version>:<suffix>`, read together with the version in
 * `versionKey`. Prefix and version key must carry the same hash tag (one cluster slot).
 */
export interface CacheKey {
  versionKey: string;
  prefix: string;
  suffix: string;
}

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

/**
 * `e` marks the entry's format (one string, see encodeEntry), and with it the fill channel's name:
 * a format change takes a new marker, so while a deploy runs old and new instances side by side
 * neither reads the other's entries or wakes on the other's fills.
 */
const entryKeyOf = (key: CacheKey, version: string) => `${key.prefix}e${version}:${key.suffix}`;
const leaseKeyOf = (entryKey: string) => `${entryKey}:lease`;
const channelOf = (entryKey: string) => `${entryKey}:filled`;

/** What the fill script publishes: 'v' and the entry, or 'r' when a lease is given back unfilled. */
const FILLED_PREFIX = 'v';

interface Entry {
  value: string;
  /** Logical expiry, ms since the epoch (jittered). */
  expires: number;
  /** How long the fill took, ms: XFetch's δ. */
  delta: number;
}

/**
 * An entry is one string, `<expires>:<delta>:<value>`: it is read with the version in one plain
 * MGET (no script, no hash), and the value is a slice of what Redis sent, not a copy.
 */
const encodeEntry = (entry: Entry) => `${entry.expires}:${entry.delta}:${entry.value}`;

function decodeEntry(raw: string): Entry {
  const first = raw.indexOf(':');
  const second = raw.indexOf(':', first + 1);
  return { expires: Number(raw.slice(0, first)), delta: Number(raw.slice(first + 1, second)), value: raw.slice(second + 1) };
}

/** The version of a key space never bumped, or whose version key Redis has lost. */
const NO_VERSION = '0';

/**
 * Versions come from the clock, in microseconds, rather than a count: after Redis loses data (a
 * failover, a flush) a count would climb again through numbers an instance has already seen and
 * holds near copies for. Below 2^53 until the year 2255, so exact in Lua and in JavaScript.
 */
const clockVersion = () => String(Math.floor((performance.timeOrigin + performance.now()) * 1000));

/** Version keys an instance remembers the last seen version of; past this it forgets the oldest. */
const REMEMBERED_VERSIONS = 10_000;
/** Reads that find the version moved on again before giving up and treating the entry as missing. */
const VERSION_CHASES = 3;
/** Default bound on an instance's near copies, in characters of key and value (about bytes). */
const NEAR_COPY_CHARS = 8 * 1024 * 1024;
/** What a copy costs beyond its key and value (its entry object and map slot), in the same units. */
const NEAR_COPY_OVERHEAD = 64;

/**
 * Entries this instance has read or stored, kept beside Redis so that a hit asks Redis for the
 * version alone (a few bytes) instead of the entry. Otherwise every request for a hot page sends
 * its whole body out of one shard, and a shard's network is what a hot key exhausts first. A copy
 * is served only while its version is still the one in Redis (versions are never reused) and it is
 * not due for refresh. Bounded by the size of its keys and values; past the bound the oldest go first.
 */
class NearCopies {
  private readonly copies = new Map<string, Entry>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  get(entryKey: string): Entry | undefined {
    return this.copies.get(entryKey);
  }

  keep(entryKey: string, entry: Entry): void {
    this.drop(entryKey);
    const size = sizeOf(entryKey, entry);
    // One copy taking much of the bound would evict everything else; such an entry is read from Redis.
    if (size > this.maxChars / 4) return;
    this.copies.set(entryKey, entry);
    this.chars += size;
    for (const [oldest, copy] of this.copies) {
      if (this.chars <= this.maxChars) break;
      this.copies.delete(oldest);
      this.chars -= sizeOf(oldest, copy);
    }
  }

  drop(entryKey: string): void {
    const copy = this.copies.get(entryKey);
    if (!copy) return;
    this.copies.delete(entryKey);
    this.chars -= sizeOf(entryKey, copy);
  }
}

const sizeOf = (entryKey: string, entry: Entry) => entryKey.length + entry.value.length + NEAR_COPY_OVERHEAD;

/**
 * Callers waiting for a fill, woken by pub/sub on the entry's channel with the entry itself. One
 * subscriber connection per instance, opened on first use (an instance that never waits never
 * opens it), and one subscription per channel however many of its callers wait on it.
 */
class FillWaiters {
  private subscriber?: Redis;
  private readonly channels = new Map<string, { wakers: Set<(message: string) => void>; subscribed: Promise<unknown> }>();

  constructor(private readonly connect: () => Redis) {}

  /** Waiters still waiting are woken to re-read, since their subscriptions go with the connection. */
  close(): void {
    this.subscriber?.disconnect();
    this.subscriber = undefined;
    const channels = [...this.channels.values()];
    this.channels.clear();
    for (const { wakers } of channels) for (const wake of wakers) wake('');
  }

  /**
   * Subscribes, then runs `recheck` (so no fill can slip between the two), then waits. Returns the
   * entry a fill published, or undefined when woken otherwise or timed out.
   */
  async wait(channel: string, timeoutMs: number, recheck: () => Promise<boolean>): Promise<string | undefined> {
    const subscriber = (this.subscriber ??= this.connect().on('message', (ch: string, message: string) => {
      for (const wake of this.channels.get(ch)?.wakers ?? []) wake(message);
    }));
    let wake!: (message: string) => void;
    const woken = new Promise<string>((resolve) => (wake = resolve));
    let entry = this.channels.get(channel);
    if (!entry) {
      entry = { wakers: new Set(), subscribed: subscriber.subscribe(channel) };
      this.channels.set(channel, entry);
    }
    entry.wakers.add(wake);
    let timer: NodeJS.Timeout | undefined;
    try {
      await entry.subscribed;
      if (await recheck()) return undefined;
      const message = await Promise.race([woken, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)))]);
      return message?.startsWith(FILLED_PREFIX) ? message.slice(FILLED_PREFIX.length) : undefined;
    } finally {
      clearTimeout(timer);
      entry.wakers.delete(wake);
      if (entry.wakers.size === 0 && this.channels.get(channel) === entry) {
        this.channels.delete(channel);
        await subscriber.unsubscribe(channel).catch(() => undefined);
      }
    }
  }
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
 * holds. Without Redis, the loader is called directly.
 */
export function createLockedCache(redis: RedisClient, connectSubscriber: () => Redis, { nearCopyChars = NEAR_COPY_CHARS }: LockedCacheOptions = {}): LockedCache {
  const waiters = new FillWaiters(connectSubscriber);
  const near = new NearCopies(nearCopyChars);
  const lastSeenVersions = new Map<string, string>();

  /**
   * The entry under the current version, in one round trip while the version holds still: the
   * version and the entry this instance expects are read together (MGET is atomic, and both keys
   * share a slot), so a bump committed before the read is always seen. Only after a bump does a
   * read take a second round trip, with the new version.
   */
  async function read(key: CacheKey, keepCopy: boolean): Promise<{ version: string; entry: Entry | null }> {
    let version = lastSeenVersions.get(key.versionKey) ?? NO_VERSION;
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
        if (keepCopy) keepNear(version, entryKey, entry);
        return { version, entry };
      }
      version = await moveTo(key.versionKey, version, actual);
      // A version bumped again and again: its entries would be outdated as soon as read anyway.
      if (chase === VERSION_CHASES) return { version, entry: null };
    }
  }

  /**
   * Only under a version Redis holds: without one, a copy could not be told from an older list
   * after Redis lost its keys. An expired entry is not worth the room; it is re-read until refreshed.
   */
  function keepNear(version: string, entryKey: string, entry: Entry): void {
    if (version !== NO_VERSION && entry.expires > Date.now()) near.keep(entryKey, entry);
  }

  /**
   * The version to read under once Redis holds `actual` where this instance last saw `seen`. A
   * version below one seen is a bump Redis lost (versions only rise): its entries are from before
   * a committed write, so the instance raises the version past the one it saw and every instance
   * refills from the source. Only an instance that saw the lost version can tell; one that did not
   * serves the older entries until they expire (their TTL bounds a loss no instance saw).
   */
  async function moveTo(versionKey: string, seen: string, actual: string): Promise<string> {
    let version = actual;
    if (Number(actual) < Number(seen)) {
      version = String(await raiseScript.run(redis, [versionKey], [seen, clockVersion()]));
      logger.warn('Cache version went back: Redis lost a bump; moved past it', { versionKey, seen, found: actual, now: version });
    }
    remember(versionKey, version);
    return version;
  }

  function remember(versionKey: string, version: string): void {
    lastSeenVersions.delete(versionKey);
    lastSeenVersions.set(versionKey, version);
    if (lastSeenVersions.size > REMEMBERED_VERSIONS) lastSeenVersions.delete(lastSeenVersions.keys().next().value as string);
  }

  async function fill(version: string, entryKey: string, token: string, options: FillOptions, loader: () => Promise<string>): Promise<string> {
    const started = Date.now();
    let value: string;
    try {
      value = await loader();
    } catch (error) {
      // Let a waiter take over now rather than when the lease runs out.
      await releaseScript.run(redis, [leaseKeyOf(entryKey)], [token, channelOf(entryKey)]).catch(() => undefined);
      throw error;
    }
    const now = Date.now();
    const ttlMs = options.ttlSeconds * 1000 * (1 + (options.jitter ?? 0.1) * (Math.random() * 2 - 1));
    const physicalMs = Math.ceil(ttlMs + (options.staleSeconds ?? 60) * 1000);
    const entry: Entry = { value, expires: Math.floor(now + ttlMs), delta: now - started };
    // Once loaded, the value is this caller's answer even if Redis fails to keep it; it is kept near
    // only if Redis kept it, so a filler that lost its lease never serves its own value again.
    const stored = await fillScript
      .run(redis, [entryKey, leaseKeyOf(entryKey)], [token, encodeEntry(entry), physicalMs, channelOf(entryKey)])
      .catch((error: Error) => logger.warn('Cache fill not stored', { key: entryKey, error: loggableError(error) }));
    if (stored === 1 && (options.nearCopies ?? true)) keepNear(version, entryKey, entry);
    return value;
  }

  async function tryLease(entryKey: string, leaseMs: number): Promise<string | undefined> {
    const token = randomBytes(12).toString('base64url');
    return (await redis.set(leaseKeyOf(entryKey), token, 'PX', leaseMs, 'NX')) === 'OK' ? token : undefined;
  }

  /** Redis failing at any step means reading through to the source; the loader's own failure is thrown. */
  async function getOrFill(key: CacheKey, options: FillOptions, loader: () => Promise<string>): Promise<string> {
    try {
      // Still connecting at a cold start is fine (commands queue); lost is not worth waiting for.
      if (UNREACHABLE.has(redis.status)) throw new Error(`Redis is ${redis.status}`);
      return await coordinatedFill(key, options, () => loader().catch((error: unknown) => Promise.reject(new LoaderFailure(error))));
    } catch (error) {
      if (error instanceof LoaderFailure) throw error.error;
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

    const seen = lastSeenVersions.get(key.versionKey) ?? NO_VERSION;
    const copy = near.get(entryKeyOf(key, seen));
    if (copy && !refreshDue(copy, Date.now(), beta, logRandom)) {
      const current = (await redis.get(key.versionKey)) ?? NO_VERSION;
      if (current === seen) return copy.value;
      await moveTo(key.versionKey, seen, current);
    }

    const keepCopies = options.nearCopies ?? true;
    let { version, entry } = await read(key, keepCopies);
    if (version === NO_VERSION && keepCopies) {
      // Copies are kept only under a version Redis holds (see keepNear): a key space without one gets one.
      await redis.set(key.versionKey, clockVersion(), 'NX');
      ({ version, entry } = await read(key, keepCopies));
    }
    const entryKey = entryKeyOf(key, version);
    if (entry !== null) {
      if (refreshDue(entry, Date.now(), beta, logRandom)) {
        const token = await tryLease(entryKey, leaseMs);
        if (token) {
          // A refresh that fails still has a value to serve: the one it was replacing.
          return fill(version, entryKey, token, options, loader).catch((error: unknown) => {
            logger.warn('Cache refresh failed; serving the previous value', { key: entryKey, error: loggableError(error instanceof LoaderFailure ? error.error : error) });
            return entry.value;
          });
        }
      }
      return entry.value;
    }

    while (Date.now() < deadline) {
      const token = await tryLease(entryKey, leaseMs);
      if (token) {
        // Double-checked: the previous holder may have filled between our read and our lease.
        const filled = (await read(key, keepCopies)).entry;
        if (filled === null) return fill(version, entryKey, token, options, loader);
        await releaseScript.run(redis, [leaseKeyOf(entryKey)], [token, channelOf(entryKey)]);
        return filled.value;
      }
      let found: Entry | null = null;
      const recheck = async () => {
        found = (await read(key, keepCopies)).entry;
        return found !== null;
      };
      const published = await waiters.wait(channelOf(entryKey), Math.min(leaseMs, Math.max(0, deadline - Date.now())), recheck);
      if (published !== undefined) {
        const filled = decodeEntry(published);
        if (keepCopies) keepNear(version, entryKey, filled);
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
    bumpVersion: async (versionKey) => String(await bumpScript.run(redis, [versionKey], [clockVersion()])),
    close: () => waiters.close(),
  };
}
