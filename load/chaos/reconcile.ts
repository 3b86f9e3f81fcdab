import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** One item's line of `npm run reconcile`'s output. */
export interface ReconcileLine {
  itemId: string;
  initial: number;
  /** Redis's stock counter as measured (before any reset). */
  remaining: number;
  confirmed: number;
  rejected: number;
  /** Outbox entries not yet in MySQL. */
  pending: number;
  drift: number;
  relayed: number;
  settled: number;
  counterReset: boolean;
  buyersRaised: number;
}

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs the reconciliation CLI (`npm run reconcile -- <item> …`, the same entry without npm's own
 * start-up) against the twin whose stores `env` names, as an operator would, rather than calling
 * its modules: what it repairs is its business. Undefined when it printed no line for the item
 * (it could not reach a store).
 */
export function reconcile(env: Record<string, string>, itemId: string, args: string[]): Promise<ReconcileLine | undefined> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'load/reconcile.ts', itemId, ...args], {
      cwd: root,
      env: { ...process.env, ...env, POWERTOOLS_LOG_LEVEL: 'ERROR' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', () => {
      const lines = output.split('\n').flatMap((line) => {
        try {
          return [JSON.parse(line) as ReconcileLine];
        } catch {
          return [];
        }
      });
      resolve(lines.find((line) => line.itemId === itemId && 'pending' in line));
    });
  });
}
