import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { catalogChanged } from '../shared/catalog/cached-programs';
import { insertProgram, ProgramInput } from '../shared/catalog/programs';

export const handler = api({ access: 'admin', body: ProgramInput }).handler(async ({ input }) => {
  const program = await insertProgram(input.body);
  await catalogChanged();
  return json(201, program);
});
