import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { entryFile, functions, queues, visibilityTimeoutSeconds, type QueueName } from '../../functions/table';

describe('the function table', () => {
  it('names each function once, in kebab-case, with an entry file', () => {
    const ids = functions.map((f) => f.id);

    expect(new Set(ids).size).toBe(ids.length);
    for (const spec of functions) {
      expect(spec.id).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(existsSync(entryFile(spec)), entryFile(spec)).toBe(true);
    }
  });

  it('describes each route once', () => {
    const routes = functions.flatMap((f) => (f.trigger.kind === 'http' ? [`${f.trigger.method} ${f.trigger.path}`] : []));

    expect(new Set(routes).size).toBe(routes.length);
  });

  it('keeps every queue visible for six times its consumer timeout', () => {
    for (const name of Object.keys(queues) as QueueName[]) {
      const consumers = functions.filter((f) => f.trigger.kind === 'queue' && f.trigger.queue === name);
      for (const consumer of consumers) expect(visibilityTimeoutSeconds(name)).toBeGreaterThanOrEqual(6 * consumer.timeoutSeconds);
      expect(queues[name].maxReceiveCount).toBeGreaterThanOrEqual(5);
    }
  });
});
