/** The built files the API serves (shared/api/published.ts reads them), written where they are read. */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PUBLISHED_FILES } from '../../shared/api/published';
import { docsPage } from './docs-page';
import { openApiDocument } from './document';

/** Written whole under a temporary name, then renamed: twins starting side by side (the tests) never read half a file. */
function writeWhole(file: string, text: string): void {
  const part = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.part`;
  writeFileSync(part, text);
  renameSync(part, file);
}

/** Writes openapi.json and docs.html into dir, from the table and the entries as they are now. */
export async function writeApiFiles(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const document = await openApiDocument();
  writeWhole(join(dir, PUBLISHED_FILES.document), `${JSON.stringify(document, null, 2)}\n`);
  writeWhole(join(dir, PUBLISHED_FILES.docs), docsPage(`${document.info.title} API`));
}
