import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../shared/logger';
import { OrderRecord } from '../shared/orders/model';
import { writeOrders } from '../shared/orders/writer';

/**
 * The order queue's consumer. A malformed record fails alone (and reaches the DLQ after its
 * receives run out) without holding back the rest of its batch.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  const failures: string[] = [];
  const messagesOf = new Map<string, string[]>();
  const orders: OrderRecord[] = [];
  for (const record of event.Records) {
    let parsed: ReturnType<typeof OrderRecord.safeParse>;
    try {
      parsed = OrderRecord.safeParse(JSON.parse(record.body));
    } catch {
      parsed = OrderRecord.safeParse(undefined);
    }
    if (!parsed.success) {
      logger.error('Malformed order message', { messageId: record.messageId, issues: parsed.error.issues.length });
      failures.push(record.messageId);
      continue;
    }
    orders.push(parsed.data);
    messagesOf.set(parsed.data.orderId, [...(messagesOf.get(parsed.data.orderId) ?? []), record.messageId]);
  }
  const failedOrders = await writeOrders(orders);
  for (const orderId of failedOrders) failures.push(...messagesOf.get(orderId)!);
  return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
});
