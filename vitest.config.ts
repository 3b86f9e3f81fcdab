import { defineConfig } from 'vitest/config';

/**
 * Files left out of the run against a Redis Cluster (SURGE_REDIS_CLUSTER=true), each for a reason
 * of its own; the single-node run covers them. The rest of the suite runs on both.
 */
const SINGLE_NODE_ONLY = {
  // Each scenario runs a redis-server of its own that it kills, stops or fails over (load/chaos/redis.ts).
  'test/chaos/**': 'kills or fails over its own single redis-server',
  'test/integration/redis-away.test.ts': 'its own redis-server, stopped and started again',
  'test/integration/redis-failover.test.ts': 'its own primary/replica pair behind one endpoint (redis-pair.ts)',
  'test/integration/redis-pair.test.ts': 'the single-node primary/replica pair helper itself',
  'test/integration/redis-partition.test.ts': 'a TCP proxy in front of one node: a cluster would redirect past it',
  'test/integration/release-unknown.test.ts': 'a TCP proxy in front of one node: a cluster would redirect past it',
  'test/integration/redis-out-of-memory.test.ts': 'its own redis-server with a tiny maxmemory',
  'test/integration/sign-up-sessions-away.test.ts': 'a REDIS_URL at a port nothing listens on, as a single node',
  'test/integration/secure-stores.test.ts': 'its own TLS-only redis-server with AUTH',
  'test/integration/bundle-mode.test.ts': '--aws-stores, which the twin does not combine with --redis-cluster yet',
  'test/integration/npm-start.test.ts': 'twins with stores of their own, --aws-stores among them (single node)',
};

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...(process.env.SURGE_REDIS_CLUSTER === 'true' ? Object.keys(SINGLE_NODE_ONLY) : [])],
    globalSetup: ['test/setup/services.ts'],
    setupFiles: ['test/setup/env.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
