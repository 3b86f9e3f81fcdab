/**
 * `npm run openapi`: writes the OpenAPI document, built from the table and the entries' schemas,
 * to dist/openapi.json (or the path given), then `redocly lint` checks it. Built, not kept: a
 * committed copy could only fall behind the code it is made from.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { openApiDocument } from './document';

const out = process.argv[2] ?? 'dist/openapi.json';
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(await openApiDocument(), null, 2)}\n`);
console.log(`Wrote ${out}`);
