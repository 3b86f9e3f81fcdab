import {
  DeleteMessageBatchCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  StartMessageMoveTaskCommand,
  type ListMessageMoveTasksResultEntry,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { until } from '../wait';

export interface RedriveQueues {
  /** The dead-letter queue, moved from. */
  deadLetter: { url: string; arn: string };
  /** Its source queue, moved back to. */
  queue: { url: string; arn: string };
}

export interface Redriven {
  moved: number;
  how: 'message-move-task' | 'receive-and-send';
}

/** Messages received, and so hidden from another mover, while they are sent back. */
const HIDDEN_SECONDS = 60;

/** What SendMessage takes back of a received attribute: its type and value, not the list fields receive adds. */
const sendable = (attributes: Record<string, MessageAttributeValue> | undefined) =>
  attributes &&
  Object.fromEntries(
    Object.entries(attributes).map(([name, a]) => [
      name,
      { DataType: a.DataType, ...(a.StringValue !== undefined ? { StringValue: a.StringValue } : { BinaryValue: a.BinaryValue }) },
    ]),
  );

/**
 * Moves every message of a dead-letter queue back to its queue by hand, for an SQS without
 * StartMessageMoveTask (the twin's emulator): ten at a time, each sent (body and attributes)
 * before it is deleted. A delete that fails after its send leaves a copy behind, delivered once
 * more: the writer stores a reservation once however often it comes (the ledger decides).
 */
export async function receiveAndSend(sqs: SQSClient, { deadLetter, queue }: RedriveQueues): Promise<Redriven> {
  let moved = 0;
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: deadLetter.url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: HIDDEN_SECONDS,
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return { moved, how: 'receive-and-send' };
    const { Successful = [], Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: Messages.map((m, i) => ({
          Id: String(i),
          MessageBody: m.Body!,
          ...(m.MessageAttributes ? { MessageAttributes: sendable(m.MessageAttributes) } : {}),
        })),
      }),
    );
    const sent = new Set(Successful.map((s) => s.Id));
    const entries = Messages.flatMap((m, i) => (sent.has(String(i)) ? [{ Id: String(i), ReceiptHandle: m.ReceiptHandle! }] : []));
    if (entries.length) await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: deadLetter.url, Entries: entries }));
    moved += entries.length;
    if (Failed.length)
      throw new Error(`${Failed.length} messages could not be sent back (${Failed[0]!.Code}); they return to the dead-letter queue in ${HIDDEN_SECONDS} s`);
  }
}

const FINISHED = new Set(['COMPLETED', 'CANCELLED', 'FAILED']);

/** SQS's own redrive (StartMessageMoveTask), waited for at most waitMs: what AWS offers, and what the console's "Start DLQ redrive" runs. */
export async function messageMoveTask(sqs: SQSClient, { deadLetter, queue }: RedriveQueues, waitMs: number): Promise<Redriven> {
  await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: deadLetter.arn, DestinationArn: queue.arn }));
  let task: ListMessageMoveTasksResultEntry | undefined;
  const finished = await until(
    async () => {
      const { Results = [] } = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: deadLetter.arn, MaxResults: 1 }));
      task = Results[0];
      return task && FINISHED.has(task.Status!) ? task : undefined;
    },
    waitMs,
    'the message move task',
    2_000,
    { atDeadline: 'give up' },
  );
  if (!finished)
    throw new Error(
      `The message move task is still ${task?.Status ?? 'starting'} after ${waitMs / 1000} s; it goes on without us (aws sqs list-message-move-tasks)`,
    );
  if (finished.Status !== 'COMPLETED') throw new Error(`The message move task ended ${finished.Status}: ${finished.FailureReason ?? 'no reason given'}`);
  return { moved: Number(finished.ApproximateNumberOfMessagesMoved ?? 0), how: 'message-move-task' };
}
