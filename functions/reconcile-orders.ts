import middy from '@middy/core';
import { storeCredentials } from '../shared/clients/credentials';
import type { ScheduledEvent } from 'aws-lambda';
import { reconcileDeal } from '../shared/coupons/reconcile';
import { listDeals } from '../shared/coupons/deals';
import { logger } from '../shared/logger';
import { listItems } from '../shared/orders/items';
import { reconcileItem } from '../shared/orders/reconcile';

/** Older than this, an outbox entry's send is taken as lost and relayed. */
const RELAY_AFTER_MS = 60_000;

/**
 * Every few minutes, for every item and deal: relays lost sends and reports drift. Counters are never reset unattended;
 * that is `npm run reconcile -- --repair`, after a person has looked.
 */
export const handler = middy<ScheduledEvent, { items: number; drifted: number }>()
  .use(storeCredentials())
  .handler(async () => {
  const items = await listItems();
  let drifted = 0;
  for (const item of items) {
    const report = await reconcileItem(item.id, { relayOlderThanMs: RELAY_AFTER_MS, repairCounters: false });
    if (!report) continue;
    if ((report.drift !== 0 && report.steady) || report.rejected > 0) {
      drifted += 1;
      logger.error('Stock drift', { ...report });
    } else if (report.relayed > 0) {
      logger.warn('Relayed lost order sends', { itemId: report.itemId, relayed: report.relayed });
    }
  }
  for (const deal of await listDeals()) {
    const report = await reconcileDeal(deal.id, RELAY_AFTER_MS);
    if (report && report.drift !== 0) {
      drifted += 1;
      logger.error('Coupon drift', { ...report });
    } else if (report?.relayed) {
      logger.warn('Relayed lost coupon sends', { dealId: report.dealId, relayed: report.relayed });
    }
  }
  return { items: items.length, drifted };
});
