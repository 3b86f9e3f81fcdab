import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { redis } from '../shared/clients/redis';
import { db } from '../shared/clients/mysql';
import { sqs } from '../shared/clients/sqs';
import { reservationQueueEnv, readEnv } from '../shared/config';
import { api } from '../shared/http/api';
import { json } from '../shared/http/response';

const { RESERVATION_QUEUE_URL } = readEnv(reservationQueueEnv);
const CHECK_TIMEOUT_MS = 1_500;

const checks = {
  redis: () => redis().ping(),
  database: () => db().query('SELECT 1'),
  queue: () => sqs().send(new GetQueueAttributesCommand({ QueueUrl: RESERVATION_QUEUE_URL, AttributeNames: ['QueueArn'] })),
};

async function probe(check: () => Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch (error) {
    return `down: ${(error as Error).message || (error as Error).name}`;
  } finally {
    clearTimeout(timer);
  }
}

export const handler = api({ access: 'public' }).handler(async () => {
  const names = Object.keys(checks) as (keyof typeof checks)[];
  const results = await Promise.all(names.map((name) => probe(checks[name])));
  const dependencies = Object.fromEntries(names.map((name, i) => [name, results[i]]));
  const down = names.filter((_, i) => results[i] !== 'ok');
  return json(down.length ? 503 : 200, { status: down.length ? 'unavailable' : 'ok', down, dependencies });
});
