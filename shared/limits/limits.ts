/**
 * Every rate limit of the API and of inbound mail, in one place. A rate is `count` requests per
 * `periodMs`, with bursts of up to `count` at once; a GCRA key (see lua/rate-take-1.lua) enforces
 * it, except the newsletter cap: a sliding window over the newsletters MySQL holds as new to the
 * reader and those admitted in Redis but not stored yet (lua/newsletter-admit-1.lua, rate.ts).
 */
export interface Rate {
  count: number;
  periodMs: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const LIMITS = {
  /** Sign-in attempts from one source address, whatever the accounts. */
  signInPerSource: { count: 30, periodMs: MINUTE },
  /** Attempts for one address from one source, without a success, before a lockout; and the lockouts' lengths. */
  signInLockout: { failures: 5, firstLockoutMs: MINUTE, longestLockoutMs: HOUR, rememberMs: 15 * MINUTE },
  /** Accounts made from one source address. */
  signUpPerSource: { count: 10, periodMs: HOUR },
  /** Orders a buyer may place per item, and orders from one source per item. */
  ordersPerBuyer: { count: 10, periodMs: MINUTE },
  ordersPerSource: { count: 120, periodMs: MINUTE },
  /** Joins of waiting rooms from one source address, whatever the accounts (one place per account is the room's own rule). */
  queueJoinsPerSource: { count: 30, periodMs: MINUTE },
  /** Pass claims of one buyer, whatever the item: a page claims once at its turn, and again only after a lost answer. */
  queueClaimsPerBuyer: { count: 10, periodMs: MINUTE },
  /** Coupons a user may ask for per deal, and asks from one source per deal. */
  couponsPerUser: { count: 10, periodMs: MINUTE },
  couponsPerSource: { count: 120, periodMs: MINUTE },
  /**
   * Inbound mail, counted per delivery (one message to one reader). What one sender domain may
   * send one reader, checked first: a flood refused there takes nothing from the two below, so
   * the reader's mail from everyone else still passes.
   */
  mailPerReaderFromSender: { count: 100, periodMs: HOUR },
  /** Mail one reader gets from all senders together (a flood from many domains). */
  mailPerReader: { count: 500, periodMs: HOUR },
  /**
   * Mail from one sender domain to all readers together: a domain SES authenticated (DMARC PASS),
   * and a From domain it did not, counted apart, so forged mail never uses up the real sender's.
   */
  mailPerSenderDomain: { count: 10_000, periodMs: HOUR },
  mailPerUnauthenticatedSenderDomain: { count: 1_000, periodMs: HOUR },
  /**
   * Newsletters new to a reader in any 24 hours: each mail may carry a List-Id of its own, and
   * every new one would otherwise grow the reader's list and slip past their mutes.
   */
  newNewslettersPerReader: { count: 20, periodMs: DAY },
  /**
   * Polls of one reader's feeds and issue pages answered with a body, all under one token (a 304
   * takes nothing: it costs one read, less than refusing it would): generous for feed readers (a
   * reader with 50 newsletter feeds in two apps, each asking unconditionally every 15 minutes, asks
   * 400 an hour), far below a loop's. A storm of a thousand at once still passes (the burst), so the
   * bench's storm reaches the cache.
   */
  feedPollsPerToken: { count: 1_000, periodMs: HOUR },
} as const satisfies Record<string, Rate | object>;

/** The GCRA's parameters for a rate: one request per interval, `count` at once. */
export function gcra(rate: Rate): [interval: number, burst: number] {
  const interval = Math.max(1, Math.floor(rate.periodMs / rate.count));
  return [interval, interval * (rate.count - 1)];
}
