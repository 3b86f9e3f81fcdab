import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLockedCache, type CacheKey, type LockedCache } from '../../shared/cache/locked-fill';
import { connectRedis } from '../../shared/clients/redis';
import { serverOf } from '../support/redis-nodes';
import { until } from '../support/wait';

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

const loadFrom = (instance: Instance, label: string, pauseMs = 0) => async () => {
  const [rows] = await instance.mysql.query<RowDataPacket[]>('SELECT ? AS label, SLEEP(?) AS paused', [label, pauseMs / 1000]);
  return String(rows[0]!.label);
};

const freshKey = (): CacheKey => {
  const tag = `{test-${randomBytes(5).toString('hex')}}`;
  return { versionKey: `${tag}:version`, prefix: `${tag}:entries:`, suffix: 'q=1' };
};

const tagOf = (key: CacheKey) => key.versionKey.slice(0, key.versionKey.indexOf('}') + 1);

/**
 * The commands Redis itself received, while `act` ran, that name a key under the given prefix:
 * each as its name and arguments, lower-cased name first.
 */
async function commandsOn(prefix: string, act: () => Promise<unknown>): Promise<string[]> {
  const watcher = await serverOf(prefix);
  const monitor = await watcher.monitor();
  const marker = `${prefix}everything-seen`;
  const seen: string[] = [];
  let markerSeen = false;
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args.includes(marker)) markerSeen = true;
    else if (args.slice(1).some((arg) => arg.startsWith(prefix))) seen.push([args[0]!.toLowerCase(), ...args.slice(1)].join(' '));
  });
  try {
    await act();
    // MONITOR streams asynchronously: once the marker has arrived, so has everything sent before it.
    await instances[0]!.redis.exists(marker);
    await until(async () => markerSeen, 5_000, 'the marker command');
  } finally {
    monitor.disconnect();
    watcher.disconnect();
  }
  return seen;
}

