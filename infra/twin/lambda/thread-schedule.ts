import { readFileSync } from 'node:fs';

/** A thread of this process as the scheduler sees it (/proc/<pid>/task/<thread>). */
export interface Schedule {
  /** Time it has run on a core. */
  cpuMs: number;
  /** Time it has waited, runnable, for a core; a wait still going on is added only once it ends. */
  waitedMs: number;
  /** Running, or waiting for a core. */
  runnable: boolean;
}

export function scheduleOf(thread: number): Schedule | undefined {
  try {
    const task = `/proc/${process.pid}/task/${thread}`;
    const [cpuNs, waitedNs] = readFileSync(`${task}/schedstat`, 'utf8').split(' ').map(Number);
    const stat = readFileSync(`${task}/stat`, 'utf8');
    return { cpuMs: cpuNs! / 1e6, waitedMs: waitedNs! / 1e6, runnable: stat[stat.lastIndexOf(')') + 2] === 'R' };
  } catch {
    return undefined;
  }
}
