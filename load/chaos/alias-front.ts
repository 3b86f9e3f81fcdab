import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What a Lambda alias with a routing configuration does while CodeDeploy shifts it: each request
 * goes to the new version with probability `newShare`, to the old otherwise. Here the versions are
 * two twins' gateways, and the front passes each request to one of them whole, counting where
 * each went.
 */
export interface AliasFront {
  url: string;
  /** The new version's gateway, once it serves; it takes no request until shifted to. */
  addNewVersion(url: string): void;
  /** Share of requests the new version takes from now on, 0 to 1. */
  shift(newShare: number): void;
  served: { old: number; new: number };
  /** Resolves once no request to the old version is still being answered (Lambda lets an invocation finish on the version it started on). */
  oldDrained(): Promise<void>;
  close(): Promise<void>;
}

export async function startAliasFront(oldUrl: string): Promise<AliasFront> {
  const targets: { old: URL; new?: URL } = { old: new URL(oldUrl) };
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let newShare = 0;
  const served = { old: 0, new: 0 };
  const inFlight = { old: 0, new: 0 };
  let drained: (() => void) | undefined;
  const server: Server = createServer((req, res) => {
    const version = targets.new && Math.random() < newShare ? 'new' : 'old';
    const target = targets[version]!;
    served[version] += 1;
    inFlight[version] += 1;
    res.once('close', () => {
      inFlight[version] -= 1;
      if (version === 'old' && inFlight.old === 0) drained?.();
    });
    const upstream = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    // An instance that cannot be reached: as Lambda's service error through API Gateway, a 5xx the invariants count.
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"BAD_GATEWAY","message":"the version could not be reached"}}');
    });
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    addNewVersion(url) {
      targets.new = new URL(url);
    },
    shift(share) {
      newShare = share;
    },
    served,
    oldDrained: () => (inFlight.old === 0 ? Promise.resolve() : new Promise<void>((resolve) => (drained = resolve))),
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      agent.destroy();
    },
  };
}
