import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { entryFile, functions, queues, type QueueName } from '../../functions/table';

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

  it("has every route's function time out within API Gateway's 30 s integration timeout, so a slow one is its own 500, not the gateway's 503", () => {
    const routes = functions.filter((f) => f.trigger.kind === 'http');

    expect(routes.length).toBeGreaterThan(0);
    for (const spec of routes) expect(spec.timeoutSeconds, spec.id).toBeLessThan(30);
  });

  // The visibility of six times the consumer's timeout is checked in the synthesized template (test/infra/stack/queues.test.ts).
  it('lets every queue try a message at least five times before its dead-letter queue', () => {
    for (const name of Object.keys(queues) as QueueName[]) expect(queues[name].maxReceiveCount, name).toBeGreaterThanOrEqual(5);
  });
});
