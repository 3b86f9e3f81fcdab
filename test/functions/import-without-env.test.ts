import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { entryFile, functions } from '../../functions/table';
import { envNeeds } from '../../shared/platform/config';
import type { Imported } from '../support/import-entries';

/** Every variable a need of any function reads: none of them may be needed merely to import an entry file. */
const NEEDED = Object.values(envNeeds).flatMap((schema) => Object.keys(schema.schema.shape));

describe('entry files', () => {
  it('import without their environment and export a handler, so a build step can read them', async () => {
    // Prepare
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !NEEDED.includes(name)));
    const files = functions.map(entryFile);

    // Act: in a process of its own, which must also exit of itself (an import opened nothing).
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/support/import-entries.ts', ...files], { env, timeout: 120_000 });

    // Assess
    const imported = JSON.parse(stdout) as Imported[];
    expect(imported).toEqual(files.map((file) => ({ file, handler: 'function' })));
  });
});
