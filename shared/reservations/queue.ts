import { sqs } from '../clients/sqs';
import { reservationQueueEnv, readEnv } from '../config';
import { once } from '../once';
import { BatchedSender } from '../queue/batched-sender';

/** One reservation on its way to the writer: the kind's name (the message field) and its record. */
export interface HandOff {
  kind: string;
  record: unknown;
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
    }),
);
