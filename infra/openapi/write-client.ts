/** `npm run client`: writes the typed client's types (client-types.ts) from the document as it is built now. */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { CLIENT_TYPES_FILE, clientTypes } from './client-types';

writeFileSync(CLIENT_TYPES_FILE, await clientTypes());
console.log(`Wrote ${relative(process.cwd(), CLIENT_TYPES_FILE)}`);
