import type { SQSRecord } from 'aws-lambda';
import { sqsCall } from '../platform/clients/sqs-calls';
import { reservationFailuresEnv, readEnv } from '../platform/config';

/** The dead-letter queue's attribute saying why the writer parked a message there rather than the queue's retries. */
export const PARKED_REASON_ATTRIBUTE = 'ParkedReason';

/**
 * Puts a message the writer cannot read into the reservation queue's dead-letter queue as it came
 * (body and attributes), with the reason: kept for a writer that can (npm run redrive once one
 * runs), not retried by one that cannot until its receives run out. Rejects when the send fails,
 * so the message stays on its queue. Sent by SQS's JSON protocol, as the hand-offs are: the SDK's
 * client would be the only one in the writer's bundle, for a call it makes only for a message of a
 * version it does not know.
 */
export async function parkHandOff(record: SQSRecord, reason: string): Promise<void> {
  const attributes: Record<string, { DataType: string; StringValue: string }> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {})) {
    if (value.stringValue !== undefined) attributes[name] = { DataType: value.dataType, StringValue: value.stringValue };
  }
  attributes[PARKED_REASON_ATTRIBUTE] = { DataType: 'String', StringValue: reason };
  await sqsCall()('SendMessage', { QueueUrl: readEnv(reservationFailuresEnv).RESERVATION_DLQ_URL, MessageBody: record.body, MessageAttributes: attributes });
}
