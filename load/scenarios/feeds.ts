/**
 * Feed polls: conditional polls answered 304 (one Redis call each) in turns with the gateway's
 * ceiling, polls answered from the cached body, then a storm of 1,000 polls at once on one feed
 * right after a change, counting its builds; and what one reader's feeds keep in Redis.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createConnection, type ResultSetHeader } from 'mysql2/promise';
import { statementsDuring } from '../../infra/twin/faults/query-log';
import { decodeEntry, entryKeyOf } from '../../shared/cache/entries';
import { feedKeys } from '../../shared/mail/feed-access';
import { feedCacheCounterKeys } from '../../shared/mail/feed-cache';
import { feedTokenHash } from '../../shared/mail/feed-tokens';
import { fetchAnswered, pointAtTwin, releaseSharedClients, signedInCrowd } from '../support/crowd';
import { redisBytesPerRequest } from '../support/floor';
import { drive } from '../support/measure';
import { round } from '../support/round';
import type { Scenario } from '../support/scenario';

/**
 * Readers whose tokens the steady polls spread over, so that each token's rate (1,000 polls
 * answered with a body an hour, all at once; until 2026-12-07 the 304s took from it too) is never
 * spent and every poll measured is a 304 or a 200, not a 429: the cached polls send up to ~25 polls
 * a second per connection-second on a fast machine (`FEEDS_BENCH_READERS`). At 200 readers, with
 * 304s taken, a quiet machine spent every token within the run: 82,979 of the cached polls and 94
 * of the 200 sampled 304s were 429s.
 */
const READERS = Number(process.env.FEEDS_BENCH_READERS ?? 2_000);
const STORM = 1_000;
/** Conditional polls whose answers are each checked to be 304. */
const SAMPLE = 200;
/** The storm reader's issues: a feed of realistic size to build. */
const ISSUES = 20;
const ISSUE_HTML = `<p>${'A newsletter paragraph. '.repeat(800)}</p>`;

async function inBatches<T, R>(items: T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}

/** A feed URL's path and token: the API's host in it is the twin's. */
const pathOf = (url: string) => new URL(url).pathname;
const tokenOf = (url: string) => pathOf(url).split('/')[2]!;

