import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { createProgram } from '../shared/catalog/cached-programs';
import { Program, ProgramInput } from '../shared/catalog/programs';

export const handler = api({ access: 'admin', body: ProgramInput, answers: { 201: Program }, errors: [] }).handler(async ({ input }) =>
  json(201, await createProgram(input.body)),
);
