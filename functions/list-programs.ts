import { api } from '../shared/http/api';
import { json } from '../shared/http/response';
import { programPage } from '../shared/catalog/cached-programs';
import { ProgramQuery } from '../shared/catalog/programs';

export const handler = api({ access: 'public', query: ProgramQuery }).handler(async ({ input }) => json(200, await programPage(input.query)));
