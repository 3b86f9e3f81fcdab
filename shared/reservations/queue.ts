import { sqsCall } from '../platform/clients/sqs-calls';
import { reservationQueueEnv, readEnv } from '../platform/config';
import { once } from '../platform/once';
import { BatchedSender } from '../platform/queue/batched-sender';
import { CORRELATION_ATTRIBUTE, encodeCorrelationIds, encodeHandOffs, HAND_OFF_VERSION, VERSION_ATTRIBUTE, type HandOff } from './hand-off';

const VERSION = { DataType: 'Number', StringValue: String(HAND_OFF_VERSION) };

/** The reservation queue, which the writer consumes. */
export const reservationQueue = once(() => {
  const { RESERVATION_QUEUE_URL, HAND_OFF_ALONE } = readEnv(reservationQueueEnv);
  return new BatchedSender<HandOff>(sqsCall(), {
    queueUrl: RESERVATION_QUEUE_URL,
    alone: HAND_OFF_ALONE,
    // A send still unanswered after this is compensated; if it did arrive after all, the
    // ledger's cancellation makes the writer drop it.
    timeoutMs: 3_000,
    itemsPerMessage: 25,
    encode: encodeHandOffs,
    attributes: (handOffs) => {
      const ids = encodeCorrelationIds(handOffs);
      return { [VERSION_ATTRIBUTE]: VERSION, ...(ids ? { [CORRELATION_ATTRIBUTE]: { DataType: 'String', StringValue: ids } } : {}) };
    },
  });
});
