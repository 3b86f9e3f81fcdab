import * as z from '../shared/platform/zod';
import { NotFoundError } from '../shared/platform/errors';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { changeProgram } from '../shared/catalog/cached-programs';
import { Program, ProgramInput } from '../shared/catalog/programs';

const Params = z.object({ id: z.coerce.number().check(z.int(), z.positive(), z.maximum(Number.MAX_SAFE_INTEGER)) });

export const handler = api({ access: 'admin', params: Params, body: ProgramInput, answers: { 200: Program }, errors: ['NOT_FOUND'] }).handler(
  async ({ input }) => {
    const program = await changeProgram(input.params.id, input.body);
    if (!program) throw new NotFoundError('No such program');
    return json(200, program);
  },
);
