import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { mailLimits, type MailLimits } from './limits';
import type { ParsedMail } from './parse';
import { MailRejected, type RejectReason } from './rejection';
import type { ParseRequest } from './parse-worker';

/** A parsed message whose HTML has been sanitised. */
export type SafeMail = ParsedMail;

type Reply = { ok: true; mail: SafeMail } | { ok: false; reason: RejectReason; message: string };

/** Bundled functions carry the thread as parse-worker.mjs beside them; the twin and tests run the source. */
function startWorker(limits: MailLimits): { worker: Worker; ready: Promise<void> } {
  const bundled = new URL('./parse-worker.mjs', import.meta.url);
  const resourceLimits = { maxOldGenerationSizeMb: limits.maxParserHeapMb, maxYoungGenerationSizeMb: 32 };
  const worker = existsSync(bundled)
    ? new Worker(bundled, { resourceLimits })
    : new Worker(
        // A thread does not inherit the TypeScript loader: it registers tsx before importing the source.
        `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(new URL('./parse-worker.ts', import.meta.url).href)}); })`,
        { eval: true, resourceLimits },
      );
  worker.unref();
  const ready = new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`The parser thread exited (${code}) before it was ready`)));
  });
  // Until a parse awaits it, a failed start must not count as unhandled.
  ready.catch(() => undefined);
  return { worker, ready };
}

/**
 * Parses and sanitises untrusted mail on a thread of its own, one message at a time, under a hard
 * time limit and heap limit: a message past either stops the thread (a fresh one takes the next
 * message) and is rejected, while the function and the other messages carry on. The limits on
 * size, parts, nesting and headers apply inside the thread as well.
 */
export class IsolatedMailParser {
  private thread?: { worker: Worker; ready: Promise<void> };
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly limits: MailLimits = mailLimits) {}

  parse(raw: Buffer): Promise<SafeMail> {
    const turn = this.queue.then(() => this.parseNow(raw));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  async close(): Promise<void> {
    await this.thread?.worker.terminate();
    this.thread = undefined;
  }

  private async parseNow(raw: Buffer): Promise<SafeMail> {
    const thread = (this.thread ??= startWorker(this.limits));
    const { worker } = thread;
    // Held only while it works: an idle parser thread keeps no process alive.
    worker.ref();
    try {
      await thread.ready;
    } catch (error) {
      // Not the message's fault: thrown as it is, so the invocation fails and is retried.
      if (this.thread === thread) this.thread = undefined;
      worker.unref();
      throw error;
    }
    return new Promise<SafeMail>((resolve, reject) => {
      const settle = (outcome: () => void) => {
        clearTimeout(timer);
        worker.unref();
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        outcome();
      };
      /** The message crossed a limit (rejected), or the thread failed on its own (thrown, so retried). */
      const stop = (failure: Error) => {
        if (this.thread?.worker === worker) this.thread = undefined;
        void worker.terminate();
        settle(() => reject(failure));
      };
      const onMessage = (reply: Reply) => settle(() => (reply.ok ? resolve(reply.mail) : reject(new MailRejected(reply.reason, reply.message))));
      const onError = (error: Error & { code?: string }) =>
        stop(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new MailRejected('too-large', `Parsing needed more than ${this.limits.maxParserHeapMb} MB`) : error);
      const onExit = (code: number) => stop(new Error(`The parser thread exited (${code}) while parsing`));
      const timer = setTimeout(() => stop(new MailRejected('too-slow', `Parsing took over ${this.limits.maxProcessingMs} ms`)), this.limits.maxProcessingMs);
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      const request: ParseRequest = { raw: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength), limits: this.limits };
      worker.postMessage(request);
    });
  }
}

/**
 * Several parser threads, each message going to the least busy. A Lambda instance handles one
 * event at a time and needs one; the twin, one process standing for many instances, runs several
 * so that mail arriving together is parsed together, as on AWS.
 */
export class MailParserPool {
  private readonly slots: { parser: IsolatedMailParser; pending: number }[];

  constructor(threads: number, limits: MailLimits = mailLimits) {
    this.slots = Array.from({ length: threads }, () => ({ parser: new IsolatedMailParser(limits), pending: 0 }));
  }

  async parse(raw: Buffer): Promise<SafeMail> {
    const slot = this.slots.reduce((least, s) => (s.pending < least.pending ? s : least));
    slot.pending++;
    try {
      return await slot.parser.parse(raw);
    } finally {
      slot.pending--;
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.parser.close()));
  }
}
