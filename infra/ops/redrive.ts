/**
 * `npm run redrive [-- aws [--stage dev|prod] [--legacy-names]] [--queue reservations] [--wait-s 300]`
 * `npm run redrive -- [aws [--stage dev|prod] [--legacy-names]] --failed-mail`
 *
 * Moves every message of a queue's dead-letter queue back to the queue, to be consumed again once
 * what failed them is fixed. Against the running twin by default, whose emulator lacks SQS's
 * StartMessageMoveTask: its messages are received and sent back by hand. With `aws`, against the
 * account and region of the AWS CLI's environment: SQS moves them itself (a message move task),
 * waited for at most --wait-s; the queues are the stage's (`surge-<stage>-…`, dev unless --stage
 * says), or with --legacy-names those of a stack deployed before names had a stage (`surge-…`).
 * Prints one JSON line: {queue, how, moved}.
 *
 * With --failed-mail, invokes `receive-mail` again with the SES event of every record in its
 * on-failure destination (`…-receive-mail-failures`), through Lambda's Invoke API (the twin's
 * own, events/lambda-api.ts, against the twin), deleting each record once its invocation
 * succeeded. Prints {queue, function, reinvoked, failed, unreadable, errors}.
 */
import { parseArgs } from 'node:util';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { asyncFailuresQueueOf, functions, queueNamesOf, queues, type QueueName } from '../../functions/table';
import { sqs } from '../../shared/platform/clients/sqs';
import { messageMoveTask, receiveAndSend } from '../../shared/platform/queue/redrive';
import { functionNameOf } from '../stack/functions';
import { namePrefixOf, STAGES, type Stage } from '../stack/stage';
import { reinvokeFailures } from './reinvoke-failures';
import { readRunningTwin, twinEnvironment } from '../twin/running';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    queue: { type: 'string', default: 'reservations' },
    'wait-s': { type: 'string', default: '300' },
    stage: { type: 'string', default: 'dev' },
    'legacy-names': { type: 'boolean', default: false },
    'failed-mail': { type: 'boolean', default: false },
  },
});
const target = positionals[0] ?? 'twin';
const spec = queues[values.queue as QueueName];
if (!['twin', 'aws'].includes(target) || !spec || !STAGES.includes(values.stage as Stage)) {
  process.stderr.write(
    `usage: npm run redrive [-- aws [--stage ${STAGES.join('|')}] [--legacy-names]] [--queue ${Object.keys(queues).join('|')}] [--wait-s 300]\n` +
      `       npm run redrive -- [aws [--stage ${STAGES.join('|')}] [--legacy-names]] --failed-mail\n`,
  );
  process.exit(2);
}
const twin = target === 'twin' ? readRunningTwin() : undefined;
if (target === 'twin') {
  if (!twin) throw new Error('No twin is running here (npm start); for a deployed stack: npm run redrive -- aws');
  Object.assign(process.env, twinEnvironment(twin));
}

const namePrefix = target === 'aws' ? namePrefixOf(values.stage as Stage, values['legacy-names']) : undefined;

async function located(name: string) {
  const { QueueUrl } = await sqs().send(new GetQueueUrlCommand({ QueueName: name }));
  const { Attributes } = await sqs().send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  return { url: QueueUrl!, arn: Attributes!.QueueArn! };
}

if (values['failed-mail']) {
  // The twin's functions answer Lambda's Invoke API at an address of their own. Without it, the
  // client would take AWS_ENDPOINT_URL, the emulator's, which answers calls it does not know.
  if (twin && !twin.lambdaUrl) throw new Error('The running twin serves no Lambda Invoke API (it predates it): restart it (npm start)');
  const lambda = new LambdaClient(twin ? { region: process.env.AWS_REGION!, endpoint: twin.lambdaUrl } : {});
  for (const mailFunction of functions.filter((f) => f.trigger.kind === 'ses')) {
    const queue = asyncFailuresQueueOf(mailFunction.id, namePrefix);
    const functionName = functionNameOf(namePrefix ?? 'surge', mailFunction);
    const result = await reinvokeFailures(sqs(), lambda, {
      queueUrl: (await located(queue)).url,
      functionName,
      timeoutSeconds: mailFunction.timeoutSeconds,
    });
    process.stdout.write(`${JSON.stringify({ queue, function: functionName, ...result })}\n`);
  }
} else {
  const names = queueNamesOf(values.queue as QueueName, namePrefix);
  const redrive = { deadLetter: await located(names.deadLetter), queue: await located(names.queue) };
  const result = target === 'aws' ? await messageMoveTask(sqs(), redrive, Number(values['wait-s']) * 1000) : await receiveAndSend(sqs(), redrive);
  process.stdout.write(`${JSON.stringify({ queue: names.queue, ...result })}\n`);
}
