import { createServer, type Server } from 'node:http';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { redis } from '../../shared/platform/clients/redis';
import { setDealState } from '../../shared/coupons/coupons';
import { dealKeys } from '../../shared/coupons/model';
import { upsertItemStock } from '../../shared/sale/orders/items';
import { itemKeys } from '../../shared/sale/orders/model';
import { openSale, remainingStock } from '../../shared/sale/orders/sale';
import { httpEvent, lambdaContext } from '../support/events';
import { orderEvent } from '../support/order-events';
import { uniqueItemId } from '../support/orders';
import { signedInUsers } from '../support/sessions';
import { startTcpProxy } from '../../infra/twin/faults/tcp-proxy';
import { until } from '../../shared/platform/wait';
import { route } from '../support/routes';

const createCoupon = await route('create-coupon');
const createOrder = await route('create-order');

/**
 * A hand-off that fails, followed by a release whose outcome the function cannot know: Redis runs
 * the release, its reply is lost with the connection, and ioredis sends the release again after
 * reconnecting; or no reply comes at all. Whatever the function answers must agree with Redis.
 */
const redisProxy = await startTcpProxy(Number(new URL(process.env.REDIS_URL!).port));
/** Redis itself, past the proxy: what ran while the proxy holds the replies. */
const direct = new Redis(process.env.REDIS_URL!);
process.env.REDIS_URL = `redis://127.0.0.1:${redisProxy.port}`;

/** The queue's endpoint: every send fails; the first also starts the Redis fault for the release that follows. */
let onSend: () => void = () => undefined;
const queue: Server = createServer((req) => {
  onSend();
  onSend = () => undefined;
  req.socket.destroy();
});
await new Promise<void>((resolve) => queue.listen(0, '127.0.0.1', resolve));
const queuePort = (queue.address() as { port: number }).port;
process.env.AWS_ENDPOINT_URL = `http://127.0.0.1:${queuePort}`;
process.env.RESERVATION_QUEUE_URL = `http://127.0.0.1:${queuePort}/000000000000/release-unknown`;

const status = (r: APIGatewayProxyStructuredResultV2) => r.statusCode;

/**
 * Once the hand-off's send has failed, Redis's replies are held, so the release that follows runs
 * but its reply does not come back; the connections drop once `dropWhen` resolves. Resolves then:
 * the test reads Redis once they are gone.
 */
function holdRepliesThenDrop(dropWhen: () => Promise<unknown>): Promise<void> {
  return new Promise((dropped) => {
    onSend = () => {
      redisProxy.holdReplies();
      void dropWhen().then(() => {
        redisProxy.dropConnections();
        dropped();
      });
    };
  });
}

/** A fault, given the outbox the release empties and the function's answer (once the send has failed, there is one). */
type Fault = (on: { outbox: string; answer: () => Promise<unknown> }) => Promise<void>;
/** The release runs, its reply is lost with the connection, and the client sends it again on a new one. */
const replyLostThenResent: Fault = ({ outbox }) =>
  holdRepliesThenDrop(() => until(async () => (await direct.hlen(outbox)) === 0, 10_000, 'the release run by Redis', 10));
/** No reply comes within the command's timeout: the connections drop only once the function has answered. */
const noReply: Fault = ({ answer }) => holdRepliesThenDrop(answer);

afterAll(async () => {
  redis().disconnect();
  direct.disconnect();
  await redisProxy.close();
  await new Promise<void>((resolve) => queue.close(() => resolve()));
});

describe('an order whose hand-off failed and whose release outcome is unknown', () => {
  async function placeOrder(fault: Fault) {
    const itemId = uniqueItemId('release');
    const keys = itemKeys(itemId);
    await upsertItemStock(itemId, 5, 1);
    await openSale(itemId, 5, 1);
    const [buyer] = await signedInUsers(1);
    let answer: Promise<APIGatewayProxyStructuredResultV2> | undefined;
    const faultOver = fault({ outbox: keys.outbox, answer: () => answer! });
    answer = createOrder(orderEvent(itemId, buyer!.cookie, 'unknown-release', { quantity: 1 }), lambdaContext());
    const result = await answer;
    await faultOver;
    return { result, stock: await remainingStock(itemId), pending: await redis().hlen(keys.outbox) };
  }

  it('answers 503 when the release ran, even if ioredis sent it twice, and 202 only for an order still pending', async () => {
    // Act
    const { result, stock, pending } = await placeOrder(replyLostThenResent);

    // Assess: a 202 promises an order the writer will store; a released one is not.
    expect({ status: status(result), stock, pending }).toEqual({ status: 503, stock: 5, pending: 0 });
  });

  it('answers 503, safe to retry with the same key, when the release got no answer', async () => {
    const { result } = await placeOrder(noReply);

    expect(status(result)).toBe(503);
  });
});

describe('a coupon whose hand-off failed and whose release outcome is unknown', () => {
  async function askForCoupon(fault: Fault) {
    const dealId = uniqueItemId('release-deal');
    const keys = dealKeys(dealId);
    await setDealState(dealId, Date.now() - 60_000, Date.now() + 3_600_000, 5);
    const [user] = await signedInUsers(1);
    let answer: Promise<APIGatewayProxyStructuredResultV2> | undefined;
    const faultOver = fault({ outbox: keys.outbox, answer: () => answer! });
    answer = createCoupon(
      httpEvent('get-me', { method: 'POST', path: `/deals/${dealId}/coupons`, pathParameters: { dealId }, cookies: [user!.cookie] }),
      lambdaContext(),
    );
    const result = await answer;
    await faultOver;
    return { result, issued: Number(await redis().hget(keys.state, 'issued')), pending: await redis().hlen(keys.outbox) };
  }

  it('answers 503 when the release ran, even if ioredis sent it twice', async () => {
    const { result, issued, pending } = await askForCoupon(replyLostThenResent);

    expect({ status: status(result), issued, pending }).toEqual({ status: 503, issued: 0, pending: 0 });
  });

  it('answers 503 when the release got no answer', async () => {
    const { result } = await askForCoupon(noReply);

    expect(status(result)).toBe(503);
  });
});
