import { sqs } from '../clients/sqs';
import { orderQueueEnv, readEnv } from '../config';
import { BatchedSender } from '../queue/batched-sender';

const { ORDER_QUEUE_URL } = readEnv(orderQueueEnv);

/**
 * A send that has not answered within this is treated as failed and compensated; if it did
 * arrive after all, the writer finds the outbox entry gone and drops it.
 */
const SEND_TIMEOUT_MS = 3_000;

export const orderQueue = new BatchedSender(sqs, ORDER_QUEUE_URL, SEND_TIMEOUT_MS);
