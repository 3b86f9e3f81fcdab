import { sqs } from '../platform/clients/sqs';
import { reservationQueueEnv, readEnv } from '../platform/config';
import { once } from '../platform/once';
import { BatchedSender } from '../platform/queue/batched-sender';
import { CORRELATION_ATTRIBUTE, encodeCorrelationIds, encodeHandOffs, type HandOff } from './hand-off';

/** The reservation queue, which the writer consumes. */
export const reservationQueue = once(
  () =>
    new BatchedSender<HandOff>(sqs(), {
      queueUrl: readEnv(reservationQueueEnv).RESERVATION_QUEUE_URL,
      // A send still unanswered after this is compensated; if it did arrive after all, the
      // ledger's cancellation makes the writer drop it.
      timeoutMs: 3_000,
      itemsPerMessage: 25,
      encode: encodeHandOffs,
      attributes: (handOffs) => {
        const ids = encodeCorrelationIds(handOffs);
        return ids ? { [CORRELATION_ATTRIBUTE]: { DataType: 'String', StringValue: ids } } : undefined;
      },
    }),
);
