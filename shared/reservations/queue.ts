import { sqs } from '../platform/clients/sqs';
import { reservationQueueEnv, readEnv } from '../platform/config';
import { once } from '../platform/once';
import { BatchedSender } from '../platform/queue/batched-sender';

/** One reservation on its way to the writer: the kind's name (the message field) and its record. */
export interface HandOff {
  kind: string;
  record: unknown;
  /** The reservation's id and the request that made it (shared/platform/http/correlation.ts); a relayed reservation has none. */
  correlation?: { id: string; correlationId: string };
}

/** The message attribute naming the request of each reservation a message carries: {"<reservation id>":"<correlation id>"}. */
export const CORRELATION_ATTRIBUTE = 'CorrelationIds';

/** The correlation ids of a message's reservations, keyed by reservation id: the message attribute's value. */
export function encodeCorrelationIds(handOffs: HandOff[]): string | undefined {
  const ids = Object.fromEntries(handOffs.flatMap(({ correlation }) => (correlation ? [[correlation.id, correlation.correlationId]] : [])));
  return Object.keys(ids).length ? JSON.stringify(ids) : undefined;
}

/** A message body: the reservations of one moment, grouped by kind, e.g. {"orders":[…],"coupons":[…]}. */
export function encodeHandOffs(handOffs: HandOff[]): string {
  const byKind: Record<string, unknown[]> = {};
  for (const { kind, record } of handOffs) (byKind[kind] ??= []).push(record);
  return JSON.stringify(byKind);
}

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
