import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { OwnerReconciliation } from '../../shared/reservations/reconcile';
import type { SaleKind } from './kinds';

/** One owner's line of `npm run reconcile`'s output. */
export type ReconcileLine = OwnerReconciliation;

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs the reconciliation CLI (`npm run reconcile -- <owner> …`, the same entry without npm's own
 * start-up) against the twin whose stores `env` names, as an operator would, rather than calling
 * its modules: what it repairs is its business. Undefined when it printed no line for the owner
 * of that kind (it could not reach a store).
 */
export function reconcile(env: Record<string, string>, kind: SaleKind['name'], owner: string, args: string[]): Promise<ReconcileLine | undefined> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'infra/ops/reconcile.ts', owner, ...args], {
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
      resolve(lines.find((line) => line.owner === owner && line.kind === kind));
    });
  });
}
