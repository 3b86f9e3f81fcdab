import { api } from '../shared/api/api';
import { docsPage } from '../shared/api/published';
import { html } from '../shared/platform/http/response';
import * as z from '../shared/platform/zod';

/** The docs page: Swagger UI inlined into one page, which reads the document from /openapi.json (infra/openapi/docs-page.ts). */
export const handler = api({ access: 'public', answers: { 200: z.string() }, answerMedia: 'text/html', errors: [] }).handler(async () =>
  html(200, docsPage(), { headers: { 'cache-control': 'public, max-age=300' } }),
);
