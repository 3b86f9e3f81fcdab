/**
 * The SQS + S3 emulator (fauxqs), run as its own process so its CPU is accounted apart from the
 * gateway's and it is listening on loopback only. Prints "ready <port>" once it accepts requests.
 * It also counts the API calls it serves, by action, the messages sent and the SQS requests as
 * SQS bills them, at GET /__twin/stats, for benchmarks, and
 * stands in for Secrets Manager (secrets-endpoint.ts) at the same address.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { buildApp } from 'fauxqs';
import { isSecretsManagerRequest, serveSecretsManager } from './secrets-endpoint';

export const EMULATOR_STATS_PATH = '/__twin/stats';

/**
 * S3 bodies the emulator takes: the raw-mail bucket gets messages up to SES's 40 MB
 * (SES_MAX_MESSAGE_BYTES in smtp.ts), with room for the SDK's aws-chunked framing. fauxqs sizes
 * its own limit, 11 MiB, for multipart parts.
 */
const S3_BODY_LIMIT_BYTES = 64 * 1024 * 1024;

const app = buildApp({ logger: false });
// fauxqs reads S3 bodies of any content type with its catch-all parser; Fastify keeps one, so
// adding it again replaces fauxqs's, with the higher limit.
app.addContentTypeParser(
  '*',
  { parseAs: 'buffer', bodyLimit: S3_BODY_LIMIT_BYTES },
  (_request: unknown, body: Buffer, done: (error: null, body: Buffer) => void) => done(null, body),
);
const calls: Record<string, number> = {};
app.addHook(
  'onRequest',
  (
    request: { method: string; headers: Record<string, string | string[] | undefined>; raw: IncomingMessage },
    reply: { hijack(): void; raw: ServerResponse },
    done: () => void,
  ) => {
    const target = request.headers['x-amz-target'];
    if (isSecretsManagerRequest(request.headers)) {
      calls[String(target)] = (calls[String(target)] ?? 0) + 1;
      reply.hijack();
      serveSecretsManager(request.raw, reply.raw);
      return;
    }
    const action = typeof target === 'string' ? target.replace(/^AmazonSQS\./, '') : `S3 ${request.method}`;
    calls[action] = (calls[action] ?? 0) + 1;
    done();
  },
);
/** Messages sent, whether one a call or ten: how many a reservation costs is a Lambda-shaped figure. */
let messagesSent = 0;
app.addHook('preHandler', async (request: { headers: Record<string, string | string[] | undefined>; body?: unknown }) => {
  const target = request.headers['x-amz-target'];
  if (target === 'AmazonSQS.SendMessage') messagesSent += 1;
  if (target === 'AmazonSQS.SendMessageBatch') messagesSent += ((request.body as { Entries?: unknown[] } | undefined)?.Entries ?? []).length;
});
/**
 * SQS requests as SQS bills them: each 64 KB chunk of a call's payload is a request, for a send
 * what it carries, for a receive what it returns. Sized here by the call's JSON either way, a
 * little over the message bodies and attributes SQS counts.
 */
const SQS_CHUNK_BYTES = 64 * 1024;
let sqsBilledRequests = 0;
app.addHook('onSend', (request: { headers: Record<string, string | string[] | undefined> }, _reply: unknown, payload: unknown, done: () => void) => {
  const target = request.headers['x-amz-target'];
  if (typeof target === 'string' && target.startsWith('AmazonSQS.')) {
    const sent = Number(request.headers['content-length'] ?? 0);
    const returned = typeof payload === 'string' ? Buffer.byteLength(payload) : Buffer.isBuffer(payload) ? payload.length : 0;
    sqsBilledRequests += Math.max(1, Math.ceil(Math.max(sent, returned) / SQS_CHUNK_BYTES));
  }
  done();
});
app.get(EMULATOR_STATS_PATH, async () => ({ calls, messagesSent, sqsBilledRequests }));

await app.listen({ host: '127.0.0.1', port: Number(process.env.EMULATOR_PORT ?? 0) });
const address = app.server.address();
process.stdout.write(`ready ${typeof address === 'object' && address ? address.port : ''}\n`);

// Closes once: Ctrl-C signals the twin's whole process group, and the twin repeats its SIGTERM until this exits.
let closing: Promise<void> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    closing ??= app.close().finally(() => process.exit(0));
  });
}
