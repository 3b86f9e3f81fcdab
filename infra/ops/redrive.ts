/**
 * `npm run redrive [-- aws [--stage dev|prod] [--legacy-names]] [--queue reservations] [--wait-s 300]`
 *
 * Moves every message of a queue's dead-letter queue back to the queue, to be consumed again once
 * what failed them is fixed. Against the running twin by default, whose emulator lacks SQS's
 * StartMessageMoveTask: its messages are received and sent back by hand. With `aws`, against the
 * account and region of the AWS CLI's environment: SQS moves them itself (a message move task),
 * waited for at most --wait-s; the queues are the stage's (`surge-<stage>-…`, dev unless --stage
 * says), or with --legacy-names those of a stack deployed before names had a stage (`surge-…`).
 * Prints one JSON line: {queue, how, moved}.
 */
import { parseArgs } from 'node:util';
import { GetQueueAttributesCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { queueNamesOf, queues, type QueueName } from '../../functions/table';
import { sqs } from '../../shared/platform/clients/sqs';
import { messageMoveTask, receiveAndSend } from '../../shared/platform/queue/redrive';
import { namePrefixOf, STAGES, type Stage } from '../stack/stage';
import { readRunningTwin, twinEnvironment } from '../twin/running';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    queue: { type: 'string', default: 'reservations' },
    'wait-s': { type: 'string', default: '300' },
    stage: { type: 'string', default: 'dev' },
    'legacy-names': { type: 'boolean', default: false },
  },
});
const target = positionals[0] ?? 'twin';
const spec = queues[values.queue as QueueName];
if (!['twin', 'aws'].includes(target) || !spec || !STAGES.includes(values.stage as Stage)) {
  process.stderr.write(
    `usage: npm run redrive [-- aws [--stage ${STAGES.join('|')}] [--legacy-names]] [--queue ${Object.keys(queues).join('|')}] [--wait-s 300]\n`,
  );
  process.exit(2);
}
if (target === 'twin') {
  const twin = readRunningTwin();
  if (!twin) throw new Error('No twin is running here (npm start); for a deployed stack: npm run redrive -- aws');
  Object.assign(process.env, twinEnvironment(twin));
}

async function located(name: string) {
  const { QueueUrl } = await sqs().send(new GetQueueUrlCommand({ QueueName: name }));
  const { Attributes } = await sqs().send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  return { url: QueueUrl!, arn: Attributes!.QueueArn! };
}

const names = queueNamesOf(values.queue as QueueName, target === 'aws' ? namePrefixOf(values.stage as Stage, values['legacy-names']) : undefined);
const redrive = { deadLetter: await located(names.deadLetter), queue: await located(names.queue) };
const result = target === 'aws' ? await messageMoveTask(sqs(), redrive, Number(values['wait-s']) * 1000) : await receiveAndSend(sqs(), redrive);
process.stdout.write(`${JSON.stringify({ queue: names.queue, ...result })}\n`);
