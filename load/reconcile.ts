/**
 * `npm run reconcile -- [itemId ...] [--repair] [--relay-after-s 60]`
 *
 * Checks initial = remaining (Redis) + confirmed (MySQL) + pending (outbox) for each item (all by
 * default, and every deal's limit = remaining + stored + pending) of the running twin, or of REDIS_URL / DATABASE_URL / ORDER_QUEUE_URL when set. Prints
 * one JSON line per item and exits 1 when any item drifts. --repair relays outbox entries older
 * than --relay-after-s, resets drifted stock counters and raises buyers' counts that fell below
 * their confirmed orders (after Redis lost writes).
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { twinEnvironment } from './support/twin';
import { listItems } from '../shared/orders/items';
import { listDeals } from '../shared/coupons/deals';
import { reconcileDeal } from '../shared/coupons/reconcile';
import { reconcileItem } from '../shared/orders/reconcile';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { repair: { type: 'boolean', default: false }, 'relay-after-s': { type: 'string', default: '60' } },
});

const twinState = '.local/twin/twin.json';
if (!process.env.REDIS_URL && existsSync(twinState)) Object.assign(process.env, twinEnvironment(JSON.parse(readFileSync(twinState, 'utf8'))));

const itemIds = positionals.length ? positionals : (await listItems()).map((i) => i.id);
let drifted = 0;
for (const itemId of itemIds) {
  const report = await reconcileItem(itemId, {
    relayOlderThanMs: values.repair ? Number(values['relay-after-s']) * 1000 : Number.POSITIVE_INFINITY,
    repairCounters: values.repair,
  });
  if (!report) {
    process.stdout.write(`${JSON.stringify({ itemId, error: 'no such item' })}\n`);
    drifted += 1;
    continue;
  }
  if (report.drift !== 0 && !report.counterReset) drifted += 1;
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
if (positionals.length === 0) {
  for (const deal of await listDeals()) {
    const report = await reconcileDeal(deal.id, values.repair ? Number(values['relay-after-s']) * 1000 : Number.POSITIVE_INFINITY);
    if (report && report.drift !== 0) drifted += 1;
    process.stdout.write(`${JSON.stringify(report)}\n`);
  }
}
process.exit(drifted ? 1 : 0);
