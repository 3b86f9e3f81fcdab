/**
 * The twin's queue consumers in a process of their own: what AWS runs apart from the API's
 * instances (the event source mappings and the consumer functions). Started by the twin.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { DELIVER_TWICE_ENV, QUEUES_ENV, RUNTIME_ENV, startConsumers } from './queue-consumers';

const env = z
  .object({ AWS_ENDPOINT_URL: z.url(), AWS_REGION: z.string(), [QUEUES_ENV]: z.string(), [RUNTIME_ENV]: z.string(), [DELIVER_TWICE_ENV]: z.enum(['true', 'false']).default('false') })
  .parse(process.env);
const sqs = new SQSClient({ region: env.AWS_REGION, endpoint: env.AWS_ENDPOINT_URL });
const consumers = startConsumers(JSON.parse(env[QUEUES_ENV]), sqs, JSON.parse(env[RUNTIME_ENV]), env[DELIVER_TWICE_ENV] === 'true');
process.stdout.write('ready\n');

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void consumers.stop().finally(() => process.exit(0)));
}
