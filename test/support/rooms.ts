import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { redis } from '../../shared/platform/clients/redis';
import { itemKeys } from '../../shared/sale/orders/model';
import { roomKeys } from '../../shared/sale/rooms/model';
import { httpEvent, lambdaContext } from './events';
import { orderEvent } from './order-events';
import { route } from './routes';
import type { SignedInUser } from './sessions';

type Result = APIGatewayProxyStructuredResultV2;

/** The answer's JSON body. */
export const body = (r: Result) => JSON.parse(r.body ?? 'null');

/** The tests' load-test allowance exempts TEST-NET-3 (test/setup/services.ts): joins come from there, never held to the per-source limit. */
const EXEMPT_SOURCE = '203.0.113.9';

const roomEvent = (method: string, path: string, itemId: string, cookie: string, extra: { body?: unknown } = {}) =>
  httpEvent(method === 'GET' ? 'get-me' : 'post-sessions', { method, path, pathParameters: { itemId }, cookies: [cookie], sourceIp: EXEMPT_SOURCE, ...extra });

/** A room open since a second ago, admitting at once: its turns come as fast as its cap allows. */
export const openRoom = (overrides: Record<string, unknown> = {}) => ({
  opensAt: new Date(Date.now() - 1_000).toISOString(),
  admitPerSecond: 1_000,
  passSeconds: 120,
  graceSeconds: 60,
  ...overrides,
});

/** The waiting room's routes and the order route, through their handlers, as the gateway calls them. */
export async function roomRoutes() {
  const [put, remove, joinQueue, getQueueStatus, claimQueuePass, createOrder] = await Promise.all(
    ['put-waiting-room', 'delete-waiting-room', 'join-queue', 'get-queue-status', 'claim-queue-pass', 'create-order'].map((id) => route(id)),
  );
  return {
    put: (itemId: string, admin: SignedInUser, settings: unknown) =>
      put!(roomEvent('PUT', `/items/${itemId}/waiting-room`, itemId, admin.cookie, { body: settings }), lambdaContext()),
    remove: (itemId: string, user: SignedInUser) => remove!(roomEvent('DELETE', `/items/${itemId}/waiting-room`, itemId, user.cookie), lambdaContext()),
    join: (itemId: string, buyer: SignedInUser) => joinQueue!(roomEvent('POST', `/items/${itemId}/queue`, itemId, buyer.cookie), lambdaContext()),
    status: (itemId: string, buyer: SignedInUser) => getQueueStatus!(roomEvent('GET', `/items/${itemId}/queue/me`, itemId, buyer.cookie), lambdaContext()),
    claim: (itemId: string, buyer: SignedInUser) => claimQueuePass!(roomEvent('POST', `/items/${itemId}/queue/pass`, itemId, buyer.cookie), lambdaContext()),
    order: (itemId: string, buyer: SignedInUser, key: string, pass?: string) => {
      const event = orderEvent(itemId, buyer.cookie, key, { quantity: 1 });
      if (pass !== undefined) event.headers = { ...event.headers, 'waiting-room-pass': pass };
      return createOrder!(event, lambdaContext());
    },
  };
}

/** Passes outstanding (not expired) and units left of an item not split, as the room's cap reads them. */
export async function passesAndUnits(itemId: string, now = Date.now()): Promise<{ outstanding: number; units: number }> {
  const [outstanding, stock] = await Promise.all([redis().zcount(roomKeys(itemId).passes, `(${now}`, '+inf'), redis().hget(itemKeys(itemId).state, 'stock')]);
  return { outstanding, units: Number(stock ?? 0) };
}

/** The buyer's claim once its turn came (the room admits at its rate), or the last refusal after 10 s. */
export async function admittedClaim(routes: Awaited<ReturnType<typeof roomRoutes>>, itemId: string, buyer: SignedInUser): Promise<Result> {
  let answer = await routes.claim(itemId, buyer);
  for (
    const end = Date.now() + 10_000;
    answer.statusCode === 409 && body(answer).error.code === 'NOT_ADMITTED' && Date.now() < end;
    answer = await routes.claim(itemId, buyer)
  ) {
    await new Promise((r) => setTimeout(r, 50));
  }
  return answer;
}
