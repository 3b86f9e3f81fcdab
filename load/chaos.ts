/**
 * `npm run chaos -- <scenario> [--small] [--bundles] [--coupons] [--fault-s S] [--from <commit>]`
 *
 * Runs one fault-injection scenario (load/chaos/scenarios/<scenario>.ts): a twin of its own, a
 * flash sale through its HTTP API, a fault mid-sale, recovery, then the count of what the buyers
 * were promised against what was stored. Progress goes to stderr; the report is the last line of
 * stdout, one JSON object. Exits 1 when an invariant does not hold. --small runs the same race
 * with fewer buyers, as the tests do; --bundles runs the twin's functions as their bundles;
 * --coupons races for a deal's coupons instead of an item's units; --fault-s sets how long a fault
 * with a length lasts (redis-failover: the seconds replication is held before the failover);
 * --from names the release a deploy starts from (deploy-mid-sale).
 */
import { printResult } from './support/result-line';
import { readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ChaosOptions, ChaosReport } from './chaos/report';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    small: { type: 'boolean', default: false },
    bundles: { type: 'boolean', default: false },
    coupons: { type: 'boolean', default: false },
    'fault-s': { type: 'string' },
    from: { type: 'string' },
  },
});
const names = readdirSync(new URL('./chaos/scenarios', import.meta.url)).map((file) => file.replace(/\.ts$/, ''));
const name = positionals[0] ?? '';
if (!names.includes(name)) {
  process.stderr.write(`usage: npm run chaos -- <${names.join('|')}> [--small] [--bundles] [--coupons] [--fault-s S] [--from <commit>]\n`);
  process.exit(2);
}
const scenario = (await import(`./chaos/scenarios/${name}.ts`)) as { run(options: ChaosOptions): Promise<ChaosReport> };
const report = await scenario.run({
  scale: values.small ? 'small' : 'full',
  bundles: values.bundles,
  kind: values.coupons ? 'coupons' : 'orders',
  ...(values['fault-s'] === undefined ? {} : { faultSeconds: Number(values['fault-s']) }),
  ...(values.from === undefined ? {} : { from: values.from }),
  log: (message) => process.stderr.write(`chaos: ${message}\n`),
});
await printResult(report);
process.exit(Object.values(report.invariants).every(Boolean) ? 0 : 1);
