import { sqs } from '../clients/sqs';
import { orderQueueEnv, readEnv } from '../config';
import { BatchedSender } from '../queue/batched-sender';
import { encodeOrderMessage, type OrderRecord } from './model';

const { ORDER_QUEUE_URL } = readEnv(orderQueueEnv);

export const orderQueue = new BatchedSender<OrderRecord>(sqs, {
  queueUrl: ORDER_QUEUE_URL,
  // A send still unanswered after this is compensated; if it did arrive after all, the writer
  // finds the outbox entry gone and drops it.
  timeoutMs: 3_000,
  itemsPerMessage: 25,
  encode: encodeOrderMessage,
});
