import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FunctionRuntime } from '../../infra/local/runners';
import type { Twin } from '../../infra/local/twin';

/** What `npm start` writes to <state dir>/twin.json once it serves. */
export type TwinInfo = Omit<Twin, 'stop' | 'runtime'> & {
  /** The twin's own process. */
  pid: number;
  runtime: FunctionRuntime['kind'];
  lambdaInstances?: number;
};

export interface TwinProcess extends TwinInfo {
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Variables that would point a started twin at services other than its own. */
const SERVICE_VARIABLES = ['REDIS_URL', 'DATABASE_URL', 'AWS_ENDPOINT_URL'];

/**
 * Starts `npm start`'s entry as a process of its own, as a user would, with its own state dir and
 * free ports (and services of its own with `ownServices`), and resolves once it serves.
 */
export async function startTwinProcess(options: {
  stateDir: string;
  database: string;
  args?: string[];
  env?: Record<string, string>;
  ownServices?: boolean;
  timeoutMs?: number;
}): Promise<TwinProcess> {
  const stateFile = join(options.stateDir, 'twin.json');
  rmSync(stateFile, { force: true });
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (options.ownServices) for (const name of SERVICE_VARIABLES) delete env[name];
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts', ...(options.args ?? [])], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...env, PORT: '0', SMTP_PORT: '0', SURGE_STATE_DIR: options.stateDir, SURGE_DATABASE: options.database, ...options.env },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  while (!existsSync(stateFile)) {
    if (child.exitCode !== null) throw new Error(`the twin exited (${child.exitCode}) while starting`);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error('the twin did not start in time');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const info = JSON.parse(readFileSync(stateFile, 'utf8')) as TwinInfo;
  return {
    ...info,
    child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
