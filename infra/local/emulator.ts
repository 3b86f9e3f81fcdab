/**
 * The SQS + S3 emulator (fauxqs), run as its own process so its CPU is accounted apart from the
 * gateway's and it is listening on loopback only. Prints "ready <port>" once it accepts requests.
 * It also counts the API calls it serves, by action, at GET /__twin/stats, for benchmarks.
 */
import { buildApp } from 'fauxqs';

export const EMULATOR_STATS_PATH = '/__twin/stats';

const app = buildApp({ logger: false });
const calls: Record<string, number> = {};
app.addHook('onRequest', async (request: { method: string; headers: Record<string, string | string[] | undefined> }) => {
  const target = request.headers['x-amz-target'];
  const action = typeof target === 'string' ? target.replace(/^AmazonSQS\./, '') : `S3 ${request.method}`;
  calls[action] = (calls[action] ?? 0) + 1;
});
app.get(EMULATOR_STATS_PATH, async () => ({ calls }));

await app.listen({ host: '127.0.0.1', port: Number(process.env.EMULATOR_PORT ?? 0) });
const address = app.server.address();
process.stdout.write(`ready ${typeof address === 'object' && address ? address.port : ''}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void app.close().finally(() => process.exit(0)));
}
