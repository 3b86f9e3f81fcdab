import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ESBUILD_OPTIONS } from '../../infra/bundling';
import { sesMessageId, storeRawMail } from '../support/mail';
import { queueWithDeadLetters, testSqs } from '../support/queues';

const root = resolve(import.meta.dirname, '../..');

/** Sends one message with the shared SQS client and prints a raw mail read with the shared S3 one. */
const ENTRY = `
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs } from './shared/platform/clients/sqs';
import { readRawMail } from './shared/mail/raw-store';
const [queueUrl, key] = process.argv.slice(2);
await sqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'sent from a bundle' }));
process.stdout.write(await readRawMail(process.env.RAW_MAIL_BUCKET, key, 1_000_000));
`;

async function bundleEntry() {
  const outfile = join(mkdtempSync(join(tmpdir(), 'surge-bundle-')), 'index.mjs');
  const result = await build({ ...ESBUILD_OPTIONS, stdin: { contents: ENTRY, resolveDir: root, loader: 'ts' }, outfile, metafile: true });
  return { outfile, inputs: Object.keys(result.metafile.inputs) };
}

describe('AWS SDK clients bundled into a function', () => {
  it('send and read with the credentials Lambda puts in the environment, without the rest of the chain', async () => {
    // Prepare
    const sqs = testSqs();
    const queue = await queueWithDeadLetters(sqs, 5);
    const key = sesMessageId();
    await storeRawMail(key, 'Subject: bundled\r\n\r\nhello');
    const { outfile, inputs } = await bundleEntry();

    // Act
    const { stdout } = await promisify(execFile)(process.execPath, [outfile, queue.url, `${process.env.RAW_MAIL_PREFIX}${key}`], { env: process.env });

    // Assess
    expect(stdout).toBe('Subject: bundled\r\n\r\nhello');
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queue.url, WaitTimeSeconds: 1 }));
    expect(Messages?.map((m) => m.Body)).toEqual(['sent from a bundle']);
    expect(inputs.some((path) => path.includes('credential-provider-env'))).toBe(true);
    expect(inputs.filter((path) => /credential-provider-(node|ini|sso|process|web-identity)|nested-clients/.test(path))).toEqual([]);
  });

  it('fail at the first call, not with some other source of credentials, when the environment has none', async () => {
    // Prepare
    const { outfile } = await bundleEntry();
    const { AWS_ACCESS_KEY_ID: _id, AWS_SECRET_ACCESS_KEY: _secret, ...withoutCredentials } = process.env;

    // Act
    const run = promisify(execFile)(process.execPath, [outfile, 'http://127.0.0.1:1/none', 'none'], { env: { ...withoutCredentials, HOME: tmpdir() } });

    // Assess
    await expect(run).rejects.toThrow(/Unable to find environment variable credentials/);
  });
});
