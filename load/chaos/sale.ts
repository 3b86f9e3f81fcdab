import { randomBytes } from 'node:crypto';
import type { Buyer } from './buyer';
import type { SaleKind } from './kinds';

/** One HTTP request a buyer sent: when (ms since the epoch), how long it took, and its answer. */
export interface Attempt {
  startedAt: number;
  ms: number;
  /** The status, or 'network' (refused, reset) or 'timeout' (no answer in time: it hung). */
  status: number | 'network' | 'timeout';
}

export interface BuyerOutcome {
  buyer: Buyer;
  attempts: Attempt[];
  /** The reservation an answer acknowledged. */
  reservationId?: string;
  /** The last answer: one of the kind's final answers when the buyer is done, anything else when it gave up. */
  final?: Attempt['status'];
}

export interface SaleOptions {
  url: string;
  kind: SaleKind;
  /** The item or deal. */
  owner: string;
  buyers: Buyer[];
  /** Arrivals are spread evenly (with jitter) over this long. */
  arrivalMs: number;
  /** How long after its arrival a buyer keeps retrying. */
  patienceMs: number;
  /**
   * The last this many buyers arrive only once `release()` is called, at the crowd's pace from
   * then on: load that is sure to meet a fault the caller releases them into.
   */
  heldBack?: number;
}

/** A request with no answer after this hung: longer than the function's own 10 s timeout. */
const REQUEST_TIMEOUT_MS = 12_000;
/** Retry backoff, doubled from the first to the last, each wait between half and all of it. */
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 1_000;

/** Statuses a client may retry (an order with the same key): 503 and 429 say so (when, in Retry-After), and a lost answer says nothing. */
const retrySafe = (status: Attempt['status']) => status === 503 || status === 429 || status === 'network' || status === 'timeout';
/** The buyer is done: acknowledged, or refused for good. */
export const isFinal = (kind: SaleKind, status: Attempt['status'] | undefined) => typeof status === 'number' && kind.final.includes(status);

/** A flash sale under way: each buyer asks once (an order, a coupon) and retries until it is answered. */
export interface Sale {
  /** Every buyer's outcome, once all are done or out of patience. */
  finished: Promise<BuyerOutcome[]>;
  /** Reservations acknowledged so far, by id. */
  acknowledged: Map<string, Buyer>;
  /** Resolves once this many reservations have been acknowledged (or every buyer not held back is done). */
  whenAcknowledged(count: number): Promise<void>;
  /** Every request answered so far, as it is answered. */
  attempts: Attempt[];
  /** Lets the held-back buyers arrive; once is enough. */
  release(): void;
}

export const newBuyerKey = () => randomBytes(9).toString('base64url');

async function attempt(options: SaleOptions, buyer: Buyer): Promise<Attempt & { reservationId?: string; retryAfterMs?: number }> {
  const startedAt = Date.now();
  const started = performance.now();
  const { path, headers, body } = options.kind.request(options.owner, buyer);
  try {
    const res = await fetch(`${options.url}${path}`, {
      method: 'POST',
      headers: { ...headers, cookie: buyer.cookie },
      ...(body ? { body } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const reservationId = options.kind.acknowledged(res.status, await res.text());
    const retryAfter = Number(res.headers.get('retry-after'));
    return {
      startedAt,
      ms: performance.now() - started,
      status: res.status,
      ...(reservationId ? { reservationId } : {}),
      ...(retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    };
  } catch (error) {
    const status = (error as Error).name === 'TimeoutError' ? 'timeout' : 'network';
    return { startedAt, ms: performance.now() - started, status };
  }
}

export function startSale(options: SaleOptions): Sale {
  const acknowledged = new Map<string, Buyer>();
  const waiters: { count: number; resolve: () => void }[] = [];
  const acknowledge = (id: string, buyer: Buyer) => {
    acknowledged.set(id, buyer);
    for (const waiter of waiters.filter((w) => acknowledged.size >= w.count)) waiter.resolve();
  };

  const attempts: Attempt[] = [];
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const firstHeld = options.buyers.length - (options.heldBack ?? 0);

  async function shop(buyer: Buyer, index: number): Promise<BuyerOutcome> {
    // The held-back buyers' places count from their release.
    const place = index < firstHeld ? index : index - firstHeld;
    if (index >= firstHeld) await released;
    const arrival = (place / options.buyers.length) * options.arrivalMs + Math.random() * (options.arrivalMs / options.buyers.length);
    await new Promise((r) => setTimeout(r, arrival));
    const giveUpAt = Date.now() + options.patienceMs;
    const outcome: BuyerOutcome = { buyer, attempts: [] };
    for (let retry = 0; ; retry += 1) {
      const { reservationId, retryAfterMs = 0, ...answer } = await attempt(options, buyer);
      outcome.attempts.push(answer);
      attempts.push(answer);
      outcome.final = answer.status;
      if (reservationId) {
        outcome.reservationId = reservationId;
        acknowledge(reservationId, buyer);
      }
      if (isFinal(options.kind, answer.status) || !retrySafe(answer.status) || Date.now() >= giveUpAt) return outcome;
      // A well-behaved client: its own backoff, but never sooner than the server's Retry-After (spread by up to half again).
      const backoff = Math.min(BACKOFF_FIRST_MS * 2 ** retry, BACKOFF_MAX_MS);
      const wait = Math.max(backoff / 2 + (Math.random() * backoff) / 2, retryAfterMs * (1 + Math.random() / 2));
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  const shopping = options.buyers.map(shop);
  const finished = Promise.all(shopping);
  // Held-back buyers wait for the fault, which may wait for this: they count only once released.
  void Promise.all(shopping.slice(0, firstHeld)).then(() => waiters.forEach((w) => w.resolve()));
  return {
    finished,
    acknowledged,
    attempts,
    release,
    whenAcknowledged: (count) =>
      new Promise<void>((resolve) => {
        if (acknowledged.size >= count) resolve();
        else waiters.push({ count, resolve });
      }),
  };
}
