/**
 * `npm start`: the whole of Surge on this machine. Starts (or reuses, through REDIS_URL,
 * DATABASE_URL and AWS_ENDPOINT_URL) Redis, MariaDB and the SQS/S3 emulator, migrates and seeds,
 * then serves the function table until Ctrl-C.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { inboundMail } from '../../functions/table';
import { demoAccounts } from './seed';
import { parseVerdicts } from './ses-event';
import { startTwin } from './twin';

const env = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    SURGE_STATE_DIR: z.string().default('.local/twin'),
    SURGE_DATABASE: z.string().regex(/^[A-Za-z0-9_]+$/).default('surge'),
    SURGE_BASELINES: z.enum(['true', 'false']).default('false'),
    SMTP_PORT: z.coerce.number().int().min(0).max(65535).default(inboundMail.smtpPort),
    SURGE_SES_VERDICTS: z.string().optional(),
    SURGE_REDIS_DURABLE: z.enum(['true', 'false']).default('true'),
  })
  .parse(process.env);

mkdirSync(env.SURGE_STATE_DIR, { recursive: true });
const twin = await startTwin({
  port: env.PORT,
  stateDir: env.SURGE_STATE_DIR,
  database: env.SURGE_DATABASE,
  baselines: env.SURGE_BASELINES === 'true',
  smtpPort: env.SMTP_PORT,
  durableRedis: env.SURGE_REDIS_DURABLE === 'true',
  verdicts: parseVerdicts(env.SURGE_SES_VERDICTS),
});

// Read by `npm run bench` and `npm run reconcile` to find a running twin.
const stateFile = join(env.SURGE_STATE_DIR, 'twin.json');
writeFileSync(stateFile, JSON.stringify({ pid: process.pid, url: twin.url, redisUrl: twin.redisUrl, databaseUrl: twin.databaseUrl, emulatorUrl: twin.emulatorUrl, smtpUrl: twin.smtpUrl, inboundDomain: twin.inboundDomain, pids: twin.pids, queues: twin.queues }, null, 2));

const lines = [
  ['gateway', `${twin.url}  (try: curl -i ${twin.url}/health)`],
  ['redis', twin.redisUrl],
  ['mariadb', twin.databaseUrl],
  ['sqs+s3', twin.emulatorUrl],
  ['queue', `${twin.queues.orders.url}  (dlq ${twin.queues.orders.deadLetterUrl})`],
  ['smtp', `${twin.smtpUrl}  (mail for <token>@${twin.inboundDomain}; GET /me/inbox-address tells a reader's)`],
  ...demoAccounts.map((a) => [`login ${a.role}`, `${a.email} / ${a.password}`]),
];
for (const [name, value] of lines) process.stdout.write(`surge ${name!.padEnd(12)} ${value}\n`);
process.stdout.write('surge ready; Ctrl-C stops everything\n');

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`surge stopping (${signal})\n`);
    rmSync(stateFile, { force: true });
    void twin.stop().finally(() => process.exit(0));
  });
}
