import { sqs } from '../clients/sqs';
import { orderQueueEnv, readEnv } from '../config';
import { BatchedSender } from '../queue/batched-sender';
import { encodeHandOffs, type HandOff } from './message';

const { ORDER_QUEUE_URL } = readEnv(orderQueueEnv);

/** The hand-off of reservations (orders and coupons) to the queue their writer consumes. */
export const handOffQueue = new BatchedSender<HandOff>(sqs, {
  queueUrl: ORDER_QUEUE_URL,
  // A send still unanswered after this is compensated; if it did arrive after all, the writer
  // finds the outbox entry gone and drops it.
  timeoutMs: 3_000,
  itemsPerMessage: 25,
  encode: encodeHandOffs,
});
