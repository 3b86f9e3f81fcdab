import { appendFileSync } from 'node:fs';
import { once } from './once';

/** The exact points where the fault suite may kill a process; nothing else can name one. */
export type FaultPoint = 'writer-after-commit' | 'move-between-steps';

/**
 * `SURGE_FAULTS=writer-after-commit:0.2` makes that point SIGKILL its process with probability
 * 0.2, after appending the point's name to `SURGE_FAULT_LOG` (so the suite can say how often it
 * fired). Unset, as in every deployment, a point costs one lookup in an empty map. It exists for
 * faults no outside process can time exactly, such as a death between a COMMIT and what follows.
 */
const armed = once(() => {
  const points = new Map<string, number>();
  for (const entry of (process.env.SURGE_FAULTS ?? '').split(',').filter(Boolean)) {
    const [name, probability] = entry.split(':');
    points.set(name!, Number(probability ?? 1));
  }
  return points;
});

export function faultPoint(point: FaultPoint): void {
  const probability = armed().get(point);
  if (probability === undefined || Math.random() >= probability) return;
  if (process.env.SURGE_FAULT_LOG) appendFileSync(process.env.SURGE_FAULT_LOG, `${point}\n`);
  process.kill(process.pid, 'SIGKILL');
}
