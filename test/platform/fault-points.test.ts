import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'surge-fault-points-'));

/** A process of its own reaches the writer's fault point once, armed as given: its signal, and what it printed. */
function reachInChild(armed: string, log: string): { signal: NodeJS.Signals | null; stdout: string } {
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      "const { faultPoint } = await import('./shared/platform/faults.ts'); faultPoint('writer-after-commit'); process.stdout.write('survived');",
    ],
    { env: { ...process.env, SURGE_FAULTS: armed, SURGE_FAULT_LOG: log }, encoding: 'utf8' },
  );
  return { signal: child.signal, stdout: child.stdout };
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a fault point armed to fire first', () => {
  it('kills the first process that reaches it, whatever its probability, and leaves the next to its probability', () => {
    // Prepare: a probability of 0, so only `first` can make it fire.
    const log = join(dir, 'first.log');

    // Act
    const first = reachInChild('writer-after-commit:0:first', log);
    const second = reachInChild('writer-after-commit:0:first', log);

    // Assess
    expect(first).toEqual({ signal: 'SIGKILL', stdout: '' });
    expect(second).toEqual({ signal: null, stdout: 'survived' });
    expect(readFileSync(log, 'utf8')).toBe('writer-after-commit\n');
  });

  it('without `first`, fires by its probability alone', () => {
    // Prepare
    const log = join(dir, 'plain.log');

    // Act
    const reached = reachInChild('writer-after-commit:0', log);

    // Assess
    expect(reached).toEqual({ signal: null, stdout: 'survived' });
  });
});
