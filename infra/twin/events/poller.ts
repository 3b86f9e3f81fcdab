import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type MessageAttributeValue, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from 'aws-lambda';

export interface PollerOptions {
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  region: string;
  batchSize: number;
  maxBatchingWindowSeconds: number;
  maxConcurrency: number;
  invoke(event: SQSEvent): Promise<unknown>;
  onError(error: Error): void;
  /**
   * A fault switch, off unless set: every batch is handed to the function twice, each copy in an
   * order of its own and the second up to half a second later, so they overlap or follow each
   * other and other batches. SQS promises at-least-once delivery in no order; this makes a
   * duplicate of every message instead of an occasional one. A message counts as processed when
   * either copy succeeded, as SQS deletes a message on any of its receipt handles.
   */
  deliverTwice?: boolean;
}

export interface Poller {
  /** Batches handed to the function so far, for tests and logs. */
  readonly invocations: number;
  stop(): Promise<void>;
}

/** SQS ReceiveMessage returns at most 10 messages per call. */
const RECEIVE_MAX = 10;
const LONG_POLL_SECONDS = 20;
/** With deliverTwice, the longest the second copy of a batch waits after the first. */
const DUPLICATE_DELAY_MAX_MS = 500;

/** A copy of items in a random order (Fisher–Yates). */
function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

function toAttributes(message: Message): SQSRecordAttributes {
  const a = message.Attributes ?? {};
  return {
    ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
    SentTimestamp: a.SentTimestamp ?? String(Date.now()),
    SenderId: a.SenderId ?? '000000000000',
    ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    ...(a.AWSTraceHeader ? { AWSTraceHeader: a.AWSTraceHeader } : {}),
  };
}

function toMessageAttributes(attributes: Record<string, MessageAttributeValue> | undefined): SQSMessageAttributes {
  const out: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    out[name] = {
      dataType: value.DataType ?? 'String',
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') } : {}),
      stringListValues: [],
      binaryListValues: [],
    };
  }
  return out;
}

export function toSqsEvent(messages: Message[], queueArn: string, region: string): SQSEvent {
  return {
    Records: messages.map(
      (m): SQSRecord => ({
        messageId: m.MessageId!,
        receiptHandle: m.ReceiptHandle!,
        body: m.Body ?? '',
        attributes: toAttributes(m),
        messageAttributes: toMessageAttributes(m.MessageAttributes),
        md5OfBody: m.MD5OfBody ?? '',
        eventSource: 'aws:sqs',
        eventSourceARN: queueArn,
        awsRegion: region,
      }),
    ),
  };
}

/**
 * Which messages of a batch failed, read as Lambda reads a partial batch response: the named
 * ones; or all of them if the function threw, or named an item that is not in the batch.
 */
export function failedMessageIds(result: unknown, messages: Message[]): Set<string> {
  const all = new Set(messages.map((m) => m.MessageId!));
  const failures = (result as SQSBatchResponse | undefined)?.batchItemFailures;
  if (!Array.isArray(failures)) return new Set();
  const failed = new Set<string>();
  for (const failure of failures) {
    const id = failure?.itemIdentifier;
    if (typeof id !== 'string' || !all.has(id)) return all;
    failed.add(id);
  }
  return failed;
}

/**
 * The twin's event source mapping for one queue: long-polls, gathers a batch within the batching
 * window, invokes the consumer, and deletes exactly the records that did not fail. Failed records
 * stay in flight until their visibility timeout, so the queue's own redrive policy moves a poison
 * message to its dead-letter queue after maxReceiveCount receives.
 */
export function startPoller(options: PollerOptions): Poller {
  const abort = new AbortController();
  let invocations = 0;

  async function receive(max: number, waitSeconds: number): Promise<Message[]> {
    const { Messages } = await options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: Math.min(RECEIVE_MAX, max),
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: abort.signal },
    );
    return Messages ?? [];
  }

  async function gatherBatch(): Promise<Message[]> {
    const batch = await receive(options.batchSize, LONG_POLL_SECONDS);
    if (batch.length === 0 || options.maxBatchingWindowSeconds === 0) return batch;
    const windowEnds = Date.now() + options.maxBatchingWindowSeconds * 1000;
    while (batch.length < options.batchSize && Date.now() < windowEnds && !abort.signal.aborted) {
      const waitSeconds = Math.min(LONG_POLL_SECONDS, Math.max(0, Math.floor((windowEnds - Date.now()) / 1000)));
      const more = await receive(options.batchSize - batch.length, waitSeconds);
      if (more.length === 0 && waitSeconds === 0) await new Promise((r) => setTimeout(r, 20));
      batch.push(...more);
    }
    return batch;
  }

  async function deleteSucceeded(messages: Message[], failed: Set<string>): Promise<void> {
    const done = messages.filter((m) => !failed.has(m.MessageId!));
    for (let i = 0; i < done.length; i += RECEIVE_MAX) {
      const chunk = done.slice(i, i + RECEIVE_MAX);
      const { Failed } = await options.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: chunk.map((m, n) => ({ Id: String(n), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
      if (Failed?.length) options.onError(new Error(`Could not delete ${Failed.length} processed messages`));
    }
  }

  /** One invocation with these messages; the ids of those that failed. */
  async function deliver(messages: Message[]): Promise<Set<string>> {
    invocations += 1;
    try {
      return failedMessageIds(await options.invoke(toSqsEvent(messages, options.queueArn, options.region)), messages);
    } catch (error) {
      options.onError(error as Error);
      return new Set(messages.map((m) => m.MessageId!));
    }
  }

  async function deliverTwice(batch: Message[]): Promise<Set<string>> {
    const [first, second] = await Promise.all([
      deliver(shuffled(batch)),
      new Promise((r) => setTimeout(r, Math.random() * DUPLICATE_DELAY_MAX_MS)).then(() => deliver(shuffled(batch))),
    ]);
    return new Set([...first].filter((id) => second.has(id)));
  }

  async function loop(): Promise<void> {
    while (!abort.signal.aborted) {
      let batch: Message[];
      try {
        batch = await gatherBatch();
      } catch (error) {
        if (abort.signal.aborted) return;
        options.onError(error as Error);
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      if (batch.length === 0) continue;
      const failed = options.deliverTwice ? await deliverTwice(batch) : await deliver(batch);
      try {
        await deleteSucceeded(batch, failed);
      } catch (error) {
        options.onError(error as Error);
      }
    }
  }

  const loops = Array.from({ length: options.maxConcurrency }, loop);
  return {
    get invocations() {
      return invocations;
    },
    async stop() {
      abort.abort();
      await Promise.all(loops);
    },
  };
}
