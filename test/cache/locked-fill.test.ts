import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelOf, decodeEntry, entryKeyOf, leaseKeyOf } from '../../shared/cache/entries';
import { createLockedCache, type CacheKey, type FillOptions, type LockedCache } from '../../shared/cache/locked-fill';
import { connectRedis } from '../../shared/platform/clients/redis';
import { connectionOf, watchCommands, type SeenCommand } from '../support/redis-nodes';
import { until } from '../../shared/platform/wait';

/**
 * Each "instance" stands for one Lambda instance: its own Redis connection (the functions' own, a cluster's under SURGE_REDIS_CLUSTER), its own subscriber and
 * its own MySQL connection. Queries are counted by MySQL itself (each connection's Com_select).
 */
interface Instance {
  cache: LockedCache;
  redis: Redis;
  mysql: Connection;
}

const INSTANCES = 50;
/**
 * The 50 instances share this process's event loop, where each Lambda instance has one of its own:
 * under a 1,000-way stampede on a busy machine a reply can wait here more than the functions' 1 s
 * for the other instances' work, and the cache would read through as designed — counting the
 * harness's squeeze, not the lock. Redis itself answers each in well under a millisecond.
 */
const SHARED_LOOP_COMMAND_TIMEOUT_MS = 30_000;
let instances: Instance[] = [];

