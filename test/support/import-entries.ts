/**
 * Imports each entry file named on the command line in this process, one after another, and
 * prints what each import gave as JSON: `node --import tsx test/support/import-entries.ts
 * functions/health.ts …`. Run with an environment of the caller's choosing, so a test can see
 * which files need one merely to be imported.
 */
import { pathToFileURL } from 'node:url';

export interface Imported {
  file: string;
  /** The type of its `handler` export ('undefined' without one). */
  handler?: string;
  /** What its import threw, if it did. */
  error?: string;
}

const imported: Imported[] = [];
for (const file of process.argv.slice(2)) {
  try {
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    imported.push({ file, handler: typeof module.handler });
  } catch (error) {
    imported.push({ file, error: String(error) });
  }
}
process.stdout.write(`${JSON.stringify(imported)}\n`);
