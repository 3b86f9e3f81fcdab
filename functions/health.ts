import { api, principalOf } from '../shared/api/api';
import { dependencyHealth } from '../shared/platform/health';
import { json } from '../shared/platform/http/response';
import * as z from '../shared/platform/zod';

const Query = z.object({ detail: z.optional(z.literal('1')) });
const Dependency = z.enum(['redis', 'database', 'queue']);
/** 503 when anything is down; an admin who asks (?detail=1) is also told when it was checked and each dependency's error. */
const Health = z.strictObject({
  status: z.enum(['ok', 'unavailable']),
  down: z.array(Dependency),
  checkedAt: z.optional(z.iso.datetime()),
  /** 'ok', or what failed. */
  dependencies: z.optional(z.strictObject({ redis: z.string(), database: z.string(), queue: z.string() })),
});

export const handler = api({
  access: 'public',
  // An admin's ?detail=1 is checked against the session.
  readsSessionCookie: true,
  query: Query,
  answers: { 200: Health, 503: Health },
  // Asked for the detail without a session, or not as an admin.
  errors: ['UNAUTHENTICATED', 'FORBIDDEN'],
}).handler(async (event) => {
  // Asked before checking, so a refused detail costs no check either.
  if (event.input.query.detail) await principalOf(event, 'admin');
  const { checkedAt, down, dependencies } = await dependencyHealth();
  const status = down.length ? 503 : 200;
  const summary = { status: down.length ? ('unavailable' as const) : ('ok' as const), down };
  return json(status, event.input.query.detail ? { ...summary, checkedAt, dependencies } : summary);
});
