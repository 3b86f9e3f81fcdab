/**
 * `npm run reconcile -- [owner ...] [--repair] [--relay-after-s 60]`
 *
 * Checks capacity = remaining (Redis) + confirmed (MySQL) + pending (outbox) for every item's sale
 * and every deal (or the owners named) of the running twin, or of REDIS_URL / DATABASE_URL /
 * RESERVATION_QUEUE_URL when set, as the 5-minute schedule does (reconcileKinds). Prints one JSON
 * line per owner and exits 1 when any drifted (its drift held across two looks) and was not
 * repaired, waits for a lost state to be rebuilt, or was named but is unknown. --repair relays
 * outbox entries older than --relay-after-s, moves a counter whose drift held across two looks,
 * rebuilds a state Redis lost once nothing is in flight, and puts back buyers' holdings Redis lost.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { reconcileKinds } from '../../shared/reservations/reconcile';
import { kinds } from '../../shared/sale/kinds';
import { twinEnvironment } from '../twin/running';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { repair: { type: 'boolean', default: false }, 'relay-after-s': { type: 'string', default: '60' } },
});

const twinState = '.local/twin/twin.json';
if (!process.env.REDIS_URL && existsSync(twinState)) Object.assign(process.env, twinEnvironment(JSON.parse(readFileSync(twinState, 'utf8'))));

const print = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const run = await reconcileKinds(
  kinds,
  {
    relayOlderThanMs: values.repair ? Number(values['relay-after-s']) * 1000 : Number.POSITIVE_INFINITY,
    repair: values.repair,
    ...(positionals.length ? { only: positionals } : {}),
  },
  print,
);
for (const owner of run.unknown) print({ owner, error: 'no such item or deal' });
process.exit(run.unresolved || run.unknown.length || (positionals.length && !run.owners) ? 1 : 0);
