import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../infra/openapi/document';
import { CLIENT_TYPES_FILE, clientTypes } from '../../infra/openapi/client-types';

type Parameter = { in: string; name: string; schema?: { type?: string }; style?: string; explode?: boolean };

describe('the typed client', () => {
  it('is built on the types the document gives now', async () => {
    // Act
    const generated = await clientTypes();

    // Assess
    const committed = readFileSync(CLIENT_TYPES_FILE, 'utf8');
    expect(committed, `${relative(process.cwd(), CLIENT_TYPES_FILE)} is not what the document gives now: run \`npm run client\` and commit it`).toBe(generated);
  });

  it('sends every list in a query as the document describes it, comma-joined (infra/client/client.ts)', async () => {
    // Prepare
    const document = (await openApiDocument()) as { paths?: Record<string, Record<string, { parameters?: Parameter[] }>> };

    // Act
    const lists = Object.values(document.paths ?? {})
      .flatMap((item) => Object.values(item).flatMap((operation) => operation.parameters ?? []))
      .filter((parameter) => parameter.in === 'query' && parameter.schema?.type === 'array');

    // Assess: the client serializes every array of a query as style form, not exploded.
    expect(lists.length).toBeGreaterThan(0);
    for (const list of lists) expect(list, list.name).toMatchObject({ style: 'form', explode: false });
  });
});
