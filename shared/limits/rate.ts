import { createHash } from 'node:crypto';
import { redis } from '../platform/clients/redis';
import { limitsEnv, readEnv } from '../platform/config';
import { RateLimitedError } from '../platform/errors';
import { LimitCode } from './codes';
import { luaScript } from '../platform/redis/script';
import { once } from '../platform/once';
import { gcra, LIMITS, type Rate } from './limits';

const takeScript = luaScript<[string], [number, number]>(new URL('./lua/rate-take-1.lua', import.meta.url));
const gateScript = luaScript<[string], [number, number, number, number]>(new URL('./lua/sign-in-gate-1.lua', import.meta.url));
const admitScript = luaScript<[string], number[]>(new URL('./lua/newsletter-admit-1.lua', import.meta.url));
const readerTakeScript = luaScript<[string, string], [number, number, number, number]>(new URL('./lua/mail-reader-take-2.lua', import.meta.url));
/** mail-reader-take-2.lua's replies but 0 (both taken). */
const READER_SENDER_REFUSED = 1;
const READER_REFUSED = 2;

/**
 * Sources exempt from per-source limits: a load test's generator, from the addresses it names
 * (IPv4 CIDR blocks, e.g. 127.0.0.0/8). Never set in the prod stage.
 */
const loadTestSources = once(() =>
  (readEnv(limitsEnv).LOAD_TEST_SOURCES ?? '')
    .split(',')
    .filter(Boolean)
    .map((block) => {
      const [address, bits = '32'] = block.split('/');
      const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
      return { network: (ipv4(address!)! & mask) >>> 0, mask };
    }),
);

