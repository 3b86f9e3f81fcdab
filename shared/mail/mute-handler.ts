import * as z from '../zod';
import { api } from '../http/api';
import { json } from '../http/response';
import { setMuted } from './inbox';

/** POST mutes, DELETE unmutes: the same path, so one handler shape for both. */
export const muteHandler = (muted: boolean) =>
  api({
    access: 'user',
    params: z.object({ id: z.coerce.number().check(z.int(), z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER)) }),
  }).handler(async ({ principal, input }) => {
    await setMuted(principal.userId, input.params.id, muted);
    return json(200, { id: input.params.id, muted });
  });
