import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';

export const handler = api({ access: 'user' }).handler(async ({ principal }) =>
  json(200, { id: principal.userId, email: principal.email, role: principal.role }),
);
