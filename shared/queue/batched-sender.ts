import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** SQS takes at most 10 messages per SendMessageBatch. */
const BATCH_LIMIT = 10;

export class QueueSendError extends Error {
  override name = 'QueueSendError';
}

interface Pending {
  body: string;
  resolve(): void;
  reject(error: Error): void;
}

/**
 * Sends messages one call at a time to the caller, but coalesces every send made in the same turn
 * of the event loop into SendMessageBatch calls. A lone request (a classic Lambda instance) pays
 * nothing for it; a process serving many requests at once (the twin, multi-concurrency Lambda)
 * pays one API call per ten messages instead of one each. Each caller learns its own message's fate.
 */
export class BatchedSender {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
    private readonly timeoutMs: number,
  ) {}

  send(body: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ body, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    for (let i = 0; i < batch.length; i += BATCH_LIMIT) void this.sendChunk(batch.slice(i, i + BATCH_LIMIT));
  }

  private async sendChunk(chunk: Pending[]): Promise<void> {
    try {
      const result = await this.sqs.send(
        new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: chunk.map((p, i) => ({ Id: String(i), MessageBody: p.body })) }),
        { abortSignal: AbortSignal.timeout(this.timeoutMs) },
      );
      const sent = new Set(result.Successful?.map((s) => s.Id));
      const failed = new Map(result.Failed?.map((f) => [f.Id, f]));
      chunk.forEach((p, i) => {
        const id = String(i);
        if (sent.has(id)) return p.resolve();
        const failure = failed.get(id);
        p.reject(new QueueSendError(failure ? `${failure.Code}: ${failure.Message ?? ''}` : 'The queue gave no answer for this message'));
      });
    } catch (error) {
      for (const p of chunk) p.reject(error as Error);
    }
  }
}