/** What Redis holds for one token's feeds (its reader, version, rate and cached bodies), in bytes as MEMORY USAGE counts them. */
async function bytesOfToken(redis: Redis, token: string): Promise<number> {
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `{feed:${feedTokenHash(token)}}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) bytes += Number((await redis.memory('USAGE', key)) ?? 0);
  } while (cursor !== '0');
  return bytes;
}

/** The bytes of the feed body cached for a token's current version under `suffix` (format, feed, base URL). */
async function cachedBodyBytes(redis: Redis, token: string, suffix: string): Promise<number> {
  const keys = feedKeys(feedTokenHash(token));
  const version = await redis.get(keys.version);
  const raw = version && (await redis.get(entryKeyOf({ versionKey: keys.version, prefix: keys.bodies, suffix }, version)));
  if (!raw) throw new Error(`no feed body cached for ${suffix} at version ${version}`);
  return Buffer.byteLength(decodeEntry(raw).value);
}

async function cachedFeedBytes(redis: Redis, windows: string[]): Promise<number> {
  return (await redis.mget(...windows)).reduce((sum, v) => sum + Number(v ?? 0), 0);
}

export const feeds: Scenario = async ({ twin, connections, duration, log, againstCeiling }) => {
  log(`${READERS + 1} readers, their sessions made beforehand`);
  const tag = randomBytes(4).toString('hex');
  // Sessions made beforehand, as the store makes them (sign-in hashes a password: thousands would take minutes).
  pointAtTwin(twin);
  const crowd = await signedInCrowd(twin, READERS + 1);
  const [stormUser] = crowd.ids.map((id) => ({ id }));
  const [stormCookie, ...pollerCookies] = crowd.cookies;

  // The storm reader's newsletter and issues, filed straight into MySQL: the feed is what is measured, not receipt.
  const db = await createConnection({ uri: twin.databaseUrl });
  const [newsletter] = await db.query<ResultSetHeader>(
    "INSERT INTO newsletters (identity_key, identity, kind, name) VALUES (?, ?, 'list-id', 'Bench Weekly')",
    [randomBytes(32).toString('hex'), `bench-${tag}.example`],
  );
  await db.query('INSERT INTO subscriptions (user_id, newsletter_id, name) VALUES (?, ?, ?)', [stormUser!.id, newsletter.insertId, 'Bench Weekly']);
  await db.query('INSERT INTO issues (user_id, newsletter_id, ses_message_id, subject, sender, html, text, attachments) VALUES ?', [
    Array.from({ length: ISSUES }, (_, i) => [
      stormUser!.id,
      newsletter.insertId,
      randomBytes(20).toString('hex'),
      `Bench issue ${i}`,
      'news@bench.example',
      ISSUE_HTML,
      null,
      '[]',
    ]),
  ]);
  await db.end();

  const feedsOf = async (cookie: string) => {
    const answer = await fetchAnswered(`${twin.url}/me/feeds`, { headers: { cookie } });
    if (answer.status !== 200) throw new Error(`GET /me/feeds answered ${answer.status}: ${await answer.text()}`);
    return (await answer.json()) as { all: { atom: string; json: string } };
  };
  const pollerFeeds = await inBatches(pollerCookies, 10, feedsOf);
  // Each poller's first poll: Redis learns its token and version, which the steady polls send back.
  const etags = await inBatches(pollerFeeds, 10, async (f) => {
    const answer = await fetchAnswered(f.all.atom);
    await answer.arrayBuffer();
    if (answer.status !== 200) throw new Error(`a first poll answered ${answer.status}`);
    return answer.headers.get('etag')!;
  });
  const conditional = pollerFeeds.map((f, i) => ({ method: 'GET' as const, path: pathOf(f.all.atom), headers: { 'if-none-match': etags[i]! } }));
  const unconditional = pollerFeeds.map((f) => ({ method: 'GET' as const, path: pathOf(f.all.atom) }));

  // The floor's shape: what a 304 poll reads from Redis, measured over a sample of its own; it answers no body.
  const { bytesPerRequest } = await redisBytesPerRequest(twin.redisUrl, () =>
    drive({ url: twin.url, connections, amount: SAMPLE * 10, requests: conditional }, 'GET /feeds/{token}/atom/all (304), counting Redis bytes', log),
  );
  const floorShape = { redisBytes: bytesPerRequest, bodyBytes: 0 };
  const {
    load: notModified,
    ceiling,
    floor,
    cpuPerRequest,
    ceilingCpuPerRequest,
    floorCpuPerRequest,
  } = await againstCeiling({ url: twin.url, requests: conditional }, 'GET /feeds/{token}/atom/all (304)', floorShape);
  const cached = await drive({ url: twin.url, connections, duration, requests: unconditional }, 'GET /feeds/{token}/atom/all (200, cached body)', log);
  // autocannon counts a 304 as not 2xx: a sample of its own says they were all 304s.
  const sampleStatuses = await inBatches(conditional.slice(0, SAMPLE), 10, async (r) => (await fetch(`${twin.url}${r.path}`, { headers: r.headers })).status);
  const sampled304 = sampleStatuses.filter((status) => status === 304).length;

  const redis = new Redis(twin.redisUrl);
  try {
    const stormFeeds = await feedsOf(stormCookie!);
    const stormPath = pathOf(stormFeeds.all.json).replace(/\/all$/, `/${newsletter.insertId}`);
    // Learnt before the change (a first poll takes nothing from the token's rate), so every poll of the storm meets the same version.
    await (await fetch(`${twin.url}${stormPath}`)).arrayBuffer();
    log('storm: muting the newsletter (a change), then 1,000 concurrent polls of its feed');
    const muted = await fetch(`${twin.url}/me/newsletters/${newsletter.insertId}/mute`, { method: 'POST', headers: { cookie: stormCookie! } });
    if (muted.status !== 200) throw new Error(`mute failed: ${muted.status}`);
    const windows = feedCacheCounterKeys(Date.now());
    const bytesBefore = await cachedFeedBytes(redis, windows);
    let storm!: Awaited<ReturnType<typeof drive>>;
    /** The storm's answers by status, so that a poll not answered 200 says what it was answered. */
    const stormStatuses: Record<number, number> = {};
    // Every build of a newsletter's feed reads its title once: counted as MariaDB saw them, whatever
    // became of the build (kept, over budget, read through, or failed before it was counted).
    const titleReads = await statementsDuring(
      twin.databaseUrl,
      async () =>
        (storm = await drive({ url: `${twin.url}${stormPath}`, connections: STORM, amount: STORM, timeout: 30 }, 'storm', log, (status) => {
          stormStatuses[status] = (stormStatuses[status] ?? 0) + 1;
        })),
      `SELECT name, muted FROM subscriptions WHERE user_id = ${stormUser!.id} AND newsletter_id = ${newsletter.insertId}`,
    );
    const builds = titleReads.length;
    // The body as the cache holds it, not as one more poll answers it: the storm has spent the token's burst, so that poll is a 429.
    const bodyBytes = await cachedBodyBytes(redis, tokenOf(stormFeeds.all.json), `json:${newsletter.insertId}:${new URL(stormFeeds.all.json).origin}`);
    // Each build whose bytes were counted adds its body and ENTRY_OVERHEAD (shared/mail/feed-cache.ts) to the budget's counter:
    // a second figure, short of the builds when a count failed (it did, by hundreds, when the storm timed Redis out).
    const buildsCounted = round(((await cachedFeedBytes(redis, windows)) - bytesBefore) / (bodyBytes + 200), 2);

    const perReader304 = await bytesOfToken(redis, tokenOf(pollerFeeds[0]!.all.atom));
    const perReaderStorm = await bytesOfToken(redis, tokenOf(stormFeeds.all.json));

    return {
      load: notModified,
      ceiling,
      ...(floor ? { floor } : {}),
      designs: {
        surge: { label: 'Surge: conditional poll (304)', load: notModified },
        cached: { label: 'poll answered from the cached body (200)', load: cached },
        ceiling: { label: "the gateway's ceiling", load: ceiling },
      },
      extra: {
        floor_shape: floorShape,
        floor_cpu_ms_per_request: floorCpuPerRequest,
        readers: READERS,
        // A 304 is not 2xx to autocannon: what is not 304 shows in the sample.
        not_modified_non_2xx: notModified.errors,
        cached_rps: cached.rps,
        cached_p99_ms: cached.p99_ms,
        cached_ratio_to_ceiling: round(cached.rps / ceiling.rps, 3),
        cpu_ms_per_request: cpuPerRequest,
        ceiling_cpu_ms_per_request: ceilingCpuPerRequest,
        storm: {
          requests: storm.requests,
          ok: storm.ok,
          p50_ms: storm.p50_ms,
          p99_ms: storm.p99_ms,
          statuses: stormStatuses,
          builds,
          builds_counted_by_budget: buildsCounted,
          body_bytes: bodyBytes,
        },
        redis_bytes_per_reader: { polled_304_only: perReader304, with_cached_feeds: perReaderStorm },
      },
      invariants: {
        builds_per_change: { expected: 1, actual: builds },
        storm_ok: { expected: STORM, actual: storm.ok },
        sampled_304: { expected: SAMPLE, actual: sampled304 },
        cached_errors: { expected: 0, actual: cached.errors },
      },
    };
  } finally {
    redis.disconnect();
    await releaseSharedClients();
  }
};
