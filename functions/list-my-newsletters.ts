import { api } from '../shared/http/api';
import { json } from '../shared/http/response';
import { listNewsletters } from '../shared/mail/inbox';

export const handler = api({ access: 'user' }).handler(async ({ principal }) => json(200, { newsletters: await listNewsletters(principal.userId) }));
