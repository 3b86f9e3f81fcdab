import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { storeCredentials } from '../shared/platform/clients/credentials';
import { flushMetrics } from '../shared/platform/metrics';
import { logger } from '../shared/platform/logger';
import type { ReservationKind } from '../shared/reservations/kind';
import { HandOffMessage, kinds } from '../shared/reservations/kinds';
import { CORRELATION_ATTRIBUTE } from '../shared/reservations/queue';
import { writeReservations } from '../shared/reservations/writer';

/** Reservation id -> the id of the request that made it, from the message attribute; none when it is absent or garbled. */
function correlationIdsOf(record: SQSRecord): Record<string, string> {
  try {
    const ids: unknown = JSON.parse(record.messageAttributes?.[CORRELATION_ATTRIBUTE]?.stringValue ?? '{}');
    return ids && typeof ids === 'object' ? (ids as Record<string, string>) : {};
  } catch {
    return {};
  }
}

function parse(body: string): ReturnType<typeof HandOffMessage.safeParse> {
  try {
    return HandOffMessage.safeParse(JSON.parse(body));
  } catch {
    return HandOffMessage.safeParse(undefined);
  }
}

/**
 * The reservation queue's consumer: stores the orders and coupons reserved in Redis, all of a
 * batch's of each kind together. A malformed record fails alone (and reaches the DLQ after its
 * receives run out) without holding back the rest of its batch; a record with a reservation that
 * could not be written is retried whole, and its siblings already written are then recognised in
 * the ledger and not stored twice. Each decision is logged with the correlation id of the request
 * that made the reservation (an extra key of its own line, not appended to the logger, which the
 * twin's concurrent batches share).
 */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(flushMetrics())
  .use(storeCredentials())
  .handler(async (event) => {
    const failures = new Set<string>();
    const messagesOf = new Map<string, string[]>();
    const correlationIds: Record<string, string> = Object.assign({}, ...event.Records.map(correlationIdsOf));
    const messages = event.Records.flatMap((record) => {
      const parsed = parse(record.body);
      if (parsed.success) return [{ messageId: record.messageId, body: parsed.data }];
      logger.error('Malformed hand-off message', { messageId: record.messageId, issues: parsed.error.issues.length });
      failures.add(record.messageId);
      return [];
    });
    const write = <R>(kind: ReservationKind<R>) => {
      const records = messages.flatMap(({ messageId, body }) =>
        (body[kind.name] as R[]).map((record) => {
          const id = kind.idOf(record);
          messagesOf.set(id, [...(messagesOf.get(id) ?? []), messageId]);
          return record;
        }),
      );
      return writeReservations(kind, records);
    };
    const results = await Promise.all(kinds.map((kind) => write(kind as ReservationKind<unknown>)));
    for (const id of results.flatMap((r) => [...r.failed])) for (const messageId of messagesOf.get(id)!) failures.add(messageId);
    for (const [id, state] of results.flatMap((r) => [...r.decisions])) logger.info('Reservation decided', { id, state, correlationId: correlationIds[id] });
    return { batchItemFailures: [...failures].map((itemIdentifier) => ({ itemIdentifier })) };
  });
