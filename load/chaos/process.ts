import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChaosOptions, ChaosReport } from './report';

const root = fileURLToPath(new URL('../..', import.meta.url));
const RECENT_LINES = 20;

export interface ChaosProcessOptions {
  /** Killed (SIGTERM) when it runs longer. */
  timeoutMs?: number;
  /** Gets each line of its progress; dropped when absent. */
  log?: (message: string) => void;
}

/**
 * `npm run chaos -- <scenario> …` (the same entry without npm's own start-up) in a process of its
 * own, and so with shared clients of its own: a process makes them once, for one twin. Resolves
 * with its report, the last line of its output, whether its invariants held (exit 0) or not (1);
 * rejects when it gave none, with the last lines of its progress.
 */
export function runChaosProcess(scenario: string, options: Omit<ChaosOptions, 'log'>, { timeoutMs, log }: ChaosProcessOptions = {}): Promise<ChaosReport> {
  const flags = [
    ...(options.scale === 'small' ? ['--small'] : []),
    ...(options.bundles ? ['--bundles'] : []),
    ...(options.kind === 'coupons' ? ['--coupons'] : []),
    ...(options.faultSeconds === undefined ? [] : ['--fault-s', String(options.faultSeconds)]),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'load/chaos.ts', scenario, ...flags], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(timeoutMs ? { timeout: timeoutMs } : {}),
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let progress = '';
    // The last lines it printed, to say why when it gives no report.
    const recent: string[] = [];
    child.stderr.on('data', (chunk: Buffer) => {
      const lines = (progress + chunk.toString()).split('\n');
      progress = lines.pop()!;
      recent.push(...lines);
      recent.splice(0, recent.length - RECENT_LINES);
      for (const line of lines) log?.(line.replace(/^chaos: /, ''));
    });
    child.once('error', reject);
    // At 'exit' the last of its output (the report) may still be in the pipe: settled once that is read too.
    // Not on 'close', which waits for its stderr, shared with a twin it may have left running.
    const outputRead = new Promise((resolve) => child.stdout.once('close', resolve));
    child.once('exit', async (code, signal) => {
      await outputRead;
      const last = output.trim().split('\n').at(-1);
      if ((code === 0 || code === 1) && last) resolve(JSON.parse(last) as ChaosReport);
      else
        reject(
          new Error(
            `npm run chaos -- ${scenario} ${flags.join(' ')}: exited with ${signal ?? code} and no report; its last lines:\n${[...recent, progress].join('\n')}`,
          ),
        );
    });
  });
}
