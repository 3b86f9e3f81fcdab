import { defineConfig } from 'vitest/config';

/**
 * The long suites, each run by a script of its own (`npm run test:<name>`) and by CI after the
 * default run, so that `npm test` stays within minutes on two slow cores and nothing is dropped.
 */
const LONG_SUITES: Record<string, { files: string[]; why: string }> = {
  chaos: { files: ['test/chaos/**/*.test.ts'], why: 'each scenario is a twin of its own, a sale, a fault and a recovery: about a minute each' },
  bundles: {
    files: ['test/twin/bundle-mode.test.ts', 'test/twin/edge.test.ts', 'test/twin/npm-start.test.ts', 'test/twin/twin-metrics-bundles.test.ts'],
    why: 'each builds every bundle and starts twins with stores of their own, over TLS where --aws-stores, behind the production edge where --edge',
  },
};

/**
 * Files left out of the run against a Redis Cluster (`npm run test:cluster`), each for a reason of
 * its own; the single-node run covers them. The rest of the default suite runs on both.
 */
const SINGLE_NODE_ONLY = {
  // Each scenario runs a redis-server of its own that it kills, stops or fails over (load/chaos/redis.ts).
  'test/chaos/**': 'kills or fails over its own single redis-server',
  'test/platform/redis-away.test.ts': 'its own redis-server, stopped and started again',
  'test/platform/redis-client-failover.test.ts': 'its own primary/replica pair behind one endpoint (redis-pair.ts)',
  'test/twin/redis-pair.test.ts': 'the single-node primary/replica pair helper itself',
  'test/platform/redis-partition.test.ts': 'a TCP proxy in front of one node: a cluster would redirect past it',
  'test/reservations/release-unknown.test.ts': 'a TCP proxy in front of one node: a cluster would redirect past it',
  'test/platform/redis-out-of-memory.test.ts': 'its own redis-server with a tiny maxmemory',
  'test/sessions/sign-up-sessions-away.test.ts': 'a REDIS_URL at a port nothing listens on, as a single node',
  'test/platform/secure-stores.test.ts': 'its own TLS-only redis-server with AUTH',
  'test/twin/bundle-mode.test.ts': '--aws-stores, which the twin does not combine with --redis-cluster yet',
  'test/twin/npm-start.test.ts': 'twins with stores of their own, --aws-stores among them (single node)',
  'test/twin/edge.test.ts': 'a twin with stores of its own, behind the edge (single node)',
  // Not a matter of nodes: it synthesizes CloudFormation templates, minutes of CPU with no Redis in them.
  'test/infra/stack/**': 'synthesizes templates; talks to no Redis',
  'test/infra/deploy-names.test.ts': 'synthesizes templates; talks to no Redis',
  'test/infra/gradual-deploys.test.ts': 'synthesizes templates; talks to no Redis',
};

/** SURGE_SUITE=<name> runs that long suite alone; without it, everything else. */
const suite = process.env.SURGE_SUITE;
if (suite !== undefined && !(suite in LONG_SUITES)) throw new Error(`SURGE_SUITE=${suite}: not one of ${Object.keys(LONG_SUITES).join(', ')}`);
const longFiles = Object.values(LONG_SUITES).flatMap((s) => s.files);

export default defineConfig({
  test: {
    include: suite ? LONG_SUITES[suite]!.files : ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...(suite ? [] : longFiles), ...(process.env.SURGE_REDIS_CLUSTER === 'true' ? Object.keys(SINGLE_NODE_ONLY) : [])],
    globalSetup: ['test/setup/services.ts'],
    setupFiles: ['test/setup/quiet-output.ts', 'test/setup/env.ts'],
    pool: 'forks',
    // Bounds that only decide when to give up: a machine of this kind can be four times slower than the fastest, and busy besides.
    testTimeout: 180_000,
    hookTimeout: 300_000,
  },
});
