import { sqs } from '../clients/sqs';
import { orderQueueEnv, readEnv } from '../config';
import { once } from '../once';
import { BatchedSender } from '../queue/batched-sender';
import { encodeHandOffs, type HandOff } from './message';

/** The hand-off of reservations (orders and coupons) to the queue their writer consumes. */
export const handOffQueue = once(
  () =>
    new BatchedSender<HandOff>(sqs(), {
      queueUrl: readEnv(orderQueueEnv).ORDER_QUEUE_URL,
      // A send still unanswered after this is compensated; if it did arrive after all, the writer
      // finds the outbox entry gone and drops it.
      timeoutMs: 3_000,
      itemsPerMessage: 25,
      encode: encodeHandOffs,
    }),
);
