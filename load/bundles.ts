/**
 * `npm run bundles`: bundles every function of the table as the CDK stack does, and prints one JSON
 * line with each bundle's minified size and its cold-import time (a fresh node process importing
 * the bundle, median of 5), and the size of any worker thread bundled beside it. Targets: ≤ 1 MB
 * and ≤ 150 ms per function.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { entryFile, functions } from '../functions/table';
import { ESBUILD_OPTIONS, WORKERS } from '../infra/bundling';

const OUT = resolve('.local/bundles');
const MAX_BYTES = 1024 * 1024;
const MAX_IMPORT_MS = 150;
// Configuration a cold start validates; the addresses are never reached while importing.
const ENV = {
  ...process.env,
  REDIS_URL: 'redis://127.0.0.1:1',
  DATABASE_URL: 'mysql://surge@127.0.0.1:1/surge',
  ORDER_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/surge-orders',
  AWS_REGION: 'us-east-1',
  INBOUND_DOMAIN: 'inbound.surge.example',
  RAW_MAIL_BUCKET: 'surge-raw-mail',
};

const bundle = (entry: string, outfile: string) => build({ ...ESBUILD_OPTIONS, entryPoints: [entry], outfile });

function coldImportMs(file: string): number {
  const script = `const t=performance.now();await import(${JSON.stringify(file)});process.stdout.write(String(performance.now()-t));process.exit(0)`;
  const runs = Array.from({ length: 5 }, () => Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: ENV }).toString()));
  return Math.round(runs.sort((a, b) => a - b)[2]! * 10) / 10;
}

const report: Record<string, { bytes: number; cold_import_ms: number; worker_bytes?: Record<string, number>; ok: boolean }> = {};
for (const spec of functions) {
  const dir = join(OUT, spec.id);
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, 'index.mjs');
  await bundle(entryFile(spec), outfile);
  const workers: Record<string, number> = {};
  for (const worker of WORKERS[spec.id] ?? []) {
    await bundle(worker.entry, join(dir, worker.outfile));
    workers[worker.outfile] = statSync(join(dir, worker.outfile)).size;
  }
  execFileSync('sh', ['-c', `mkdir -p "${dir}/lua" && cp shared/*/lua/*.lua "${dir}/lua/" && mkdir -p "${dir}/migrations" && cp shared/db/migrations/*.sql "${dir}/migrations/"`]);
  const bytes = statSync(outfile).size;
  const ms = coldImportMs(outfile);
  const withWorkers = Object.keys(workers).length ? { worker_bytes: workers } : {};
  report[spec.id] = { bytes, cold_import_ms: ms, ...withWorkers, ok: bytes <= MAX_BYTES && ms <= MAX_IMPORT_MS && Object.values(workers).every((b) => b <= MAX_BYTES) };
  process.stderr.write(`bundles: ${spec.id.padEnd(24)} ${(bytes / 1024).toFixed(0).padStart(5)} KiB  ${ms} ms\n`);
}
const ok = Object.values(report).every((r) => r.ok);
process.stdout.write(`${JSON.stringify({ targets: { max_bytes: MAX_BYTES, max_cold_import_ms: MAX_IMPORT_MS }, ok, functions: report })}\n`);
process.exitCode = ok ? 0 : 1;
