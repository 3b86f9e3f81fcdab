/**
 * The files the API publishes, built from the code (infra/openapi): the OpenAPI document and the
 * docs page rendering it. A function finds them as script.ts finds its Lua files: beside its
 * bundle, where bundling writes them (infra/bundling.ts, bundleFileCopies), else in dist/ of the
 * source tree, where the twin writes them as it starts and `npm run openapi` does.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { once } from '../platform/once';
import type { JsonText } from '../platform/http/response';
import * as z from '../platform/zod';

export const PUBLISHED_FILES = { document: 'openapi.json', docs: 'docs.html' } as const;

function publishedFile(name: string): string {
  const beside = new URL(`./${name}`, import.meta.url);
  if (existsSync(beside)) return fileURLToPath(beside);
  const built = new URL(`../../dist/${name}`, import.meta.url);
  if (existsSync(built)) return fileURLToPath(built);
  throw new Error(`${name} is not built: \`npm run openapi\` writes it to dist/, bundling beside the bundle`);
}

/** What a client may count on of the document: an OpenAPI 3.1 document's top (its parts are OpenAPI's own schema's). */
export const OpenApiDocument = z.looseObject({
  openapi: z.string().check(z.regex(/^3\.1\./)),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.looseObject({})),
});

/** The OpenAPI document's JSON text, read once per instance. */
export const apiDocument = once(() => readFileSync(publishedFile(PUBLISHED_FILES.document), 'utf8') as JsonText<z.output<typeof OpenApiDocument>>);

/** The docs page's HTML, read once per instance. */
export const docsPage = once(() => readFileSync(publishedFile(PUBLISHED_FILES.docs), 'utf8'));
