import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * shared/platform/metrics.ts holds counts up to METRICS_FLUSH_MS unless the caller marks one
 * `urgent`; an alarm on a count held that long would page late. Read from the sources (no synth):
 * the Surge metrics infra/observability.ts's alarms read, and the names the code counts urgent.
 */
const read = (path: string) => readFileSync(path, 'utf8');
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : [];
  });

/** Every `surgeMetric('…')` in the alarms' method: the metrics that page someone. */
function alarmedSurgeMetrics(): string[] {
  const source = read('infra/observability.ts');
  const start = source.indexOf('private alarmsFor(');
  const end = source.indexOf('\n  private ', start + 1);
  expect(start).toBeGreaterThan(0);
  const body = source.slice(start, end < 0 ? undefined : end);
  return [...body.matchAll(/surgeMetric\('([^']+)'/g)].map((m) => m[1]!);
}

/** Each `count('…'` or ``count(`…${…}…` `` whose call says `urgent`, as a pattern (a template's holes match a word). */
function urgentCounts(): { pattern: RegExp; where: string }[] {
  return ['shared', 'functions'].flatMap(sources).flatMap((path) =>
    [...read(path).matchAll(/\bcount\(\s*(['`])([^'`]+)\1([^;\n]*)/g)]
      .filter((m) => /\burgent:/.test(m[3]!))
      .map((m) => {
        const parts = m[2]!.split(/\$\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
        return { pattern: new RegExp(`^${parts.join('[A-Za-z0-9]+')}$`), where: `${path}: ${m[0]}` };
      }),
  );
}

describe('the metrics that page someone', () => {
  it('are each counted urgent somewhere, so they print with the invocation that counted them', () => {
    const alarmed = alarmedSurgeMetrics();
    const urgent = urgentCounts();

    const notUrgent = alarmed.filter((name) => !urgent.some(({ pattern }) => pattern.test(name)));

    expect(alarmed).toEqual(expect.arrayContaining(['redis.writeRefused', 'orders.guardRejected', 'coupons.storedWithoutOutbox']));
    expect(notUrgent).toEqual([]);
  });
});
