/**
 * `npm run openapi`: writes the OpenAPI document, built from the table and the entries' schemas,
 * and the docs page that renders it, as openapi.json and docs.html into dist/ (or the folder
 * given), then `redocly lint` checks the document. Built, not kept: a committed copy could only
 * fall behind the code it is made from. The twin writes them into dist/ as it starts (source
 * mode reads them there), and bundling into the folder of each function that serves one
 * (infra/bundling.ts, bundleFileCopies).
 */
import { writeApiFiles } from './files';

const dir = process.argv[2] ?? 'dist';
await writeApiFiles(dir);
console.log(`Wrote ${dir}/openapi.json and ${dir}/docs.html`);
