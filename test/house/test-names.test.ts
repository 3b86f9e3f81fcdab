import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('the test files', () => {
  it('have names unique across test/, so a failure or a filter names one file', () => {
    // Prepare
    const names = readdirSync('test', { recursive: true, encoding: 'utf8' })
      .filter((path) => path.endsWith('.test.ts'))
      .map((path) => path.split('/').at(-1)!);

    // Act
    const repeated = names.filter((name, i) => names.indexOf(name) !== i);

    // Assess
    expect(names.length).toBeGreaterThan(100);
    expect(repeated).toEqual([]);
  });
});
