import { api } from '../shared/http/api';
import { jsonBody } from '../shared/http/response';
import { programPageJson } from '../shared/catalog/cached-programs';
import { ProgramQuery } from '../shared/catalog/programs';

export const handler = api({ access: 'public', query: ProgramQuery }).handler(async ({ input }) => jsonBody(200, await programPageJson(input.query)));
