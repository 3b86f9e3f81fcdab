/**
 * `npm run reconcile -- [owner ...] [--repair] [--relay-after-s 60]`
 *
 * Checks capacity = remaining (Redis) + confirmed (MySQL) + pending (outbox) for every item's sale
 * and every deal (or the owners named) of the running twin, or of REDIS_URL / DATABASE_URL /
 * RESERVATION_QUEUE_URL when set. Prints one JSON line per owner and exits 1 when any drifts and was not
 * repaired. --repair relays outbox entries older than --relay-after-s, moves a counter whose drift
 * held across two looks, rebuilds a state Redis lost once nothing is in flight, and puts back
 * buyers' holdings Redis lost.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ReservationKind } from '../../shared/reservations/kind';
import { kinds } from '../../shared/reservations/kinds';
import { reconcileOwner } from '../../shared/reservations/reconcile';
import { twinEnvironment } from '../twin/running';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { repair: { type: 'boolean', default: false }, 'relay-after-s': { type: 'string', default: '60' } },
});

const twinState = '.local/twin/twin.json';
if (!process.env.REDIS_URL && existsSync(twinState)) Object.assign(process.env, twinEnvironment(JSON.parse(readFileSync(twinState, 'utf8'))));

const options = { relayOlderThanMs: values.repair ? Number(values['relay-after-s']) * 1000 : Number.POSITIVE_INFINITY, repair: values.repair };
let drifted = 0;
let found = 0;
for (const kind of kinds as readonly ReservationKind<unknown>[]) {
  const owners = await kind.owners();
  for (const owner of positionals.length ? positionals.filter((p) => owners.includes(p)) : owners) {
    const report = (await reconcileOwner(kind, owner, options))!;
    found += 1;
    const repaired = report.adjusted === report.drift || report.rebuilt;
    if ((report.drift !== 0 && !repaired) || report.waiting) drifted += 1;
    process.stdout.write(`${JSON.stringify(report)}\n`);
  }
}
for (const owner of positionals) {
  if (!(await Promise.all(kinds.map((k) => k.owners()))).flat().includes(owner)) {
    process.stdout.write(`${JSON.stringify({ owner, error: 'no such item or deal' })}\n`);
    drifted += 1;
  }
}
process.exit(drifted || (positionals.length && !found) ? 1 : 0);
