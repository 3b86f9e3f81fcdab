import * as z from '../shared/platform/zod';
import { api } from '../shared/api/api';
import { json } from '../shared/platform/http/response';
import { setMuted } from '../shared/mail/inbox';

const Muted = z.strictObject({ id: z.int(), muted: z.literal(true) });

export const handler = api({
  access: 'user',
  params: z.object({ id: z.coerce.number().check(z.int(), z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER)) }),
  answers: { 200: Muted },
  // A newsletter the caller does not read.
  errors: ['NOT_FOUND'],
}).handler(async ({ principal, input }) => {
  await setMuted(principal.userId, input.params.id, true);
  return json(200, { id: input.params.id, muted: true });
});
