/**
 * The benches' strongest MySQL baselines keep what they are measured on: never more units or
 * coupons than there are, a row for each success, one coupon per user, and the deal's counter
 * equal to its coupons, in a transaction and in autocommit alike.
 */
import { randomBytes } from 'node:crypto';
import type { RowDataPacket } from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { db } from '../../shared/platform/clients/mysql';
import { upsertDeal } from '../../shared/coupons/deals';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { issueCouponConditionalAutocommit, issueCouponConditionalTransaction } from '../../load/baselines/coupons-conditional';
import { placeOrderConditionalAutocommit, placeOrderConditionalTransaction } from '../../load/baselines/orders-conditional';
import { sql, soldCount, uniqueItemId } from '../support/orders';

const HOUR = 3_600_000;
const codeOf = (outcome: PromiseSettledResult<unknown>) => (outcome.status === 'fulfilled' ? 'ok' : (outcome.reason as { code?: string }).code);
const tally = (outcomes: PromiseSettledResult<unknown>[]) =>
  outcomes.map(codeOf).reduce<Record<string, number>>((t, c) => ({ ...t, [c!]: (t[c!] ?? 0) + 1 }), {});

const orderDesigns = { transaction: placeOrderConditionalTransaction, autocommit: placeOrderConditionalAutocommit };
/**
 * In autocommit a user's concurrent second ask holds a count until its INSERT is refused and the
 * count given back; others refused meanwhile make the deal end short of its limit, never over it.
 */
const couponDesigns = {
  transaction: { issue: issueCouponConditionalTransaction, issuesTheWholeLimit: true },
  autocommit: { issue: issueCouponConditionalAutocommit, issuesTheWholeLimit: false },
};

describe.each(Object.entries(orderDesigns))('orders by conditional UPDATE, %s', (_design, place) => {
  it('sells exactly the stock to a crowd three times its size, a row for each unit', async () => {
    // Prepare
    const itemId = uniqueItemId('conditional');
    await upsertItemStock(itemId, 10, 1);

    // Act
    const outcomes = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => place(db(), itemId, 1_000 + i, 1)));

    // Assess
    expect(tally(outcomes)).toEqual({ ok: 10, SOLD_OUT: 20 });
    expect(await soldCount(itemId)).toBe(10);
    expect((await sql<RowDataPacket>('SELECT COUNT(*) AS n FROM orders WHERE item_id = ?', [itemId]))[0]!.n).toBe(10);
  });

  it('refuses a quantity over the per-buyer limit and an unknown item, taking nothing', async () => {
    // Prepare
    const itemId = uniqueItemId('conditional');
    await upsertItemStock(itemId, 10, 2);

    // Act
    const outcomes = await Promise.allSettled([place(db(), itemId, 1, 3), place(db(), uniqueItemId('missing'), 1, 1)]);

    // Assess
    expect(outcomes.map(codeOf)).toEqual(['LIMIT_EXCEEDED', 'NOT_FOUND']);
    expect(await soldCount(itemId)).toBe(0);
  });
});

describe.each(Object.entries(couponDesigns))('coupons by conditional UPDATE, %s', (_design, { issue, issuesTheWholeLimit }) => {
  const openDeal = async (window: { opensAt: number; closesAt: number }, limit: number) => {
    const id = `conditional-${randomBytes(5).toString('hex')}`;
    await upsertDeal({ id, title: id, ...window, limit });
    return id;
  };
  const dealFacts = async (dealId: string) => {
    const [row] = await sql<RowDataPacket>('SELECT issued, (SELECT COUNT(*) FROM coupons WHERE deal_id = ?) AS coupons FROM deals WHERE id = ?', [
      dealId,
      dealId,
    ]);
    return { issued: Number(row!.issued), coupons: Number(row!.coupons) };
  };

  it(`issues ${issuesTheWholeLimit ? 'exactly' : 'at most'} the limit, one per user, and its counter equals its coupons`, async () => {
    // Prepare: 20 users for 5 coupons, the first of them asking twice at once
    const dealId = await openDeal({ opensAt: Date.now() - HOUR, closesAt: Date.now() + HOUR }, 5);
    const users = [1, ...Array.from({ length: 20 }, (_, i) => 1 + i)];

    // Act
    const outcomes = await Promise.allSettled(users.map((userId) => issue(db(), dealId, userId)));
    const again = await Promise.allSettled([
      issue(db(), dealId, Number((await sql<RowDataPacket>('SELECT user_id FROM coupons WHERE deal_id = ? LIMIT 1', [dealId]))[0]!.user_id)),
    ]);

    // Assess
    const issued = tally(outcomes).ok!;
    if (issuesTheWholeLimit) expect(issued).toBe(5);
    else expect(issued).toBeGreaterThanOrEqual(4);
    expect(issued).toBeLessThanOrEqual(5);
    expect(again.map(codeOf)).toEqual(['ALREADY_ISSUED']);
    expect(await dealFacts(dealId)).toEqual({ issued, coupons: issued });
    expect((await sql<RowDataPacket>('SELECT COUNT(DISTINCT user_id) AS n FROM coupons WHERE deal_id = ?', [dealId]))[0]!.n).toBe(issued);
  });

  it('gives a user who already holds one ALREADY_ISSUED while coupons are left, and the count back', async () => {
    // Prepare
    const dealId = await openDeal({ opensAt: Date.now() - HOUR, closesAt: Date.now() + HOUR }, 5);
    await issue(db(), dealId, 7);

    // Act
    const outcome = await Promise.allSettled([issue(db(), dealId, 7)]);

    // Assess
    expect(outcome.map(codeOf)).toEqual(['ALREADY_ISSUED']);
    expect(await dealFacts(dealId)).toEqual({ issued: 1, coupons: 1 });
  });

  it('refuses outside the window', async () => {
    // Prepare
    const later = await openDeal({ opensAt: Date.now() + HOUR, closesAt: Date.now() + 2 * HOUR }, 5);
    const over = await openDeal({ opensAt: Date.now() - 2 * HOUR, closesAt: Date.now() - HOUR }, 5);

    // Act
    const outcomes = await Promise.allSettled([issue(db(), later, 1), issue(db(), over, 1)]);

    // Assess
    expect(outcomes.map(codeOf)).toEqual(['NOT_OPEN', 'CLOSED']);
    expect([await dealFacts(later), await dealFacts(over)]).toEqual([
      { issued: 0, coupons: 0 },
      { issued: 0, coupons: 0 },
    ]);
  });
});
