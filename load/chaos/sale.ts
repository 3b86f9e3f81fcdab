import { randomBytes } from 'node:crypto';

/** One signed-in buyer of the crowd, with the one Idempotency-Key of their one order. */
export interface Buyer {
  userId: number;
  cookie: string;
  key: string;
}

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
  /** The order a 202 named. */
  orderId?: string;
  /** The last answer: 202 or 409 when the buyer is done, anything else when it gave up. */
  final?: Attempt['status'];
}

export interface SaleOptions {
  url: string;
  itemId: string;
  buyers: Buyer[];
  /** Arrivals are spread evenly (with jitter) over this long. */
  arrivalMs: number;
  /** How long after its arrival a buyer keeps retrying. */
  patienceMs: number;
}

/** A request with no answer after this hung: longer than the function's own 10 s timeout. */
const REQUEST_TIMEOUT_MS = 12_000;
/** Retry backoff, doubled from the first to the last, each wait between half and all of it. */
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 1_000;

/** Statuses a client may retry with the same key: 503 says so, and a lost answer says nothing. */
const retrySafe = (status: Attempt['status']) => status === 503 || status === 'network' || status === 'timeout';
const done = (status: Attempt['status']) => status === 202 || status === 409;

/** A flash sale under way: each buyer orders once and retries until it is answered. */
export interface Sale {
  /** Every buyer's outcome, once all are done or out of patience. */
  finished: Promise<BuyerOutcome[]>;
  /** Orders acknowledged so far, by order id. */
  acknowledged: Map<string, Buyer>;
  /** Resolves once this many orders have been acknowledged (or the sale is over). */
  whenAcknowledged(count: number): Promise<void>;
}

export const newBuyerKey = () => randomBytes(9).toString('base64url');

async function attempt(options: SaleOptions, buyer: Buyer): Promise<Attempt & { orderId?: string }> {
  const startedAt = Date.now();
  const started = performance.now();
  try {
    const res = await fetch(`${options.url}/items/${options.itemId}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: buyer.cookie, 'idempotency-key': buyer.key },
      body: '{"quantity":1}',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const body = await res.text();
    const orderId = res.status === 202 ? (JSON.parse(body) as { orderId: string }).orderId : undefined;
    return { startedAt, ms: performance.now() - started, status: res.status, ...(orderId ? { orderId } : {}) };
  } catch (error) {
    const status = (error as Error).name === 'TimeoutError' ? 'timeout' : 'network';
    return { startedAt, ms: performance.now() - started, status };
  }
}

export function startSale(options: SaleOptions): Sale {
  const acknowledged = new Map<string, Buyer>();
  const waiters: { count: number; resolve: () => void }[] = [];
  const acknowledge = (orderId: string, buyer: Buyer) => {
    acknowledged.set(orderId, buyer);
    for (const waiter of waiters.filter((w) => acknowledged.size >= w.count)) waiter.resolve();
  };

  async function shop(buyer: Buyer, index: number): Promise<BuyerOutcome> {
    const arrival = (index / options.buyers.length) * options.arrivalMs + Math.random() * (options.arrivalMs / options.buyers.length);
    await new Promise((r) => setTimeout(r, arrival));
    const giveUpAt = Date.now() + options.patienceMs;
    const outcome: BuyerOutcome = { buyer, attempts: [] };
    for (let retry = 0; ; retry += 1) {
      const { orderId, ...answer } = await attempt(options, buyer);
      outcome.attempts.push(answer);
      outcome.final = answer.status;
      if (orderId) {
        outcome.orderId = orderId;
        acknowledge(orderId, buyer);
      }
      if (done(answer.status) || !retrySafe(answer.status) || Date.now() >= giveUpAt) return outcome;
      const backoff = Math.min(BACKOFF_FIRST_MS * 2 ** retry, BACKOFF_MAX_MS);
      await new Promise((r) => setTimeout(r, backoff / 2 + (Math.random() * backoff) / 2));
    }
  }

  const finished = Promise.all(options.buyers.map(shop));
  void finished.then(() => waiters.forEach((w) => w.resolve()));
  return {
    finished,
    acknowledged,
    whenAcknowledged: (count) =>
      new Promise<void>((resolve) => {
        if (acknowledged.size >= count) resolve();
        else waiters.push({ count, resolve });
      }),
  };
}
