import { api } from '../shared/api/api';
import { jsonBody } from '../shared/platform/http/response';
import { deadlineOf } from '../shared/platform/deadline';
import { programPageJson } from '../shared/catalog/cached-programs';
import { ProgramPage, ProgramQuery } from '../shared/catalog/programs';

export const handler = api({ access: 'public', query: ProgramQuery, answers: { 200: ProgramPage }, errors: [] }).handler(async ({ input }, context) =>
  jsonBody(200, await programPageJson(input.query, () => deadlineOf(context))),
);
