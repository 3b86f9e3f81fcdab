import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { SESEvent } from 'aws-lambda';
import { asyncInvocation } from '../../../functions/table';
import { asyncFailureRecord, type AsyncFailureRecord } from './async-failure';
import { sesEvent, sesMessageId, type Verdicts } from './ses-event';

/** A receipt rule: mail for this domain is stored, then handed to this function. */
export interface MailRoute {
  domain: string;
  functionArn: string;
  invoke(event: SESEvent): Promise<unknown>;
  /** Keeps an event whose retries are spent, as the function's on-failure destination does; none for a function no stack deploys (a bench's baseline). */
  keepFailure?(record: AsyncFailureRecord): Promise<void>;
}

export interface SmtpListenerOptions {
  port: number;
  routes: MailRoute[];
  /** SES_MAX_MESSAGE_BYTES in the twin; smaller in tests of the limit itself. */
  maxMessageBytes: number;
  verdicts: Verdicts;
  /** Stores the raw message where the SES S3 action would: <prefix><messageId>. */
  store(messageId: string, raw: Buffer): Promise<void>;
  onError(error: Error): void;
}

export interface SmtpListener {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** SES accepts messages up to 40 MB when it stores them in S3; the function refuses larger than its own limit. */
export const SES_MAX_MESSAGE_BYTES = 40 * 1024 * 1024;

/** Lambda waits 1 and then 2 minutes before its retries; the twin as many seconds. */
const RETRY_DELAY_MS = 1_000;

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** Reads the DATA stream, keeping nothing past the limit (the rest is drained, not buffered). */
function readMessage(stream: SMTPServerDataStream, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    stream.once('error', reject);
    stream.once('end', () => resolve(stream.sizeExceeded || size > maxBytes ? undefined : Buffer.concat(chunks, size)));
  });
}

/**
 * The twin's side of SES inbound: an SMTP listener on loopback that takes mail only for the
 * routes' domains (others are refused at RCPT), refuses oversized messages with 552, stores each
 * accepted message in the raw-mail bucket as SES's S3 action does, answers 250 with the SES
 * message id, then invokes the route's function with the receipt event as SES does: asynchronously,
 * retried twice on failure, then kept as Lambda's invocation record in its on-failure destination.
 */
export async function startSmtpListener(options: SmtpListenerOptions): Promise<SmtpListener> {
  const routeOf = new Map(options.routes.map((r) => [r.domain.toLowerCase(), r]));

  const deliveries = new Set<Promise<void>>();
  let closing = false;

  async function deliver(event: SESEvent, route: MailRoute): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await route.invoke(event);
        return;
      } catch (error) {
        if (attempt === asyncInvocation.retries) {
          options.onError(error as Error);
          await route.keepFailure?.(asyncFailureRecord(route.functionArn, event, attempt + 1, error as Error)).catch((kept: Error) => options.onError(kept));
          return;
        }
        if (closing) {
          options.onError(error as Error);
          return;
        }
        await new Promise((r) => setTimeout(r, RETRY_DELAY_MS * (attempt + 1)));
      }
    }
  }

  /** After the message is stored and accepted: one receipt event per route its recipients belong to. */
  function hand(messageId: string, raw: Buffer, mailFrom: string, rcptTo: string[], receivedAt: Date): void {
    const byRoute = new Map<MailRoute, string[]>();
    for (const address of rcptTo) {
      const route = routeOf.get(domainOf(address))!;
      byRoute.set(route, [...(byRoute.get(route) ?? []), address]);
    }
    for (const [route, recipients] of byRoute) {
      const event = sesEvent({
        messageId,
        raw,
        mailFrom,
        destination: rcptTo,
        recipients,
        functionArn: route.functionArn,
        verdicts: options.verdicts,
        receivedAt,
      });
      const delivery = deliver(event, route).finally(() => deliveries.delete(delivery));
      deliveries.add(delivery);
    }
  }

  async function accept(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    // The session's envelope is reset for the next message once this one is answered.
    const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const rcptTo = session.envelope.rcptTo.map((r) => r.address);
    const raw = await readMessage(stream, options.maxMessageBytes);
    if (!raw) throw smtpError(552, `5.3.4 Message exceeds the maximum size of ${options.maxMessageBytes} bytes`);
    const receivedAt = new Date();
    const messageId = sesMessageId();
    try {
      await options.store(messageId, raw);
    } catch (error) {
      options.onError(error as Error);
      throw smtpError(451, '4.3.0 Could not store the message; try again');
    }
    // Invoked once the client has its answer, as SES acts on a message after accepting it.
    setImmediate(() => hand(messageId, raw, mailFrom, rcptTo, receivedAt));
    return `OK queued as ${messageId}`;
  }

  const server = new SMTPServer({
    name: 'surge-twin',
    banner: 'Surge local twin (SES inbound stand-in)',
    size: options.maxMessageBytes,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    // On close, idle client connections get this long to leave, not smtp-server's 30 s.
    closeTimeout: 1_000,
    onRcptTo(address, _session, callback) {
      if (routeOf.has(domainOf(address.address))) return callback();
      callback(smtpError(550, `5.7.1 <${address.address}>: this server takes mail only for ${[...routeOf.keys()].join(', ')}`));
    },
    onData(stream, session, callback) {
      accept(stream, session).then(
        (reply) => callback(null, reply),
        (error: Error) => callback(error),
      );
    },
  });
  server.on('error', (error) => options.onError(error));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    async close() {
      closing = true;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // Invocations under way finish (or stop retrying) before the services they use go away.
      await Promise.all(deliveries);
    },
  };
}
