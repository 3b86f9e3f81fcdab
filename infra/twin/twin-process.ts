import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { FunctionRuntime } from './lambda/runners';
import type { Twin } from './twin';

/** What `npm start` writes to <state dir>/twin.json once it serves. */
export type TwinInfo = Omit<Twin, 'stop' | 'runtime'> & {
  /** The twin's own process. */
  pid: number;
  runtime: FunctionRuntime['kind'];
  lambdaInstances?: number;
  /** Each reservation handed off alone (SURGE_HAND_OFF_ALONE), as instances of Lambda's default compute send them. */
  handOffAlone?: boolean;
};

export interface TwinProcess extends TwinInfo {
  child: ChildProcess;
  stop(): Promise<void>;
}

export interface TwinProcessOptions {
  stateDir: string;
  database: string;
  args?: string[];
  env?: Record<string, string>;
  /** Redis, MariaDB and the emulator of its own, not the ones this process's environment names. */
  ownServices?: boolean;
  /** Through `npm start`, as a user or a process manager runs it, rather than node on main.ts. */
  npm?: boolean;
  /** Its stderr (warnings and errors) shown on this process's stderr, for a person watching a run; tests keep it quiet. */
  showLogs?: boolean;
  /** Another checkout's twin (e.g. a git worktree of an earlier commit, to compare with): its directory and its entry there. */
  checkout?: { dir: string; entry: string };
}

/** A twin process from the moment it is spawned. */
export interface StartingTwinProcess {
  /** npm when started through it, otherwise the twin's own process. */
  child: ChildProcess;
  /** The gateway's address, printed as soon as it listens (it answers 503 until the twin is ready). */
  listening: Promise<string>;
  /** What twin.json says, once the twin has printed "surge ready". */
  ready: Promise<TwinInfo>;
  /** How child ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM to child; resolves once it has exited. */
  stop(): Promise<void>;
  /** The last lines the twin wrote to stderr (its warnings and errors), for a failure's message. */
  stderrTail(): string;
}

const TAIL_LINES = 40;

/** Keeps the last TAIL_LINES lines a stream carries, so a failure can show them without the stream being printed. */
function keepTail(stream: NodeJS.ReadableStream): { tail(): string } {
  const lines: string[] = [];
  createInterface({ input: stream }).on('line', (line) => {
    lines.push(line);
    if (lines.length > TAIL_LINES) lines.shift();
  });
  return { tail: () => lines.join('\n') };
}

/** Twin processes started here that have not exited yet. */
const running = new Set<StartingTwinProcess>();

// However this process ends, the twins it started stop with it: each stops all it started on SIGTERM.
process.on('exit', () => {
  for (const twin of running) twin.child.kill('SIGTERM');
});

/** Stops every twin process started here that is still running, and resolves once all have exited. */
export async function stopTwinProcesses(): Promise<void> {
  await Promise.all([...running].map((twin) => twin.stop()));
}

/** Variables that would point a started twin at services other than its own. */
const SERVICE_VARIABLES = ['REDIS_URL', 'DATABASE_URL', 'AWS_ENDPOINT_URL'];

/** Starts `npm start`'s entry as a process of its own, with its own state dir and free ports. */
export function spawnTwinProcess(options: TwinProcessOptions): StartingTwinProcess {
  const stateFile = join(options.stateDir, 'twin.json');
  rmSync(stateFile, { force: true });
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (options.ownServices) for (const name of SERVICE_VARIABLES) delete env[name];
  const args = options.args ?? [];
  const entry = options.checkout?.entry ?? 'infra/twin/main.ts';
  const [command, commandArgs] = options.npm ? ['npm', ['start', '--', ...args]] : [process.execPath, ['--import', 'tsx', entry, ...args]];
  const child = spawn(command, commandArgs, {
    ...(options.checkout ? { cwd: options.checkout.dir } : {}),
    // Its logs are kept, not printed: a test's output is for its verdict (see stderrTail).
    stdio: ['ignore', 'pipe', 'pipe'],
    // npm's update check would reach for the registry.
    env: {
      ...env,
      npm_config_update_notifier: 'false',
      PORT: '0',
      SMTP_PORT: '0',
      SURGE_STATE_DIR: options.stateDir,
      SURGE_DATABASE: options.database,
      ...options.env,
    },
  });
  const stderr = keepTail(child.stderr!);
  if (options.showLogs) child.stderr!.pipe(process.stderr);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const lines = createInterface({ input: child.stdout! });
  /** The first line of the twin's output that pick makes something of; rejected if the twin exits first. */
  const awaitLine = <T>(what: string, pick: (line: string) => T | undefined) =>
    new Promise<T>((resolve, reject) => {
      lines.on('line', (line) => {
        const picked = pick(line);
        if (picked !== undefined) resolve(picked);
      });
      child.once('exit', (code, signal) => reject(new Error(`the twin exited (${code ?? signal}) before ${what}; its last lines:\n${stderr.tail()}`)));
    });
  const listening = awaitLine('its gateway listened', (line) => /^surge starting\s+(\S+)/.exec(line)?.[1]);
  const ready = awaitLine('it was ready', (line) => (line.startsWith('surge ready') ? (JSON.parse(readFileSync(stateFile, 'utf8')) as TwinInfo) : undefined));
  // A caller awaits what it needs; a twin stopped while starting never gets to the rest.
  listening.catch(() => undefined);
  ready.catch(() => undefined);
  const twin: StartingTwinProcess = {
    child,
    listening,
    ready,
    exited,
    stderrTail: stderr.tail,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  running.add(twin);
  void exited.then(() => running.delete(twin));
  return twin;
}

/**
 * Starts the twin as spawnTwinProcess does, and resolves once it serves. The default bound only
 * decides when to give up: a bundle twin builds every function first, and took 106 s on a busy
 * machine of this kind, past the 90 s this was; the suite's hooks give up at 300 s.
 */
export async function startTwinProcess(options: TwinProcessOptions & { timeoutMs?: number }): Promise<TwinProcess> {
  const twin = spawnTwinProcess(options);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the twin did not start in time; its last lines:\n${twin.stderrTail()}`)), options.timeoutMs ?? 240_000);
  });
  try {
    return { ...(await Promise.race([twin.ready, timeout])), child: twin.child, stop: twin.stop };
  } catch (error) {
    await twin.stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
