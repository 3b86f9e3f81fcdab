import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy on a free loopback port, standing in for the network and the DNS name between a
 * client and Redis (ElastiCache's primary endpoint). New connections go to the current target;
 * retarget() leaves the open ones where they are, as clients keep their connections to the node a
 * name used to point at. pause() holds every byte in both directions without closing anything, as
 * a partition does, and resume() delivers them, in order, as TCP does once the network heals;
 * dropConnections() closes every open connection, bytes held included, as TCP does once it gives up.
 * holdReplies() lets requests through but holds what the server answers on the open connections:
 * a command runs, and its reply is lost when the connection then drops (an outcome unknown).
 */
export async function startTcpProxy(targetPort: number) {
  let target = targetPort;
  let paused = false;
  const flows = new Set<{ from: Socket; to: Socket; reply: boolean }>();
  // TCP_NODELAY both ways, as Redis sets on its own sockets: with Nagle's algorithm a small write
  // (a replica's REPLCONF ACK, a WAIT's reply) waits for the peer's delayed ACK, 40 ms a hop, which
  // no network path to ElastiCache adds.
  const server = createServer({ noDelay: true }, (client) => {
    const upstream = connect({ port: target, host: '127.0.0.1', noDelay: true });
    const pair = [
      { from: client, to: upstream, reply: false },
      { from: upstream, to: client, reply: true },
    ];
    for (const flow of pair) {
      flows.add(flow);
      if (!paused) flow.from.pipe(flow.to);
      flow.from
        .on('error', () => undefined)
        .on('close', () => {
          for (const f of pair) flows.delete(f);
          // One side gone takes the other with it, as a closed connection does end to end.
          client.destroy();
          upstream.destroy();
        });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    retarget(port: number) {
      target = port;
    },
    pause() {
      paused = true;
      for (const { from, to } of flows) from.unpipe(to).pause();
    },
    resume() {
      paused = false;
      for (const { from, to } of flows) from.pipe(to);
    },
    holdReplies() {
      for (const { from, to, reply } of flows) if (reply) from.unpipe(to).pause();
    },
    dropConnections() {
      for (const { from } of flows) from.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const { from } of flows) from.destroy();
        server.close(() => resolve());
      }),
  };
}
