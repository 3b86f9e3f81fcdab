import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { readyLine, spawnService, supervise, type Supervised } from '../../infra/twin/services/processes';
import { until } from '../../shared/platform/wait';

const fixture = `${import.meta.dirname}/../fixtures/services/ready-then-wait.mjs`;
const dir = mkdtempSync(join(tmpdir(), 'surge-supervise-'));
const start = async () => {
  const proc = spawnService(process.execPath, [fixture], join(dir, 'service.log'));
  await readyLine(proc, /^ready/m, join(dir, 'service.log'));
  return proc;
};
const alive = (pid: number | undefined) => {
  try {
    process.kill(pid!, 0);
    return true;
  } catch {
    return false;
  }
};

let supervised: Supervised | undefined;
afterEach(async () => {
  await supervised?.stop();
  vi.restoreAllMocks();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the twin's supervisor", () => {
  it('starts a service that was killed again, logs it, and reports the new pid', async () => {
    // Prepare
    const logged: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((line) => logged.push(String(line)) > 0);
    const restartedAs: (number | undefined)[] = [];
    supervised = await supervise('stand-in', start, (pid) => restartedAs.push(pid));
    const first = supervised.pid;

    // Act
    process.kill(first!, 'SIGKILL');
    await until(async () => restartedAs.length === 1, 60_000, 'restarted');

    // Assess
    expect(supervised.pid).toBe(restartedAs[0]);
    expect(supervised.pid).not.toBe(first);
    expect(alive(supervised.pid)).toBe(true);
    expect(logged.map((line) => JSON.parse(line))).toEqual([
      { level: 'WARN', source: 'twin', service: 'stand-in', message: 'exited unexpectedly (SIGKILL); starting it again', pid: first },
      { level: 'WARN', source: 'twin', service: 'stand-in', message: 'started again', pid: supervised.pid },
    ]);
  });

  it('starts nothing again once stopped', async () => {
    // Prepare
    const onRestart = vi.fn();
    const starting = vi.fn(start);
    supervised = await supervise('stand-in', starting, onRestart);
    const pid = supervised.pid;

    // Act
    await supervised.stop();

    // Assess: a restart calls start as soon as the exit is seen, which stop waited for; so one that
    // is coming has begun by now, however long the process it starts would take to be ready.
    expect(alive(pid)).toBe(false);
    expect(starting).toHaveBeenCalledTimes(1);
    expect(onRestart).not.toHaveBeenCalled();
  });
});
