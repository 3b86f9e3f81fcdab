/**
 * The benches' load driver against a target that cannot serve: it gives up with the reason once
 * the answers have been mostly failures for 30 s, instead of waiting out the load; a fixed
 * amount's rate, taken to its last answer; and a list of fixed requests dealt out among the
 * connections, not built whole for each.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { drive } from '../../load/support/measure';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A target that answers every request as a twin whose function keeps failing does, or one in ten as it should; each after delayMs, noting when it saw the first and answered the last. */
async function target(answer: (n: number) => number, delayMs = 0, seen = { first: 0, last: 0 }): Promise<string> {
  let n = 0;
  server = createServer((req, res) => {
    req.resume();
    seen.first ||= performance.now();
    const status = answer(n++);
    const send = () => {
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      seen.last = performance.now();
    };
    if (delayMs > 0) setTimeout(send, delayMs);
    else send();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A target answering 200 to everything, noting the paths each connection sent, in the order first sent. */
async function pathsPerConnection(): Promise<{ url: string; pathsBySocket: Map<unknown, Set<string>> }> {
  const pathsBySocket = new Map<unknown, Set<string>>();
  server = createServer((req, res) => {
    req.resume();
    pathsBySocket.set(req.socket, (pathsBySocket.get(req.socket) ?? new Set<string>()).add(req.url!));
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pathsBySocket };
}

describe("the benches' load driver", () => {
  it('gives up, saying what it was answered, on a load answered mostly by failures for 30 s', async () => {
    // Prepare: a load that would last ten minutes
    const url = await target((n) => (n % 10 === 0 ? 200 : 500));

    // Act
    const started = performance.now();
    const failure = await drive({ url, connections: 5, duration: 600 }, 'failing load', () => undefined).catch((error: Error) => error);

    // Assess: given up within the minute a bench has to say it cannot proceed
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(
      /^failing load: given up, the twin cannot serve this load: over the last 30 s its answers were (answered ×\d+, 500 ×\d+|500 ×\d+, answered ×\d+)/,
    );
    expect(performance.now() - started).toBeLessThan(60_000);
  });

  it('drives a load whose answers are mostly good to its end', async () => {
    const url = await target((n) => (n % 10 === 0 ? 500 : 200));

    const result = await drive({ url, connections: 5, duration: 35 }, 'good load', () => undefined);

    expect(result.requests).toBeGreaterThan(0);
    expect(result.errors).toBeGreaterThan(0);
  });

  it("takes a fixed amount's rate to its last answer, not to autocannon's next one-second tick", async () => {
    // Prepare: 20 requests, one at a time, each answered after 10 ms: a run of about a fifth of a second
    const seen = { first: 0, last: 0 };
    const url = await target(() => 200, 10, seen);

    // Act
    const result = await drive({ url, connections: 1, amount: 20 }, 'fixed amount', () => undefined);

    // Assess: the rate is the requests over the time the target took to answer them, give or take a
    // connection's setup, not over autocannon's duration, which runs on to its next tick (a second);
    // and never above it, since the driver's window holds the target's
    const answering = (seen.last - seen.first) / 1000;
    expect(result.requests).toBe(20);
    expect(result.rps).toBeGreaterThan(20 / (answering + 0.3));
    expect(result.rps).toBeLessThanOrEqual(20 / answering + 1);
  });

  it('deals a list of fixed requests out among the connections, each sent by one of them', async () => {
    // Prepare: twelve requests for four connections
    const { url, pathsBySocket } = await pathsPerConnection();
    const requests = Array.from({ length: 12 }, (_, i) => ({ method: 'GET' as const, path: `/poll/${i}` }));

    // Act: each connection sends twelve, as many as the list holds
    const result = await drive({ url, connections: 4, amount: 48, requests }, 'dealt load', () => undefined);

    // Assess: four connections, each sending three paths of its own, all twelve sent
    const shares = [...pathsBySocket.values()].map((paths) => [...paths].sort());
    expect(result.requests).toBe(48);
    expect(shares).toHaveLength(4);
    expect(shares.map((share) => share.length)).toEqual([3, 3, 3, 3]);
    expect(new Set(shares.flat()).size).toBe(12);
  });

  it('leaves a list whole where a request is built per call', async () => {
    const { url, pathsBySocket } = await pathsPerConnection();
    const requests = [
      { method: 'GET' as const, path: '/first' },
      { method: 'GET' as const, path: '/then', setupRequest: (req: object) => req },
    ];

    await drive({ url, connections: 2, amount: 4, requests }, 'sequence', () => undefined);

    // Each connection sends the sequence in order, both of its requests.
    expect([...pathsBySocket.values()].map((paths) => [...paths])).toEqual([
      ['/first', '/then'],
      ['/first', '/then'],
    ]);
  });
});
