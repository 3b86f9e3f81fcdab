import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * What can become of a send between a function and SQS: `reset`, the connection is reset before
 * the request reaches the queue (nothing sent); `reply-lost`, the queue takes the message and its
 * reply never comes back (the client times out on an outcome it cannot know); `delayed`, the
 * request reaches the queue only after `delayMs`, past the function's own timeout, and its reply
 * follows it if the client is still there.
 */
export type QueueFault = 'reset' | 'reply-lost' | 'delayed';

/**
 * The share, 0 to 1, of sends (SendMessage, SendMessageBatch) that meet each fault, drawn per call;
 * the rest pass. A fault given a share that has not fired yet takes the next send instead, one
 * kind after another, so that every kind fires however few sends the load makes.
 */
export type QueueFaultShares = Partial<Record<QueueFault, number>>;

export interface QueueFaultProxy {
  /** Where the functions' SQS client sends (AWS_ENDPOINT_URL_SQS). */
  url: string;
  setShares(shares: QueueFaultShares): void;
  /** Sends that met each fault so far, and those that passed untouched. */
  readonly counts: Readonly<Record<QueueFault | 'passed', number>>;
  /** Delayed sends the queue has not answered yet. */
  readonly held: number;
  close(): Promise<void>;
}

const SEND_ACTIONS = new Set(['SendMessage', 'SendMessageBatch']);
const FAULTS = ['reset', 'reply-lost', 'delayed'] as const;

/** The SQS action of a request: the JSON protocol's X-Amz-Target, or the query protocol's Action field. */
function sqsAction(req: IncomingMessage, body: Buffer): string | undefined {
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string') return target.replace(/^AmazonSQS\./, '');
  return new URLSearchParams(body.toString()).get('Action') ?? undefined;
}

/**
 * An HTTP proxy in front of the SQS emulator for the functions' sends only (the pollers keep
 * reading from the emulator itself, as an event source mapping does not share the functions'
 * network path). Speaks HTTP rather than bytes so a fault hits one call, not every call that
 * shares a keep-alive connection, and so that it can tell a send from any other call.
 */
export async function startQueueFaultProxy(emulatorUrl: string, { delayMs }: { delayMs: number }): Promise<QueueFaultProxy> {
  const upstream = new URL(emulatorUrl);
  const agent = new Agent({ keepAlive: true });
  let shares: QueueFaultShares = {};
  const counts: Record<QueueFault | 'passed', number> = { reset: 0, 'reply-lost': 0, delayed: 0, passed: 0 };
  const timers = new Set<NodeJS.Timeout>();
  // Held client connections, destroyed on close so a reply never delivered does not keep the proxy open.
  const sockets = new Set<Socket>();
  let held = 0;

  function draw(): QueueFault | 'passed' {
    const unfired = FAULTS.find((fault) => (shares[fault] ?? 0) > 0 && counts[fault] === 0);
    if (unfired) return unfired;
    let roll = Math.random();
    for (const fault of FAULTS) {
      roll -= shares[fault] ?? 0;
      if (roll < 0) return fault;
    }
    return 'passed';
  }

  /** Sends the request on to the emulator; `reply` gets its answer, or the error when it has none. */
  function forward(req: IncomingMessage, body: Buffer, reply: (answer: IncomingMessage | Error) => void): void {
    const out = request(
      {
        agent,
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'content-length': String(body.length) },
      },
      reply,
    );
    out.on('error', reply);
    out.end(body);
  }

  function relay(res: ServerResponse) {
    return (answer: IncomingMessage | Error) => {
      if (answer instanceof Error) {
        res.destroy();
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    };
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const action = sqsAction(req, body);
      const fault = action && SEND_ACTIONS.has(action) ? draw() : 'passed';
      if (action && SEND_ACTIONS.has(action)) counts[fault] += 1;
      switch (fault) {
        case 'reset':
          // An RST, not a FIN: the client sees ECONNRESET, as when a connection dies on the way.
          req.socket.resetAndDestroy();
          return;
        case 'reply-lost':
          forward(req, body, (answer) => {
            if (!(answer instanceof Error)) answer.resume();
          });
          return;
        case 'delayed': {
          held += 1;
          const timer = setTimeout(() => {
            timers.delete(timer);
            forward(req, body, (answer) => {
              held -= 1;
              relay(res)(answer);
            });
          }, delayMs);
          timers.add(timer);
          return;
        }
        case 'passed':
          forward(req, body, relay(res));
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    setShares(next) {
      shares = { ...next };
    },
    counts,
    get held() {
      return held;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        for (const socket of sockets) socket.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