async function selectsSoFar(): Promise<number> {
  const counts = await Promise.all(
    instances.map(async (i) => {
      const [rows] = await i.mysql.query<RowDataPacket[]>("SHOW SESSION STATUS LIKE 'Com_select'");
      return Number(rows[0]!.Value);
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

const loadFrom =
  (instance: Instance, label: string, pauseMs = 0) =>
  async () => {
    const [rows] = await instance.mysql.query<RowDataPacket[]>('SELECT ? AS label, SLEEP(?) AS paused', [label, pauseMs / 1000]);
    return String(rows[0]!.label);
  };

const freshKey = (): CacheKey => {
  const tag = `{test-${randomBytes(5).toString('hex')}}`;
  return { versionKey: `${tag}:version`, prefix: `${tag}:entries:`, suffix: 'q=1' };
};

const tagOf = (key: CacheKey) => key.versionKey.slice(0, key.versionKey.indexOf('}') + 1);

/** Those of the commands that name a key (or channel) under the prefix: each as its name and arguments, lower-cased name first. */
const naming = (prefix: string, commands: readonly SeenCommand[]) =>
  commands.filter(({ args }) => args.slice(1).some((arg) => arg.startsWith(prefix))).map(({ args }) => [args[0]!.toLowerCase(), ...args.slice(1)].join(' '));

/** The commands Redis itself received, while `act` ran, that name a key under the given prefix. */
async function commandsOn(prefix: string, act: () => Promise<unknown>): Promise<string[]> {
  const commands = await watchCommands(prefix);
  try {
    await act();
    return naming(prefix, await commands.settled());
  } finally {
    commands.stop();
  }
}

/** The entry's key under the version Redis holds now (a caller that got as far as a lease has made sure there is one). */
async function entryKeyNow(key: CacheKey): Promise<string> {
  return entryKeyOf(key, (await instances[0]!.redis.get(key.versionKey))!);
}

/** How many connections wait on the entry's fill channel now, as its server counts them. */
async function subscribersOf(key: CacheKey): Promise<number> {
  const channel = channelOf(await entryKeyNow(key));
  const [, subscribers] = (await (await connectionOf(channel)).call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number];
  return subscribers;
}

/** Waits until the entry Redis holds for `key` has expired by its own clock (its `expires`), however long filling it took. */
async function expired(key: CacheKey): Promise<void> {
  const { expires } = decodeEntry((await instances[0]!.redis.get(await entryKeyNow(key)))!);
  await until(async () => Date.now() > expires, 60_000, 'the entry expired', 10);
}

/**
 * A load that says when it has begun (its caller holds the lease by then) and ends only once let
 * go: the test, not the machine's speed, decides what happens while the lease is held.
 */
function heldLoad(load: () => Promise<string>) {
  let begin!: () => void;
  let letGo!: () => void;
  const begun = new Promise<void>((resolve) => (begin = resolve));
  const released = new Promise<void>((resolve) => (letGo = resolve));
  return {
    load: async () => {
      begin();
      await released;
      return load();
    },
    begun,
    letGo,
  };
}

/**
 * `callers` concurrent reads of an entry due for a refresh, spread over the instances. The caller
 * that refreshes holds its load until every other one has been answered, so none of them can
 * arrive after the refresh landed, however slow the machine.
 */
async function readsDuringRefresh(key: CacheKey, callers: number, fillOptions: FillOptions, newValue: string): Promise<string[]> {
  let answered = 0;
  const refresh = (instance: Instance) => async () => {
    await until(async () => answered === callers - 1, 60_000, 'every other caller answered', 10);
    return loadFrom(instance, newValue)();
  };
  return Promise.all(
    Array.from({ length: callers }, async (_, n) => {
      const instance = instances[n % INSTANCES]!;
      const value = await instance.cache.getOrFill(key, fillOptions, refresh(instance));
      answered += 1;
      return value;
    }),
  );
}

const options = { ttlSeconds: 60, leaseMs: 2_000, maxWaitMs: 10_000, earlyRefreshBeta: 0 };

/**
 * The instance's subscriber, connected ahead like its commands' connection; once the cache closes
 * it, the next wait opens a new one, as the shared cache does.
 */
async function subscriberFactory(): Promise<() => Redis> {
  let connected: Redis | undefined = connectRedis('subscriber', SHARED_LOOP_COMMAND_TIMEOUT_MS);
  await connected.ping();
  return () => {
    const subscriber = connected ?? connectRedis('subscriber', SHARED_LOOP_COMMAND_TIMEOUT_MS);
    connected = undefined;
    return subscriber;
  };
}

beforeAll(async () => {
  // One at a time, connected before the tests start: they are about misses, not cold starts, and a
  // cluster client's cold start (its slot map, a connection per shard) costs ~10 ms of CPU each here.
  for (let n = 0; n < INSTANCES; n++) {
    const redis = connectRedis('commands', SHARED_LOOP_COMMAND_TIMEOUT_MS);
    await redis.ping();
    instances.push({ redis, cache: createLockedCache(redis, await subscriberFactory()), mysql: await createConnection({ uri: process.env.DATABASE_URL! }) });
  }
});

afterAll(async () => {
  for (const i of instances) {
    i.cache.close();
    i.redis.disconnect();
    await i.mysql.end();
  }
});

describe('getOrFill across instances', () => {
  it('turns 1,000 concurrent cold misses into exactly one MySQL query', async () => {
    // Prepare
    const key = freshKey();
    const before = await selectsSoFar();

    // Act
    const values = await Promise.all(
      Array.from({ length: 1_000 }, (_, n) => {
        const instance = instances[n % INSTANCES]!;
        return instance.cache.getOrFill(key, options, loadFrom(instance, 'value', 200));
      }),
    );

    // Assess
    expect(await selectsSoFar()).toBe(before + 1);
    expect(new Set(values)).toEqual(new Set(['value']));
  });

  it('never lets a filler that paused past its lease overwrite a newer value', async () => {
    // Prepare: a leases briefly and stalls past its lease.
    const key = freshKey();
    const [a, b, reader] = [instances[0]!, instances[1]!, instances[2]!];
    const paused = heldLoad(loadFrom(a, 'old'));
    const slow = a.cache.getOrFill(key, { ...options, leaseMs: 200 }, paused.load);
    await paused.begun;
    const lease = leaseKeyOf(await entryKeyNow(key));
    await until(async () => (await a.redis.exists(lease)) === 0, 60_000, "a's lease run out", 10);

    // Act: b takes over and fills; only then does a finish its load and try to fill.
    const newer = await b.cache.getOrFill(key, options, loadFrom(b, 'new'));
    paused.letGo();
    await slow;

    // Assess
    expect(newer).toBe('new');
    expect(await reader.cache.getOrFill(key, options, loadFrom(reader, 'unexpected load'))).toBe('new');
    expect(await a.cache.getOrFill(key, options, loadFrom(a, 'unexpected load'))).toBe('new');
  });

  it('serves the new version after a bump', async () => {
    const key = freshKey();
    const [i] = instances;
    await i!.cache.getOrFill(key, options, loadFrom(i!, 'before'));

    await i!.cache.bumpVersion(key.versionKey);

    expect(await i!.cache.getOrFill(key, options, loadFrom(i!, 'after'))).toBe('after');
  });

  it('serves the new version after another instance bumps it, though this one remembers the old', async () => {
    // Prepare: the reader has read (and so remembers) the version before the bump.
    const key = freshKey();
    const [reader, writer] = instances;
    await reader!.cache.getOrFill(key, options, loadFrom(reader!, 'before'));
    expect(await reader!.cache.getOrFill(key, options, loadFrom(reader!, 'unused'))).toBe('before');

    // Act
    await writer!.cache.bumpVersion(key.versionKey);
    const after = await reader!.cache.getOrFill(key, options, loadFrom(reader!, 'after'));

    // Assess
    expect(after).toBe('after');
    expect(await writer!.cache.getOrFill(key, options, loadFrom(writer!, 'unused'))).toBe('after');
  });

  it('hands a dead winner’s fill to exactly one waiter once its lease expires', async () => {
    // Prepare: a winner takes the lease, then dies mid-load: it can neither fill nor give the lease back.
    const key = freshKey();
    const doomed = connectRedis();
    const leaseMs = 500;
    const loading = new Promise<void>((entered) => {
      void createLockedCache(doomed, () => connectRedis('subscriber')).getOrFill(key, { ...options, leaseMs }, () => {
        entered();
        return new Promise<string>(() => undefined);
      });
    });
    await loading;
    // When the lease runs out by Redis's clock (ms since the epoch, as Date.now()); -2 had it run out already.
    const leaseRunsOut = Number(await instances[0]!.redis.call('PEXPIRETIME', leaseKeyOf(await entryKeyNow(key))));
    expect(leaseRunsOut).toBeGreaterThan(0);
    doomed.disconnect();
    const before = await selectsSoFar();
    let takenOverAt = 0;

    // Act
    const values = await Promise.all(
      Array.from({ length: 200 }, (_, n) => {
        const instance = instances[n % INSTANCES]!;
        return instance.cache.getOrFill(key, { ...options, leaseMs }, async () => {
          takenOverAt = Date.now();
          return loadFrom(instance, 'taken over')();
        });
      }),
    );

    // Assess: nobody loaded while the dead winner's lease stood, then exactly one did.
    expect(takenOverAt).toBeGreaterThan(leaseRunsOut);
    expect(await selectsSoFar()).toBe(before + 1);
    expect(new Set(values)).toEqual(new Set(['taken over']));
  });

  it('lets one waiter take over at once when the winner’s load fails', async () => {
    // Prepare: the winner holds the lease; its load fails once a waiter waits for it. The waiter
    // would wait out the lease (20 s) if nothing woke it.
    const key = freshKey();
    const takeOver = { ...options, leaseMs: 20_000, maxWaitMs: 30_000 };
    const failed = heldLoad(async () => {
      throw new Error('database away');
    });
    const failing = instances[0]!.cache.getOrFill(key, takeOver, failed.load);
    await failed.begun;
    const waiter = instances[1]!.cache.getOrFill(key, takeOver, loadFrom(instances[1]!, 'recovered'));
    await until(async () => (await subscribersOf(key)) === 1, 60_000, 'the waiter subscribed', 10);

    // Act
    const failedAt = Date.now();
    failed.letGo();

    // Assess: taken over once the lease was given back, long before it would have run out (a quarter
    // of it leaves room for a machine many times slower than the takeover's few round trips need).
    await expect(failing).rejects.toThrow('database away');
    expect(await waiter).toBe('recovered');
    expect(Date.now() - failedAt).toBeLessThan(takeOver.leaseMs / 4);
  });

  it('answers 503 to waiters whose wait outlasts every lease while the source is slower than the lease, loading nothing more', async () => {
    // Prepare: loads take 2 s, leases last 300 ms, waiters wait 1 s: a lease runs out three times.
    const key = freshKey();
    const slow = { ...options, leaseMs: 300, maxWaitMs: 1_000 };
    const before = await selectsSoFar();

    // Act
    const reads = await Promise.allSettled(instances.map((i) => i.cache.getOrFill(key, slow, loadFrom(i, 'slow', 2_000))));

    // Assess: the first caller and one waiter per lease that ran out load; the rest give up.
    const gaveUp = reads.filter((r) => r.status === 'rejected');
    expect(gaveUp.length).toBeGreaterThan(INSTANCES - 6);
    for (const r of gaveUp) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'UNAVAILABLE' });
    expect(await selectsSoFar()).toBeLessThanOrEqual(before + 1 + Math.ceil(slow.maxWaitMs / slow.leaseMs));
  });

  it('serves a stale entry to everyone while exactly one caller refreshes it', async () => {
    // Prepare
    const key = freshKey();
    const [first] = instances;
    await first!.cache.getOrFill(key, { ...options, ttlSeconds: 0.2, jitter: 0, staleSeconds: 30 }, loadFrom(first!, 'v1'));
    await expired(key);
    const before = await selectsSoFar();

    // Act
    const values = await readsDuringRefresh(key, 100, { ...options, ttlSeconds: 60, staleSeconds: 30 }, 'v2');

    // Assess
    expect(await selectsSoFar()).toBe(before + 1);
    expect(values.filter((v) => v === 'v1').length).toBe(99);
    expect(values.filter((v) => v === 'v2').length).toBe(1);
    expect(await first!.cache.getOrFill(key, options, loadFrom(first!, 'unexpected load'))).toBe('v2');
  });

  it('keeps serving the stale value when its refresh fails', async () => {
    const key = freshKey();
    const [first] = instances;
    await first!.cache.getOrFill(key, { ...options, ttlSeconds: 0.1, jitter: 0, staleSeconds: 30 }, loadFrom(first!, 'v1'));
    await expired(key);

    const value = await first!.cache.getOrFill(key, options, async () => {
      throw new Error('database away');
    });

    expect(value).toBe('v1');
  });

  it('refreshes early when XFetch says so, with one caller', async () => {
    const key = freshKey();
    const [first] = instances;
    await first!.cache.getOrFill(key, options, loadFrom(first!, 'v1', 50));
    const before = await selectsSoFar();

    // β so large that the early-refresh test always passes while the entry is still fresh; all 20
    // callers ask while the refresh runs (one asking after it landed would rightly refresh once more).
    const values = await readsDuringRefresh(key, 20, { ...options, earlyRefreshBeta: 1e9 }, 'v2');

    expect(await selectsSoFar()).toBe(before + 1);
    expect(values.filter((v) => v === 'v2').length).toBe(1);
  });

  it('wakes its waiters when an instance closes its cache, and they still get the fill that follows', async () => {
    // Prepare: one instance holds the lease and its load; another waits for the fill. The waiter
    // would wait out the lease (20 s) if nothing woke it.
    const key = freshKey();
    const [holder, waiter] = instances;
    const slow = { ...options, leaseMs: 20_000, maxWaitMs: 30_000 };
    const held = heldLoad(async () => 'filled');
    let waiterLoaded = false;
    const filling = holder!.cache.getOrFill(key, slow, held.load);
    await held.begun;
    const channel = channelOf(await entryKeyNow(key));
    const commands = await watchCommands(channel);
    const subscriptions = () => naming(channel, commands.seen).filter((command) => command === `ssubscribe ${channel}`).length;
    const waiting = waiter!.cache.getOrFill(key, slow, async () => {
      waiterLoaded = true;
      return 'loaded by the waiter';
    });
    await until(async () => subscriptions() === 1, 60_000, "the waiter's subscription", 10);

    // Act: the waiter's instance closes its cache; once the waiter has subscribed again, the holder fills.
    const closedAt = Date.now();
    waiter!.cache.close();
    await until(async () => subscriptions() === 2, 60_000, "the waiter's second subscription", 10);
    commands.stop();
    held.letGo();

    // Assess: woken by the fill through its new subscription, long before its lease would have run out.
    expect(await waiting).toBe('filled');
    expect(Date.now() - closedAt).toBeLessThan(slow.leaseMs / 4);
    expect(waiterLoaded).toBe(false);
    await filling;
  });

  it('sends one read for many callers on one instance just after a bump, so the old version’s large entry is not pulled once per caller', async () => {
    // Prepare: one instance, with the functions' own command timeout (1 s), has read a 512 KB entry
    // (a feed's size) and so remembers its version; another instance bumps it. Without one shared
    // read, each of the 300 callers' MGETs brings the old entry back (150 MB on one connection):
    // replies wait past the timeout and every caller loads for itself.
    const key = freshKey();
    const [writer, { mysql }] = instances as [Instance, Instance];
    const redis = connectRedis();
    const one: Instance = { redis, mysql, cache: createLockedCache(redis, () => connectRedis('subscriber')) };
    const large = { ...options, nearCopies: false };
    try {
      // A key space without near copies keeps no version of its own: it has one here, as a feed's does.
      await writer.cache.bumpVersion(key.versionKey);
      await one.cache.getOrFill(key, large, async () => 'x'.repeat(512 * 1024));
      const oldEntryKey = await entryKeyNow(key);
      await writer.cache.bumpVersion(key.versionKey);
      const before = await selectsSoFar();

      // Act
      let values: string[] = [];
      const commands = await commandsOn(tagOf(key), async () => {
        values = await Promise.all(Array.from({ length: 300 }, () => one.cache.getOrFill(key, large, loadFrom(one, 'after the bump'))));
      });

      // Assess: one load, everyone served its value, and the old entry asked for once, not 300 times.
      expect(await selectsSoFar()).toBe(before + 1);
      expect(new Set(values)).toEqual(new Set(['after the bump']));
      expect(commands.filter((command) => command.startsWith('mget ') && command.endsWith(oldEntryKey))).toHaveLength(1);
    } finally {
      one.cache.close();
      redis.disconnect();
    }
  });

  it('answers 503 without loading when Redis fails and reading through is off', async () => {
    // Prepare
    const unreachable = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    unreachable.on('error', () => undefined);
    await unreachable.connect().catch(() => undefined);
    const cache = createLockedCache(unreachable, () => unreachable.duplicate());
    let loaded = false;

    // Act
    const read = cache.getOrFill(freshKey(), { ...options, readThrough: false }, async () => {
      loaded = true;
      return 'from the source';
    });

    // Assess
    await expect(read).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(loaded).toBe(false);
  });

  it('reads through to the loader when Redis is unreachable', async () => {
    const unreachable = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    unreachable.on('error', () => undefined);
    await unreachable.connect().catch(() => undefined);
    const cache = createLockedCache(unreachable, () => unreachable.duplicate());

    expect(await cache.getOrFill(freshKey(), options, async () => 'from the source')).toBe('from the source');
  });
});

describe('versions', () => {
  it('come from the clock, so a bump after Redis lost the last one never hands it out again', async () => {
    const key = freshKey();
    const [instance] = instances;
    const first = Number(await instance!.cache.bumpVersion(key.versionKey));
    await instance!.redis.del(key.versionKey);

    const second = Number(await instance!.cache.bumpVersion(key.versionKey));

    expect(second).toBeGreaterThan(first);
    expect(Math.abs(second / 1000 - Date.now())).toBeLessThan(60_000);
  });

  it('only ever grow, and stay numbers an INCR can move on', async () => {
    // Prepare: an instance still counting with INCR has left the version ahead of the clock.
    const key = freshKey();
    const [instance] = instances;
    await instance!.redis.set(key.versionKey, '9000000000000000');

    // Act
    const bumped = await instance!.cache.bumpVersion(key.versionKey);
    const counted = await instance!.redis.incr(key.versionKey);

    // Assess
    expect(bumped).toBe('9000000000000001');
    expect(counted).toBe(9000000000000002);
  });

  it('that went back (Redis lost a bump) are raised past the one seen, so the entry from before the write is not served', async () => {
    // Prepare: an entry under the version a failover will bring back, then a write's bump the reader sees.
    const key = freshKey();
    const [reader, writer] = instances;
    await reader!.cache.getOrFill(key, options, loadFrom(reader!, 'before the write'));
    const lost = (await writer!.redis.get(key.versionKey))!;
    const bumped = await writer!.cache.bumpVersion(key.versionKey);
    expect(await reader!.cache.getOrFill(key, options, loadFrom(reader!, 'after the write'))).toBe('after the write');
    await writer!.redis.set(key.versionKey, lost);

    // Act
    const read = await reader!.cache.getOrFill(key, options, loadFrom(reader!, 'refilled'));

    // Assess
    expect(read).toBe('refilled');
    expect(BigInt((await writer!.redis.get(key.versionKey))!)).toBeGreaterThan(BigInt(bumped));
    expect(await writer!.cache.getOrFill(key, options, loadFrom(writer!, 'unexpected load'))).toBe('refilled');
  });

  it('that went back are raised past the one seen even when it ran ahead of the clock (as an INCR can leave it)', async () => {
    // Prepare
    const key = freshKey();
    const [reader, writer] = instances;
    await writer!.redis.set(key.versionKey, '9000000000000000');
    expect(await reader!.cache.getOrFill(key, options, loadFrom(reader!, 'after the write'))).toBe('after the write');
    await writer!.redis.set(key.versionKey, '8000000000000000');

    // Act
    const read = await reader!.cache.getOrFill(key, options, loadFrom(reader!, 'refilled'));

    // Assess
    expect(read).toBe('refilled');
    expect(await writer!.redis.get(key.versionKey)).toBe('9000000000000001');
  });

  it('that went back are raised once however many readers see it at once (1,000), and refilled with one query', async () => {
    // Prepare: every instance has read under the bumped version, which Redis then loses.
    const key = freshKey();
    const [writer] = instances;
    await writer!.cache.getOrFill(key, { ...options, nearCopies: false }, loadFrom(writer!, 'before the write'));
    const lost = (await writer!.redis.get(key.versionKey)) ?? '0';
    await writer!.cache.bumpVersion(key.versionKey);
    await Promise.all(instances.map((i) => i.cache.getOrFill(key, { ...options, nearCopies: false }, loadFrom(i, 'after the write'))));
    await writer!.redis.set(key.versionKey, lost);
    const before = await selectsSoFar();

    // Act
    const reads = await Promise.all(
      Array.from({ length: 1_000 }, (_, n) => {
        const instance = instances[n % INSTANCES]!;
        return instance.cache.getOrFill(key, { ...options, nearCopies: false }, loadFrom(instance, 'refilled'));
      }),
    );

    // Assess
    expect(new Set(reads)).toEqual(new Set(['refilled']));
    expect(await selectsSoFar()).toBe(before + 1);
  });
});

describe('near copies', () => {
  it('serve a warm entry with one GET of its version, without reading the entry again', async () => {
    // Prepare
    const key = freshKey();
    const [instance] = instances;
    await instance!.cache.getOrFill(key, options, loadFrom(instance!, 'v1'));
    const values: string[] = [];

    // Act
    const commands = await commandsOn(tagOf(key), async () => {
      for (let n = 0; n < 5; n++) values.push(await instance!.cache.getOrFill(key, options, loadFrom(instance!, 'unexpected load')));
    });

    // Assess
    expect(values).toEqual(['v1', 'v1', 'v1', 'v1', 'v1']);
    expect(commands).toEqual(Array(5).fill(`get ${key.versionKey}`));
  });

  it('are kept by waiters woken with the filled entry', async () => {
    // Prepare: the waiter is woken by the filler's publication, not by reading the entry: the fill
    // waits until the waiter has subscribed and then found the entry still missing. A lease far
    // longer than that takes, so the waiter never takes over instead.
    const key = freshKey();
    const [filler, waiter] = instances;
    const patient = { ...options, leaseMs: 20_000, maxWaitMs: 30_000 };
    const held = heldLoad(loadFrom(filler!, 'filled'));
    const filling = filler!.cache.getOrFill(key, patient, held.load);
    await held.begun;
    const subscribe = `ssubscribe ${channelOf(await entryKeyNow(key))}`;
    const seenBeforeFill = await watchCommands(tagOf(key));
    const waiting = waiter!.cache.getOrFill(key, patient, loadFrom(waiter!, 'unexpected load'));
    await until(
      async () => {
        const seen = naming(tagOf(key), seenBeforeFill.seen);
        const subscribed = seen.indexOf(subscribe);
        return subscribed >= 0 && seen.slice(subscribed + 1).some((command) => command.startsWith('mget '));
      },
      10_000,
      "the waiter's read after subscribing",
      10,
    );
    seenBeforeFill.stop();
    held.letGo();
    expect(await waiting).toBe('filled');
    await filling;

    // Act
    const commands = await commandsOn(tagOf(key), () => waiter!.cache.getOrFill(key, options, loadFrom(waiter!, 'unexpected load')));

    // Assess
    expect(commands).toEqual([`get ${key.versionKey}`]);
  });

  it('are never served under a version Redis lost and a later bump reached again', async () => {
    // Prepare: the reader holds a copy under the bumped version; then Redis loses that bump (a
    // failover under asynchronous replication) and a second write bumps the version once more.
    const key = freshKey();
    const [reader, writer] = instances;
    await reader!.cache.getOrFill(key, options, loadFrom(reader!, 'before'));
    const lost = await writer!.redis.get(key.versionKey);
    await writer!.cache.bumpVersion(key.versionKey);
    expect(await reader!.cache.getOrFill(key, options, loadFrom(reader!, 'first write'))).toBe('first write');
    await writer!.redis.set(key.versionKey, lost!);

    // Act
    await writer!.cache.bumpVersion(key.versionKey);
    const read = await reader!.cache.getOrFill(key, options, loadFrom(reader!, 'second write'));

    // Assess
    expect(read).toBe('second write');
  });

  it('are bounded: past the bound the oldest goes, and its entry is read from Redis again', async () => {
    // Prepare: room for five copies of about 210 characters (value, key and overhead); six are filled, so the first goes.
    const redis = connectRedis();
    const cache = createLockedCache(redis, () => connectRedis('subscriber'), { nearCopyChars: 5 * 230 });
    const valueOf = (n: number) => `value-${n}`.padEnd(100, '.');
    try {
      const base = freshKey();
      const keys = Array.from({ length: 6 }, (_, n) => ({ ...base, suffix: `q=${n}` }));
      for (const [n, key] of keys.entries()) await cache.getOrFill(key, options, async () => valueOf(n));
      const version = await redis.get(base.versionKey);

      // Act
      const commands = await commandsOn(tagOf(base), async () => {
        expect(await cache.getOrFill(keys[0]!, options, async () => 'unexpected load')).toBe(valueOf(0));
        expect(await cache.getOrFill(keys[5]!, options, async () => 'unexpected load')).toBe(valueOf(5));
      });

      // Assess
      expect(commands).toEqual([`mget ${base.versionKey} ${base.prefix}e${version}:q=0`, `get ${base.versionKey}`]);
    } finally {
      cache.close();
      redis.disconnect();
    }
  });
});