function ipv4(address: string): number | undefined {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined;
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

export function isLoadTestSource(address: string): boolean {
  const value = ipv4(address);
  return value !== undefined && loadTestSources().some((b) => (value & b.mask) >>> 0 === b.network);
}

/** Keys of one source address share its hash tag, so a source's limits are checked in one slot. */
const sourceKey = (address: string, what: string) => `{ip:${address}}:${what}`;
/** An address is never kept in a key name as itself. */
const emailHash = (email: string) => createHash('sha256').update(email).digest('base64url').slice(0, 22);

/** Takes one request from `key`'s rate; throws RateLimitedError when there is none left. */
export async function takeRate(key: string, rate: Rate, message?: string): Promise<void> {
  const wait = Number(await takeScript.run(redis(), [key], gcra(rate)));
  if (wait > 0) throw new RateLimitedError(wait, message);
}

export interface ReservationRates {
  keys: [perBuyer: string, perSource: string];
  /** Interval and burst of each, in the keys' order; an interval of 0 for a source under a load-test allowance. */
  args: [number, number, number, number];
}

/**
 * A reservation's limits, per buyer and per source, as the keys (in the owner's slot, its hash
 * tag) and arguments its script takes them with, inside its own decision: no round trip of their
 * own. A source under a load-test allowance is held to the per-buyer one only.
 */
export function reservationRates(
  { perBuyer, perSource }: { perBuyer: Rate; perSource: Rate },
  ownerTag: string,
  buyer: number,
  address: string,
): ReservationRates {
  return {
    keys: [`${ownerTag}:rate:buyer:${buyer}`, `${ownerTag}:rate:source:${address}`],
    args: [...gcra(perBuyer), ...(isLoadTestSource(address) ? ([0, 0] as const) : gcra(perSource))],
  };
}

/** Throws the 429, with the kind's own message, when a reservation script's reply says a rate refused it: {RateLimited, ms until one would be allowed}. */
export function throwIfRateLimited(reply: unknown, message: string): void {
  if (Array.isArray(reply) && reply[0] === LimitCode.RateLimited) throw new RateLimitedError(Number(reply[1]), message);
}

/** A join of a waiting room from one source address. */
export function takeQueueJoin(address: string): Promise<void> {
  return isLoadTestSource(address)
    ? Promise.resolve()
    : takeRate(sourceKey(address, 'queue-join'), LIMITS.queueJoinsPerSource, 'Too many joins from this address; try again later');
}

/** A buyer's pass claims: each that finds its turn not come reads the room, so a script's loop of them is held to a person's pace. */
export function takeQueueClaim(userId: number): Promise<void> {
  return takeRate(`{user:${userId}}:rate:queue-claim`, LIMITS.queueClaimsPerBuyer, 'Too many claims; wait for your turn and claim once');
}

/** Sign-up from one source address. */
export function takeSignUp(address: string): Promise<void> {
  return isLoadTestSource(address)
    ? Promise.resolve()
    : takeRate(sourceKey(address, 'signup'), LIMITS.signUpPerSource, 'Too many accounts from this address; try again later');
}

/**
 * Before a sign-in is tried (before the user is looked up, before any scrypt): refused while
 * this address is locked out from this source, or past the source's rate. Each attempt counts
 * towards the pair's lockout until one succeeds. The answer is the same whether or not the
 * address has an account.
 */
export async function admitSignIn(email: string, address: string): Promise<void> {
  const { failures, firstLockoutMs, longestLockoutMs, rememberMs } = LIMITS.signInLockout;
  // Both keys carry the source's tag (one slot), and go out in one write.
  const waits = await Promise.all([
    gateScript.run(redis(), [sourceKey(address, `signin:${emailHash(email)}`)], [failures, firstLockoutMs, longestLockoutMs, rememberMs]),
    ...(isLoadTestSource(address) ? [] : [takeScript.run(redis(), [sourceKey(address, 'signin')], gcra(LIMITS.signInPerSource))]),
  ]);
  const wait = Math.max(...waits.map(Number));
  if (wait > 0) throw new RateLimitedError(wait, 'Too many sign-in attempts; try again later');
}

/** A right password: the pair's attempts and lockout level are forgotten. */
export async function signInSucceeded(email: string, address: string): Promise<void> {
  await redis().del(sourceKey(address, `signin:${emailHash(email)}`));
}

/** Who sent a mail, for its rates: its From domain, and whether SES authenticated it (DMARC PASS). */
export interface MailSender {
  domain: string;
  authenticated: boolean;
}

/** Which of inbound mail's rates refused a delivery: the reason it is quarantined with. */
export type MailRateRefusal = 'rate-reader-sender' | 'rate-reader' | 'rate-sender-domain';

/** A From domain is the sender's to write: one that is not a plain host name goes into key names hashed. */
const senderName = ({ domain, authenticated }: MailSender) =>
  `${authenticated ? 'dmarc' : 'from'}:${/^[a-z0-9.-]{1,253}$/.test(domain) ? domain : emailHash(domain)}`;

/** Each key its own hash tag: the reader's two in the reader's slot, the domain's in one of its own. */
export const mailRateKeys = (userId: number, sender: MailSender) => ({
  readerSender: `{user:${userId}}:rate:mail:${senderName(sender)}`,
  reader: `{user:${userId}}:rate:mail`,
  senderDomain: `{mail-sender:${senderName(sender)}}:rate`,
});

/**
 * Takes one delivery of a mail from `sender` for each reader, and says for each whether a rate
 * refused it. What the sender may send that reader is taken first, and the reader's own rate only
 * for a delivery it admits, in one script in the reader's slot (mail-reader-take-2.lua), one round
 * trip for all readers; the sender domain's rate, in a slot of its own, is taken in a second for
 * each delivery the first round's sender rate admitted. So a flood from one sender never uses up
 * its target's rate, nor its domain's, for everyone else's mail.
 */
export async function takeMailRates(sender: MailSender, readers: number[]): Promise<(MailRateRefusal | undefined)[]> {
  const domainRate = sender.authenticated ? LIMITS.mailPerSenderDomain : LIMITS.mailPerUnauthenticatedSenderDomain;
  const keys = readers.map((userId) => mailRateKeys(userId, sender));
  const readerRates: [number, number, number, number] = [...gcra(LIMITS.mailPerReaderFromSender), ...gcra(LIMITS.mailPerReader)];
  // Each round's calls go out in one write (the shared connection coalesces them).
  const byReader = await Promise.all(keys.map(async (k) => Number(await readerTakeScript.run(redis(), [k.readerSender, k.reader], readerRates))));
  return Promise.all(
    keys.map(async (k, i) => {
      if (byReader[i] === READER_SENDER_REFUSED) return 'rate-reader-sender';
      const byDomain = Number(await takeScript.run(redis(), [k.senderDomain], gcra(domainRate))) > 0;
      return byReader[i] === READER_REFUSED ? 'rate-reader' : byDomain ? 'rate-sender-domain' : undefined;
    }),
  );
}

/** A reader's newsletters admitted as new to them (newsletter-admit-1.lua), in the reader's slot. */
export const newNewslettersKey = (userId: number) => `{user:${userId}}:rate:new-newsletters`;

/**
 * Whether a newsletter new to a reader is within their cap of new ones (newNewslettersPerReader).
 * `stored`: the newsletters MySQL holds as new to them within the window, as the caller read them;
 * the script counts those admitted and not stored yet beside them, atomically, so mails of many new
 * newsletters arriving at once cannot each see room. A mail its reader released is admitted past
 * the cap, and counts.
 */
export async function admitNewNewsletter(userId: number, newsletterId: number, stored: number[], pastCap: boolean): Promise<boolean> {
  const { count, periodMs } = LIMITS.newNewslettersPerReader;
  return Number(await admitScript.run(redis(), [newNewslettersKey(userId)], [newsletterId, count, periodMs, pastCap ? 1 : 0, ...stored])) === 1;
}
