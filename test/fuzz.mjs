/**
 * `npm run fuzz [-- --runs N] [--seed S]`: the fuzz run of every route (test/api/fuzz.test.ts),
 * longer than the few runs a route it gets in `npm test`. Prints the seed (a failure repeats with
 * it) and the requests sent by route and status; exits non-zero when a property fails.
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '200' }, seed: { type: 'string' } } });
for (const [name, value] of Object.entries(values)) {
  if (value !== undefined && !/^\d+$/.test(value)) {
    process.stderr.write(`fuzz: --${name} takes a whole number, not ${value}\n`);
    process.exit(2);
  }
}
const env = { ...process.env, SURGE_FUZZ_RUNS: values.runs, ...(values.seed ? { SURGE_FUZZ_SEED: values.seed } : {}) };
const { status } = spawnSync('npx', ['vitest', 'run', 'test/api/fuzz.test.ts'], { stdio: 'inherit', env });
process.exit(status ?? 1);
