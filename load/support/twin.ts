import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface TwinInfo {
  /** The twin's own process. */
  pid: number;
  url: string;
  redisUrl: string;
  databaseUrl: string;
  emulatorUrl: string;
  smtpUrl: string;
  inboundDomain: string;
  pids: Record<string, number | undefined>;
  queues: Record<string, { url: string; arn: string; deadLetterUrl: string }>;
}

export interface BenchTwin extends TwinInfo {
  /** True when this bench started the twin, and so stops it. */
  owned: boolean;
  stop(): Promise<void>;
}

const RUNNING_STATE = '.local/twin/twin.json';
const BENCH_STATE_DIR = '.local/bench';

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function healthy(info: TwinInfo): Promise<boolean> {
  try {
    return (await fetch(`${info.url}/health`)).ok;
  } catch {
    return false;
  }
}

/** The twin `npm start` left running, or a fresh one in its own state dir that is stopped afterwards. */
async function servesBaselines(info: TwinInfo): Promise<boolean> {
  const res = await fetch(`${info.url}/__baseline/items/probe/orders`, { method: 'POST' });
  return res.status !== 404;
}

export async function acquireTwin(log: (msg: string) => void, needsBaselines: boolean): Promise<BenchTwin> {
  if (existsSync(RUNNING_STATE)) {
    const info = JSON.parse(readFileSync(RUNNING_STATE, 'utf8')) as TwinInfo;
    if (alive(info.pid) && (await healthy(info)) && (!needsBaselines || (await servesBaselines(info)))) {
      log(`using the running twin at ${info.url}`);
      return { ...info, owned: false, stop: async () => undefined };
    }
  }
  log('starting a twin for this run');
  const stateFile = join(BENCH_STATE_DIR, 'twin.json');
  rmSync(stateFile, { force: true });
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, PORT: '0', SMTP_PORT: '0', SURGE_STATE_DIR: BENCH_STATE_DIR, SURGE_DATABASE: 'surge_bench', SURGE_BASELINES: 'true', SURGE_REDIS_DURABLE: 'false', POWERTOOLS_LOG_LEVEL: 'WARN' },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (!existsSync(stateFile)) {
    if (child.exitCode !== null) throw new Error('the twin exited while starting');
    if (Date.now() > deadline) throw new Error('the twin did not start within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  const info = JSON.parse(readFileSync(stateFile, 'utf8')) as TwinInfo;
  return {
    ...info,
    owned: true,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
