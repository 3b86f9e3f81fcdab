/**
 * The SQS + S3 emulator (fauxqs), run as its own process so its CPU is accounted apart from the
 * gateway's and it is listening on loopback only. Prints "ready <port>" once it accepts requests.
 */
import { buildApp } from 'fauxqs';

const app = buildApp({ logger: false });
await app.listen({ host: '127.0.0.1', port: Number(process.env.EMULATOR_PORT ?? 0) });
const address = app.server.address();
process.stdout.write(`ready ${typeof address === 'object' && address ? address.port : ''}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void app.close().finally(() => process.exit(0)));
}
