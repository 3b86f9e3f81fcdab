import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { User } from '../shared/sessions/account-rules';

export const handler = api({ access: 'user', answers: { 200: User }, errors: [] }).handler(async ({ principal }) =>
  json(200, { id: principal.userId, email: principal.email, role: principal.role }),
);
