import { api } from '../shared/api/api';
import { apiDocument, OpenApiDocument } from '../shared/api/published';
import { jsonBody } from '../shared/platform/http/response';

/** The OpenAPI document, built from the table and the entries' schemas (infra/openapi), as it was built. */
export const handler = api({ access: 'public', answers: { 200: OpenApiDocument }, errors: [] }).handler(async () =>
  jsonBody(200, apiDocument(), { headers: { 'cache-control': 'public, max-age=300' } }),
);