const options = { ttlSeconds: 60, leaseMs: 2_000, maxWaitMs: 10_000, earlyRefreshBeta: 0 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The instance's subscriber, connected ahead like its commands' connection; once the cache closes
 * it, the next wait opens a new one, as the shared cache does.
 */
async function subscriberFactory(): Promise<() => Redis> {
  let connected: Redis | undefined = connectRedis('subscriber');
  await connected.ping();
  return () => {
    const subscriber = connected ?? connectRedis('subscriber');
    connected = undefined;
    return subscriber;
  };
}

beforeAll(async () => {
  // One at a time, connected before the tests start: they are about misses, not cold starts, and a
  // cluster client's cold start (its slot map, a connection per shard) costs ~10 ms of CPU each here.
  for (let n = 0; n < INSTANCES; n++) {
    const redis = connectRedis();
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
    // Prepare: a leases briefly and stalls; b takes over once a's lease has expired.
    const key = freshKey();
    const [a, b, reader] = [instances[0]!, instances[1]!, instances[2]!];
    const slow = a.cache.getOrFill(key, { ...options, leaseMs: 200 }, loadFrom(a, 'old', 800));
    await sleep(400);

    // Act
    const newer = await b.cache.getOrFill(key, options, loadFrom(b, 'new'));
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
    let leaseTakenBy = 0;
    const loading = new Promise<void>((entered) => {
      void createLockedCache(doomed, () => connectRedis('subscriber')).getOrFill(key, { ...options, leaseMs }, () => {
        leaseTakenBy = Date.now();
        entered();
        return new Promise<string>(() => undefined);
      });
    });
    await loading;
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

    // Assess: nobody loaded while the dead winner's lease stood (it was taken before its loader ran), then exactly one did.
    expect(takenOverAt).toBeGreaterThanOrEqual(leaseTakenBy + leaseMs - 50);
    expect(await selectsSoFar()).toBe(before + 1);
    expect(new Set(values)).toEqual(new Set(['taken over']));
  });

  it('lets one waiter take over at once when the winner’s load fails', async () => {
    const key = freshKey();
    const failing = instances[0]!.cache.getOrFill(key, { ...options, leaseMs: 30_000 }, async () => {
      await sleep(100);
      throw new Error('database away');
    });
    await sleep(20);
    const started = Date.now();

    const waiter = instances[1]!.cache.getOrFill(key, { ...options, leaseMs: 30_000 }, loadFrom(instances[1]!, 'recovered'));

    await expect(failing).rejects.toThrow('database away');
    expect(await waiter).toBe('recovered');
    expect(Date.now() - started).toBeLessThan(5_000);
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
    const key = freshKey();
    const [first] = instances;
    await first!.cache.getOrFill(key, { ...options, ttlSeconds: 0.2, jitter: 0, staleSeconds: 30 }, loadFrom(first!, 'v1'));
    await sleep(300);
    const before = await selectsSoFar();

    const values = await Promise.all(
      Array.from({ length: 100 }, (_, n) => {
        const instance = instances[n % INSTANCES]!;
        return instance.cache.getOrFill(key, { ...options, ttlSeconds: 60, staleSeconds: 30 }, loadFrom(instance, 'v2', 100));
      }),
    );

    expect(await selectsSoFar()).toBe(before + 1);
    expect(values.filter((v) => v === 'v1').length).toBe(99);
    expect(values.filter((v) => v === 'v2').length).toBe(1);
    expect(await first!.cache.getOrFill(key, options, loadFrom(first!, 'unexpected load'))).toBe('v2');
  });

  it('keeps serving the stale value when its refresh fails', async () => {
    const key = freshKey();
    const [first] = instances;
    await first!.cache.getOrFill(key, { ...options, ttlSeconds: 0.1, jitter: 0, staleSeconds: 30 }, loadFrom(first!, 'v1'));
    await sleep(200);

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

    // β so large that the early-refresh test always passes while the entry is still fresh; the
    // refresh takes long enough that all 20 callers ask while it runs, even on a busy machine
    // (one asking after it landed would rightly refresh once more).
    const values = await Promise.all(
      Array.from({ length: 20 }, (_, n) => instances[n]!.cache.getOrFill(key, { ...options, earlyRefreshBeta: 1e9 }, loadFrom(instances[n]!, 'v2', 300))),
    );

    expect(await selectsSoFar()).toBe(before + 1);
    expect(values.filter((v) => v === 'v2').length).toBe(1);
  });

  it('wakes its waiters when an instance closes its cache, and they still get the fill that follows', async () => {
    // Prepare: one instance fills slowly; another waits for it, then closes its subscriber.
    const key = freshKey();
    const [holder, waiter] = instances;
    const slow = { ...options, leaseMs: 5_000 };
    let waiterLoaded = false;
    const filling = holder!.cache.getOrFill(key, slow, async () => {
      await sleep(800);
      return 'filled';
    });
    await sleep(100);
    const started = Date.now();
    const waiting = waiter!.cache.getOrFill(key, slow, async () => {
      waiterLoaded = true;
      return 'loaded by the waiter';
    });
    await sleep(200);

    // Act
    waiter!.cache.close();

    // Assess: woken by the fill through a new subscription, not by its lease running out.
    expect(await waiting).toBe('filled');
    expect(Date.now() - started).toBeLessThan(slow.leaseMs / 2);
    expect(waiterLoaded).toBe(false);
    await filling;
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
    // Prepare: the waiter is woken by the filler's publication, not by reading the entry.
    const key = freshKey();
    const [filler, waiter] = instances;
    let filling!: Promise<string>;
    await new Promise<void>((loading) => {
      filling = filler!.cache.getOrFill(key, options, () => {
        loading();
        return loadFrom(filler!, 'filled', 300)();
      });
    });
    expect(await waiter!.cache.getOrFill(key, options, loadFrom(waiter!, 'unexpected load'))).toBe('filled');
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
