/**
 * `npm run bundles`: bundles every function of the table as the CDK stack does, and prints one JSON
 * line with each bundle's minified size, its cold-import time (a fresh node process importing the
 * bundle with exactly its row's environment, median of 5), the same with the cold start's secret
 * lookups counted (against a local Secrets Manager stand-in, so the network's own latency is not
 * in it), and the size of each module bundled beside it (a thread, the MySQL driver). Targets: ≤ 1 MB and ≤ 150 ms per
 * function, lookups included.
 */
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { envNeedsOf, functions, inboundMail, orderRouteRateLimit } from '../../functions/table';
import { build } from 'esbuild';
import { buildFunctionBundle, ESBUILD_OPTIONS } from '../bundling';
import { environmentFor, type Deployment } from '../../shared/platform/config';

const run = promisify(execFile);
const OUT = resolve('.local/bundles');
const MAX_BYTES = 1024 * 1024;
const MAX_COLD_START_MS = 150;

/** Answers every GetSecretValue with an RDS-shaped secret, as the endpoint would. */
const secrets = createServer((req, res) => {
  req
    .resume()
    .on('end', () =>
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify({ SecretString: '{"username":"surge","password":"p"}' })),
    );
});
await new Promise<void>((done) => secrets.listen(0, '127.0.0.1', done));
const endpoint = `http://127.0.0.1:${(secrets.address() as AddressInfo).port}`;

// What the stack's deployment would set; the addresses are never reached while importing.
const deployment: Deployment = {
  redis: { url: 'rediss://127.0.0.1:1', authSecretId: 'surge/redis-auth' },
  database: { url: 'mysql://127.0.0.1:1/surge', secretId: 'surge/database', tls: true },
  reservationQueueUrl: 'https://sqs.us-east-1.amazonaws.com/000000000000/surge-reservations',
  reservationDlqUrl: 'https://sqs.us-east-1.amazonaws.com/000000000000/surge-reservations-dlq',
  cookieSecure: true,
  inboundDomain: 'inbound.surge.example',
  rawMail: { bucket: 'surge-raw-mail', prefix: 'inbound/', retentionDays: inboundMail.retentionDays },
  orderRouteRateLimit: orderRouteRateLimit(),
};
const lambdaRuntime = {
  PATH: process.env.PATH,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_ENDPOINT_URL: endpoint,
};

/** The cold start's lookups as the bundled middleware makes them: its module, bundled with the function's options. */
async function lookupBundle(): Promise<string> {
  const dir = join(OUT, '_lookup');
  const outfile = join(dir, 'index.mjs');
  await build({
    ...ESBUILD_OPTIONS,
    stdin: { contents: "export { storeCredentials } from './shared/platform/clients/credentials';", resolveDir: resolve('.'), loader: 'ts' },
    outfile,
  });
  return outfile;
}

/** Runs one after another, never synchronously: the stand-in answers from this process's event loop. */
async function medianMs(script: string, env: Record<string, string | undefined>): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) runs.push(Number((await run(process.execPath, ['--input-type=module', '-e', script], { env })).stdout));
  return Math.round(runs.sort((a, b) => a - b)[2]! * 10) / 10;
}

const lookups = await lookupBundle();
const report: Record<string, { bytes: number; cold_import_ms: number; cold_start_ms: number; beside_bytes?: Record<string, number>; ok: boolean }> = {};
for (const spec of functions) {
  const { outfile, beside } = await buildFunctionBundle(resolve('.'), spec, join(OUT, spec.id));
  const env = { ...lambdaRuntime, ...environmentFor(envNeedsOf(spec), deployment) };
  const besideBytes = Object.fromEntries(Object.entries(beside).map(([name, file]) => [name, statSync(file).size]));
  const bytes = statSync(outfile).size;
  const importMs = await medianMs(
    `const t=performance.now();await import(${JSON.stringify(outfile)});process.stdout.write(String(performance.now()-t));process.exit(0)`,
    env,
  );
  // The lookups' module is already in the function's bundle: its second copy, bundled apart to be
  // called here, is imported off the clock, after the function's own import, which so pays for
  // every module and builtin it loads as it would on Lambda.
  const coldStartMs = await medianMs(
    `const t=performance.now();await import(${JSON.stringify(outfile)});const imported=performance.now()-t;const {storeCredentials}=await import(${JSON.stringify(lookups)});const l=performance.now();await storeCredentials().before();process.stdout.write(String(imported+performance.now()-l));process.exit(0)`,
    env,
  );
  const withBeside = Object.keys(besideBytes).length ? { beside_bytes: besideBytes } : {};
  report[spec.id] = {
    bytes,
    cold_import_ms: importMs,
    cold_start_ms: coldStartMs,
    ...withBeside,
    ok: bytes <= MAX_BYTES && coldStartMs <= MAX_COLD_START_MS && Object.values(besideBytes).every((b) => b <= MAX_BYTES),
  };
  process.stderr.write(`bundles: ${spec.id.padEnd(24)} ${(bytes / 1024).toFixed(0).padStart(5)} KiB  import ${importMs} ms, with lookups ${coldStartMs} ms\n`);
}
secrets.close();
const ok = Object.values(report).every((r) => r.ok);
process.stdout.write(`${JSON.stringify({ targets: { max_bytes: MAX_BYTES, max_cold_start_ms: MAX_COLD_START_MS }, ok, functions: report })}\n`);
process.exitCode = ok ? 0 : 1;
