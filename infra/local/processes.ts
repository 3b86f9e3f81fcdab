import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';

const children = new Set<ChildProcess>();

/** Kills what is still running if the parent exits without a clean stop, so nothing is orphaned. */
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface Spawned {
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a service process whose output goes to a log file, and a stop() that waits for it to exit. */
export function spawnService(command: string, args: string[], logFile: string, env: NodeJS.ProcessEnv = process.env): Spawned {
  mkdirSync(dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  children.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => children.delete(child));
  return {
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export async function waitFor(what: string, attempt: () => Promise<unknown>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      await attempt();
      return;
    } catch (error) {
      lastError = error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${what} did not come up within ${timeoutMs} ms: ${(lastError as Error)?.message}`);
}

/** Resolves when the process prints a line matching `ready`; rejects if it exits first. */
export function readyLine(proc: Spawned, ready: RegExp, logFile: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let output = '';
    proc.child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match) resolve(match);
    });
    proc.child.once('exit', (code) => reject(new Error(`process exited with ${code} before it was ready; see ${logFile}`)));
  });
}
