/**
 * The parser thread: parses and sanitises one raw message at a time for isolated-parse.ts, so a
 * message that runs too long or needs too much memory costs this thread, not the function.
 */
import { parentPort } from 'node:worker_threads';
import type { MailLimits } from './limits';
import { parseMail } from './parse';
import { MailRejected } from './rejection';
import { sanitiseHtml } from './sanitise';

export interface ParseRequest {
  raw: Uint8Array;
  limits: MailLimits;
}

parentPort!.on('message', async ({ raw, limits }: ParseRequest) => {
  try {
    const mail = await parseMail(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), limits);
    parentPort!.postMessage({ ok: true, mail: { ...mail, html: mail.html === undefined ? undefined : sanitiseHtml(mail.html) } });
  } catch (error) {
    const rejected = error instanceof MailRejected ? error : new MailRejected('unparseable', (error as Error).message ?? String(error));
    parentPort!.postMessage({ ok: false, reason: rejected.reason, message: rejected.message });
  }
});

// Ready once everything above is loaded, so loading never counts against a message's time limit.
parentPort!.postMessage({ ready: true });
