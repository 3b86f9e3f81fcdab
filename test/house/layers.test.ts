import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every TypeScript file under dir, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.(ts|mjs)$/.test(entry.name) ? [path] : [];
  });
}

describe('layers', () => {
  it('the twin imports nothing of load/: the benches hand it their baselines', () => {
    // Prepare
    const files = sources('infra');

    // Act
    const upward = files.filter((file) => /(from|import\()\s*['"](\.\.\/)+load\//.test(readFileSync(file, 'utf8')));

    // Assess
    expect(upward).toEqual([]);
  });
});
