import { clockVersion } from '../cache/versions';
import { gcra, LIMITS } from '../limits/limits';
import { redis } from '../platform/clients/redis';
import { NotFoundError, RateLimitedError } from '../platform/errors';
import { luaScript } from '../platform/redis/script';
import { LimitCode } from '../limits/codes';
import { feedTokenHash, feedTokenHashOf, readerOfFeedTokenHash, replaceFeedToken, tokenRevoked, tokensToRevoke } from './feed-tokens';

const pollScript = luaScript<[reader: string, version: string, rate: string], [interval: number, burst: number]>(
  new URL('./lua/feed-poll-3.lua', import.meta.url),
);
const learnScript = luaScript<[reader: string, version: string], [userId: number, candidate: string, lifetimeMs: number]>(
  new URL('./lua/feed-learn-2.lua', import.meta.url),
);
const bumpScript = luaScript<[reader: string, version: string], [candidate: string]>(new URL('./lua/feed-bump-2.lua', import.meta.url));

/** How long Redis keeps a token it learnt from MySQL; then one poll asks MySQL again, and the version starts anew. */
const KNOWN_MS = 24 * 3600_000;
/** How long a rotated token's "-" outlives the rotation: past any poll that read MySQL before it. */
const REVOKED_MS = 10 * 60_000;

/** The token's rate as the poll script takes it, worked out once rather than per poll. */
const POLL_RATE = gcra(LIMITS.feedPollsPerToken);

/** Every key of one token's feeds carries its hash as the hash tag: one slot per token. */
export function feedKeys(hash: string) {
  const tag = `{feed:${hash}}`;
  return { reader: `${tag}:reader`, version: `${tag}:version`, rate: `${tag}:rate`, bodies: `${tag}:body:` };
}

/** A poll's reader: who they are, their feeds' version (what the ETag says), and the token's hash. */
export interface FeedReader {
  userId: number;
  version: string;
  hash: string;
}

const noSuchFeed = () => new NotFoundError('No such feed');

/**
 * The reader a token opens and their feeds' version, by one read that takes nothing from the
 * token's rate: what a poll naming its copy (If-None-Match, If-Modified-Since) is answered 304 by
 * when that copy is current. The rate bounds what building feeds costs, and a 304 builds nothing;
 * refusing one would cost Redis more (the poll script's write) than answering it. Undefined when
 * Redis does not know the token as a reader's (unknown, forgotten, rotated away): admitFeedPoll
 * finds out which.
 */
export async function knownFeedReader(token: string): Promise<FeedReader | undefined> {
  const hash = feedTokenHash(token);
  const keys = feedKeys(hash);
  const [reader, version] = await redis().mget(keys.reader, keys.version);
  if (!reader || reader === '-' || !version) return undefined;
  return { userId: Number(reader), version, hash };
}

/**
 * The reader a feed token opens, having taken one poll from its rate: one script, one round trip
 * while Redis knows the token (a 304 needs nothing more). A token Redis does not know is looked up
 * in MySQL by its hash and taught to Redis. A wrong token is 404, a rotated one too.
 */
export async function admitFeedPoll(token: string): Promise<FeedReader> {
  const hash = feedTokenHash(token);
  const keys = feedKeys(hash);
  const reply = (await pollScript.run(redis(), [keys.reader, keys.version, keys.rate], POLL_RATE)) as [number, ...(string | number)[]];
  switch (reply[0]) {
    case 2:
      return { userId: Number(reply[1]), version: String(reply[2]), hash };
    case LimitCode.RateLimited:
      throw new RateLimitedError(Number(reply[1]), 'Too many polls of these feeds; try again later');
    case 1:
      throw noSuchFeed();
    default: {
      const userId = await readerOfFeedTokenHash(hash);
      if (userId === undefined) throw noSuchFeed();
      const [reader, version] = (await learnScript.run(redis(), [keys.reader, keys.version], [userId, clockVersion(), KNOWN_MS])) as [string, string];
      if (reader === '-') throw noSuchFeed();
      return { userId, version, hash };
    }
  }
}

/**
 * After anything a reader's feeds show has changed (an issue filed, a newsletter renamed, muted or
 * unmuted), committed: their feeds get a new version, so every poll's ETag misses and every cached
 * body is left behind. A reader without a feed token has nothing to bump.
 */
export async function feedsChanged(userId: number): Promise<void> {
  const hash = await feedTokenHashOf(userId);
  if (!hash) return;
  const keys = feedKeys(hash);
  await bumpScript.run(redis(), [keys.reader, keys.version], [clockVersion()]);
}

/** After a rotation: the old token answers 404 at once, and its version and rate go. Its cached bodies expire with their TTL. */
export async function revokeFeedToken(hash: string): Promise<void> {
  const keys = feedKeys(hash);
  // One slot: the shared connection sends the three together.
  await Promise.all([redis().set(keys.reader, '-', 'PX', REVOKED_MS), redis().del(keys.version), redis().del(keys.rate)]);
}

/**
 * Revokes in Redis the replaced tokens MySQL still lists, one reader's or (the sweep) anyone's, and
 * forgets each once revoked. Throws if Redis fails: those left are tried again later.
 */
export async function revokeReplacedTokens(userId?: number): Promise<number> {
  const hashes = await tokensToRevoke(userId);
  for (const hash of hashes) {
    await revokeFeedToken(hash);
    await tokenRevoked(hash);
  }
  return hashes.length;
}

/**
 * Gives the reader a new feed token, then revokes in Redis every one it replaced (this one's, and
 * any an earlier rotation could not). Should Redis fail there, the caller is told 503 and the old
 * token may answer a while: it stays listed until revoked, by the retry (or any later rotation) or
 * the sweep within a minute (revoke-feed-tokens).
 */
export async function rotateFeedToken(userId: number): Promise<string> {
  const token = await replaceFeedToken(userId);
  await revokeReplacedTokens(userId);
  return token;
}
