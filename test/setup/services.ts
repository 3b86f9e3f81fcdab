/**
 * Starts the real services the tests talk to, once per run: redis-server, MariaDB and the SQS/S3
 * emulator (or reuses them through REDIS_URL, DATABASE_URL, AWS_ENDPOINT_URL), with a fresh
 * database migrated from the same files the twin and the deploy use.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { createConnection } from 'mysql2/promise';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../shared/platform/db/migrate';
import { CONTRACT_DIR_ENV, contractViolations } from '../../infra/openapi/contract-under-test';
import { writeApiFiles } from '../../infra/openapi/files';
import { provision } from '../../infra/twin/provision';
import { startRedisCluster } from '../../infra/twin/services/redis-cluster';
import { startDatabase, startEmulator, startRedis } from '../../infra/twin/services/services';
import { functionEnvironment } from '../../infra/twin/deployment';

const STATE_DIR = '.local/test';
/** Absolute: twins the tests start in other folders hold their answers to it too. */
const CONTRACT_DIR = resolve(STATE_DIR, 'contract');
export const TEST_DATABASE = 'surge_test';

declare module 'vitest' {
  export interface ProvidedContext {
    env: Record<string, string>;
  }
}

export default async function setup(project: TestProject) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const [redis, database, emulator] = await Promise.all([
    // SURGE_REDIS_CLUSTER=true: the suite against a cluster of three masters, as ElastiCache cluster mode.
    process.env.SURGE_REDIS_CLUSTER === 'true' ? startRedisCluster(STATE_DIR, false) : startRedis(STATE_DIR, false),
    startDatabase(STATE_DIR, TEST_DATABASE),
    startEmulator(STATE_DIR),
  ]);

  const admin = await createConnection({ uri: database.url });
  await admin.query(`DROP DATABASE ${TEST_DATABASE}`);
  await admin.query(`CREATE DATABASE ${TEST_DATABASE} CHARACTER SET utf8mb4`);
  await admin.end();
  await migrate(database.url);

  // Every answer of a route in this run is held to the document of the code under test (infra/openapi/contract-under-test.ts).
  rmSync(CONTRACT_DIR, { recursive: true, force: true });
  await writeApiFiles(CONTRACT_DIR);

  const clientOptions = { region: 'us-east-1', endpoint: emulator.url, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  const provisioned = await provision(new SQSClient(clientOptions), new S3Client({ ...clientOptions, forcePathStyle: true }));

  project.provide('env', {
    ...functionEnvironment({ redis, database, emulator }, provisioned),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: 'CRITICAL',
    // The recorded events' source (203.0.113.7) is, for the suite, a load generator: files sign in
    // and order far more often than one client may. The limits' own tests come from 10.0.0.0/8.
    LOAD_TEST_SOURCES: '127.0.0.0/8,203.0.113.0/24',
    // The shared Redis client refuses what would cross hash slots, on a single node too (shared/platform/redis/slot-guard.ts).
    SURGE_SLOT_GUARD: 'true',
    [CONTRACT_DIR_ENV]: CONTRACT_DIR,
  });

  return async () => {
    await Promise.all([redis.stop(), database.stop(), emulator.stop()]);
    const violations = contractViolations(CONTRACT_DIR);
    if (violations.length) throw new Error(`${violations.length} answers broke the API's contract (openapi.json):\n${[...new Set(violations)].join('\n')}`);
  };
}
