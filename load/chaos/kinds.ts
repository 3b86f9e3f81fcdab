import type { Pool } from 'mysql2/promise';
import { dealKeys } from '../../shared/coupons/model';
import { itemKeys } from '../../shared/sale/orders/model';
import { adminPut } from '../support/crowd';
import type { TwinInfo } from '../support/twin';
import { couponAnswers, orderAnswers, readCouponLedger, readOrderLedger, type Answers, type Ledger } from './count';
import type { Buyer } from './buyer';

/**
 * What differs between the two kinds of reservation a scenario can race for, an item's orders and
 * a deal's coupons: how the owner is opened, what a buyer sends and what acknowledges it, and how
 * it is counted. The crowd, its retry policy, the fault, recovery and the invariants are the
 * harness's, written once.
 */
export interface SaleKind {
  /** As the reconcile CLI names the kind in its lines. */
  name: 'orders' | 'coupons';
  /** One reservation, in the report's names: every_acknowledged_<noun>_found, <noun>_answers. */
  noun: 'order' | 'coupon';
  /** Opens the owner with `units` units, at most one per buyer, as the admin. */
  open(twin: TwinInfo, adminCookie: string, owner: string, units: number): Promise<void>;
  /** A buyer's one request, sent again unchanged on each retry. */
  request(owner: string, buyer: Buyer): { path: string; headers: Record<string, string>; body?: string };
  /** The reservation an answer acknowledged, if it did. */
  acknowledged(status: number, body: string): string | undefined;
  /** The answers after which a buyer asks no more: acknowledged, or refused for good. */
  final: readonly number[];
  readLedger(db: Pool, owner: string, acknowledged: Map<string, Buyer>): Promise<Ledger>;
  /** Asks the API for every acknowledged reservation as its buyer would. */
  answers(url: string, acknowledged: Map<string, Buyer>): Promise<Answers>;
  /** The owner's hash in Redis of who holds a reservation (user id → what they hold): what Redis would lose of them. */
  holders(owner: string): string;
}

const orders: SaleKind = {
  name: 'orders',
  noun: 'order',
  open: (twin, cookie, itemId, units) => adminPut(twin, cookie, `/items/${itemId}/stock`, { quantity: units, perUserLimit: 1 }),
  request: (itemId, buyer) => ({
    path: `/items/${itemId}/orders`,
    headers: { 'content-type': 'application/json', 'idempotency-key': buyer.key },
    body: '{"quantity":1}',
  }),
  acknowledged: (status, body) => (status === 202 ? (JSON.parse(body) as { orderId: string }).orderId : undefined),
  final: [202, 409],
  readLedger: readOrderLedger,
  answers: orderAnswers,
  holders: (itemId) => itemKeys(itemId).buyers,
};

/** Long enough for any scenario's sale and recovery: the deal must not close under the crowd. */
const DEAL_OPEN_MS = 3_600_000;

const coupons: SaleKind = {
  name: 'coupons',
  noun: 'coupon',
  open(twin, cookie, dealId, units) {
    const now = Date.now();
    return adminPut(twin, cookie, `/deals/${dealId}`, {
      title: `Chaos deal ${dealId}`,
      // Opened a minute ago, so no clock between the suite and the functions finds it not open yet.
      opensAt: new Date(now - 60_000).toISOString(),
      closesAt: new Date(now + DEAL_OPEN_MS).toISOString(),
      limit: units,
    });
  },
  // No key: the deal itself allows one coupon per user, and a retry is told which it holds.
  request: (dealId) => ({ path: `/deals/${dealId}/coupons`, headers: {} }),
  acknowledged(status, body) {
    if (status === 201) return (JSON.parse(body) as { couponId: string }).couponId;
    if (status !== 409) return undefined;
    // The coupon an earlier attempt was issued, whose answer the buyer never got (a 503, a lost reply).
    const { error } = JSON.parse(body) as { error: { code: string; details?: { couponId?: string } } };
    return error.code === 'ALREADY_ISSUED' ? error.details?.couponId : undefined;
  },
  final: [201, 409],
  readLedger: readCouponLedger,
  answers: couponAnswers,
  holders: (dealId) => dealKeys(dealId).buyers,
};

export const SALE_KINDS: Record<SaleKind['name'], SaleKind> = { orders, coupons };
