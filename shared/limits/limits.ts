/**
 * Every rate limit of the API, in one place. A rate is `count` requests per `periodMs`, with
 * bursts of up to `count` at once; a GCRA key (see lua/rate-take-1.lua) enforces it.
 */
export interface Rate {
  count: number;
  periodMs: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

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
  /** Coupons a user may ask for per deal, and asks from one source per deal. */
  couponsPerUser: { count: 10, periodMs: MINUTE },
  couponsPerSource: { count: 120, periodMs: MINUTE },
} as const satisfies Record<string, Rate | object>;

/** The GCRA's parameters for a rate: one request per interval, `count` at once. */
export function gcra(rate: Rate): [interval: number, burst: number] {
  const interval = Math.max(1, Math.floor(rate.periodMs / rate.count));
  return [interval, interval * (rate.count - 1)];
}
