import { api, principalOf } from '../shared/api/api';
import { dependencyHealth } from '../shared/platform/health';
import { json } from '../shared/platform/http/response';
import * as z from '../shared/platform/zod';

const Query = z.object({ detail: z.optional(z.literal('1')) });

export const handler = api({ access: 'public', query: Query }).handler(async (event) => {
  // Asked before checking, so a refused detail costs no check either.
  if (event.input.query.detail) await principalOf(event, 'admin');
  const { checkedAt, down, dependencies } = await dependencyHealth();
  const status = down.length ? 503 : 200;
  const summary = { status: down.length ? 'unavailable' : 'ok', down };
  return json(status, event.input.query.detail ? { ...summary, checkedAt, dependencies } : summary);
});
