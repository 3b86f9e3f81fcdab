import { readdirSync, readFileSync } from 'node:fs';
import { until } from '../../shared/platform/wait';

/** A process as /proc knows it; the start time tells it apart from a later one given the same pid. */
export interface SeenProcess {
  pid: number;
  startTime: string;
  command: string;
}

function stat(pid: number): { state: string; startTime: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command, which is in parentheses and may hold spaces: state is the 3rd field, starttime the 22nd.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, startTime: fields[19]! };
  } catch {
    return undefined;
  }
}

function seen(pid: number): SeenProcess | undefined {
  const current = stat(pid);
  if (!current) return undefined;
  let command = '';
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    // Gone between the two reads; its start time is enough to tell.
  }
  return { pid, startTime: current.startTime, command };
}

/** Children of every thread of pid, then theirs. */
function descendantsOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children = tasks.flatMap((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
  return children.flatMap((child) => [child, ...descendantsOf(child)]);
}

/**
 * Running, and the same process: a zombie has exited and only waits for its parent to collect
 * its status (or init, which in some containers never does), so it is not counted.
 */
export function isRunning(seenProcess: SeenProcess): boolean {
  const current = stat(seenProcess.pid);
  return current !== undefined && current.startTime === seenProcess.startTime && current.state !== 'Z';
}

/**
 * Records a process and every process under it, sampled every 50 ms from now until stop(): one
 * that lives for a moment between samples may be missed, none that lives longer.
 */
export function watchProcessTree(rootPid: number) {
  const all = new Map<string, SeenProcess>();
  const add = (pids: number[]) => {
    for (const pid of pids) {
      const found = seen(pid);
      const key = found && `${found.pid}:${found.startTime}`;
      // A process caught between fork and exec, or exiting, shows no command yet, or no more.
      if (key && (found.command || !all.has(key))) all.set(key, found);
    }
  };
  const sample = () => add([rootPid, ...descendantsOf(rootPid)]);
  sample();
  const timer = setInterval(sample, 50);
  return {
    /** Also records these, e.g. the pids a twin reports, should one no longer be under the root. */
    add,
    sample,
    seen: () => [...all.values()],
    running: () => [...all.values()].filter(isRunning),
    stop: () => clearInterval(timer),
  };
}

/** The processes still running once all have stopped or timeoutMs has passed, whichever comes first. */
export async function runningAfter(tree: ReturnType<typeof watchProcessTree>, timeoutMs: number): Promise<SeenProcess[]> {
  // Past timeoutMs, what still runs is the answer, not an error.
  await until(async () => tree.running().length === 0, timeoutMs, 'every process stopped').catch(() => undefined);
  return tree.running();
}
