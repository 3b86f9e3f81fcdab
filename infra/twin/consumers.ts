/**
 * The twin's queue consumers in a process of their own: what AWS runs apart from the API's
 * instances (the event source mappings and the consumer functions). Started by the twin.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { createServer } from 'node:http';
import { z } from 'zod';
import { INVOCATIONS_PATH, invocationCounts } from './lambda/invocations';
import { DELIVER_TWICE_ENV, QUEUES_ENV, RUNTIME_ENV, startConsumers } from './queue-consumers';

const env = z
  .object({
    AWS_ENDPOINT_URL: z.url(),
    AWS_REGION: z.string(),
    [QUEUES_ENV]: z.string(),
    [RUNTIME_ENV]: z.string(),
    [DELIVER_TWICE_ENV]: z.enum(['true', 'false']).default('false'),
  })
  .parse(process.env);
const sqs = new SQSClient({ region: env.AWS_REGION, endpoint: env.AWS_ENDPOINT_URL });
const consumers = startConsumers(JSON.parse(env[QUEUES_ENV]), sqs, JSON.parse(env[RUNTIME_ENV]), env[DELIVER_TWICE_ENV] === 'true');

// What its functions' invocations would cost, counted here where they run, for the twin to pass
// on at its own GET /__twin/invocations; on loopback, at the port the ready line names.
const stats = createServer((req, res) => {
  const found = req.method === 'GET' && req.url === INVOCATIONS_PATH;
  res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
  res.end(found ? JSON.stringify(invocationCounts()) : '{"message":"Not Found"}');
});
await new Promise<void>((resolve) => stats.listen(0, '127.0.0.1', resolve));
// unref'd: the stop below decides when this process ends.
stats.unref();
const address = stats.address();
process.stdout.write(`ready ${typeof address === 'object' && address ? address.port : ''}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void consumers.stop().finally(() => process.exit(0)));
}
