import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The engines every kind of reservation stands on: they take what differs between kinds from the kind. */
const ENGINES = ['shared/reservations', 'shared/limits'];
/** A kind named in code (a string literal), not in prose. */
const KIND_LITERAL = /(['"`])(orders|coupons|items|deals)\1/g;

/** Every string of a kind's name in the engines' code, comments left out, as `path: literal`. */
function kindsNamedIn(dirs: string[]): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((path) => path.endsWith('.ts'))
      .flatMap((path) => {
        const code = readFileSync(join(dir, path), 'utf8')
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/(^|[^:])\/\/.*$/gm, '$1');
        return [...code.matchAll(KIND_LITERAL)].map((m) => `${dir}/${path}: ${m[0]}`);
      }),
  );
}

describe('the reservation engine', () => {
  it('names no kind of reservation: each kind brings its name, retry text, rates and decision table', () => {
    // Act
    const named = kindsNamedIn(ENGINES);

    // Assess
    expect(named).toEqual([]);
  });
});
