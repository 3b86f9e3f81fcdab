import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { once } from './once';

/** The exact points where the fault suite may kill a process; nothing else can name one. */
export type FaultPoint = 'writer-after-commit' | 'move-between-steps';

/**
 * `SURGE_FAULTS=writer-after-commit:0.2` makes that point SIGKILL its process with probability
 * 0.2, after appending the point's name to `SURGE_FAULT_LOG` (so the suite can say how often it
 * fired). `writer-after-commit:0.2:first` also makes it fire for certain while `SURGE_FAULT_LOG`
 * has no line of it, in whichever process reaches it: a run that reaches the point at all sees it
 * fire, however few times it does. Unset, as in every deployment, a point costs one lookup in an
 * empty map. It exists for faults no outside process can time exactly, such as a death between a
 * COMMIT and what follows.
 */
const armed = once(() => {
  const points = new Map<string, { probability: number; first: boolean }>();
  for (const entry of (process.env.SURGE_FAULTS ?? '').split(',').filter(Boolean)) {
    const [name, probability, first] = entry.split(':');
    points.set(name!, { probability: Number(probability ?? 1), first: first === 'first' });
  }
  return points;
});

/** Whether the fault log has a line of this point: it fired before, in this process or another. */
function firedBefore(point: FaultPoint, log: string | undefined): boolean {
  return log !== undefined && existsSync(log) && readFileSync(log, 'utf8').split('\n').includes(point);
}

export function faultPoint(point: FaultPoint): void {
  const armedPoint = armed().get(point);
  if (armedPoint === undefined) return;
  const log = process.env.SURGE_FAULT_LOG;
  const certain = armedPoint.first && log !== undefined && !firedBefore(point, log);
  if (!certain && Math.random() >= armedPoint.probability) return;
  if (log) appendFileSync(log, `${point}\n`);
  process.kill(process.pid, 'SIGKILL');
}
