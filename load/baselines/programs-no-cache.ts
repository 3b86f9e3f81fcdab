/** The catalog as the original service served it: straight from MySQL on every request. */
import { api } from '../../shared/api/api';
import { json } from '../../shared/platform/http/response';
import { loadProgramPage, ProgramPage, ProgramQuery } from '../../shared/catalog/programs';

export const handler = api({ access: 'public', query: ProgramQuery, answers: { 200: ProgramPage }, errors: [] }).handler(async ({ input }) =>
  json(200, await loadProgramPage(input.query)),
);
