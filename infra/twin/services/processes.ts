import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { until } from '../../../shared/platform/wait';

/** Every service process started here that has not exited yet, with the promise of its exit. */
const children = new Map<ChildProcess, Promise<void>>();
/** Set by stopAllChildren: a service started after it would outlive the stop. */
let stopRequested = false;

/**
 * How long a service has after SIGTERM before SIGKILL: mariadbd's clean shutdown takes a few
 * seconds; a twin stopped by a signal must be gone within 10.
 */
const STOP_GRACE_MS = 5_000;

/** SIGKILL to every service process still running: for when a clean stop cannot be waited for. */
export function killAllChildren(): void {
  for (const child of children.keys()) child.kill('SIGKILL');
}

/** Kills what is still running if the parent exits without a clean stop, so nothing is orphaned. */
process.on('exit', killAllChildren);

/** How often SIGTERM is sent again while a child has not exited. */
const SIGTERM_REPEAT_MS = 250;

/**
 * SIGTERM until the child exits, SIGKILL after graceMs; resolves once it has exited (and been
 * reaped). Repeated because a process still starting can lose the first: mariadbd ignores a
 * SIGTERM in its first tens of milliseconds, and a repeat is ignored once its shutdown is under way.
 */
async function stopChild(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const repeat = setInterval(() => child.kill('SIGTERM'), SIGTERM_REPEAT_MS);
  const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearInterval(repeat);
  clearTimeout(kill);
}

/**
 * Stops every service process started here at once, and refuses to start more: what a signal does
 * to a twin that is still starting, and to whatever an orderly stop left running.
 */
export async function stopAllChildren(): Promise<void> {
  stopRequested = true;
  await Promise.all([...children].map(([child, exited]) => stopChild(child, exited, STOP_GRACE_MS)));
}

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
  if (stopRequested) throw new Error(`${command} not started: stopping`);
  mkdirSync(dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  children.set(child, exited);
  void exited.then(() => children.delete(child));
  return { child, stop: () => stopChild(child, exited, STOP_GRACE_MS) };
}

/** Waits, at most timeoutMs, until `attempt` resolves instead of throwing; the error names its last failure. */
export async function waitFor(what: string, attempt: () => Promise<unknown>, timeoutMs = 30_000): Promise<void> {
  let lastError: unknown;
  const cameUp = await until(
    async () => {
      try {
        await attempt();
        return true;
      } catch (error) {
        lastError = error;
        return false;
      }
    },
    timeoutMs,
    what,
    100,
    { atDeadline: 'give up' },
  );
  if (!cameUp) throw new Error(`${what} did not come up within ${timeoutMs} ms: ${(lastError as Error)?.message}`);
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

/** A service process that is started again whenever it dies on its own. */
export interface Supervised {
  /** The running process's, a new one after each restart. */
  readonly pid: number | undefined;
  /** Stops it for good: no restart follows. */
  stop(): Promise<void>;
}

/** The longest wait between attempts to start a service that keeps failing to start. */
const RESTART_BACKOFF_MAX_MS = 5_000;

/**
 * Runs a service process as AWS runs what stands behind it: one that dies unexpectedly (a crash,
 * a kill -9) is started again, as Lambda starts a new instance after one dies mid-batch and RDS
 * restarts a crashed database. `start` spawns it and resolves once it is ready; a start that
 * fails is tried again, backing off to 5 s. Each death and restart is logged to stderr, and
 * `onRestart` learns the new pid.
 */
export async function supervise(
  name: string,
  start: () => Promise<Spawned>,
  onRestart: (pid: number | undefined) => void = () => undefined,
): Promise<Supervised> {
  let stopping = false;
  let current = await start();
  let restarting: Promise<void> | undefined;
  const report = (level: 'WARN' | 'ERROR', message: string, extra: Record<string, unknown> = {}) =>
    process.stderr.write(`${JSON.stringify({ level, source: 'twin', service: name, message, ...extra })}\n`);

  const restart = async () => {
    for (let attempt = 0; !stopping && !stopRequested; attempt += 1) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** attempt, RESTART_BACKOFF_MAX_MS)));
      try {
        const started = await start();
        // Stopped while it was starting: it goes too.
        if (stopping) return void (await started.stop());
        current = started;
        watch(started);
        report('WARN', 'started again', { pid: started.child.pid });
        onRestart(started.child.pid);
        return;
      } catch (error) {
        report('ERROR', 'could not be started again', { attempt: attempt + 1, error: (error as Error).message });
      }
    }
  };
  const watch = (proc: Spawned) =>
    proc.child.once('exit', (code, signal) => {
      if (stopping || stopRequested) return;
      report('WARN', `exited unexpectedly (${signal ?? `code ${code}`}); starting it again`, { pid: proc.child.pid });
      restarting = restart();
    });
  watch(current);

  return {
    get pid() {
      return current.child.pid;
    },
    async stop() {
      stopping = true;
      await Promise.all([current.stop(), restarting]);
    },
  };
}
