import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readyLine, spawnService, type Spawned } from '../../infra/twin/services/processes';
import { SES_MAX_MESSAGE_BYTES } from '../../infra/twin/events/smtp';
import { sesMessageId } from '../support/mail';

const s3 = new S3Client({
  region: process.env.AWS_REGION,
  endpoint: process.env.AWS_ENDPOINT_URL,
  forcePathStyle: true,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

describe("the emulator's S3", () => {
  const key = `${process.env.RAW_MAIL_PREFIX}${sesMessageId()}`;
  // 40 MB the emulator holds in memory for every later test in this run otherwise.
  afterAll(() => s3.send(new DeleteObjectCommand({ Bucket: process.env.RAW_MAIL_BUCKET, Key: key })));

  it("stores a raw message of SES's largest size, as the SMTP listener puts it", async () => {
    // Prepare
    const raw = Buffer.alloc(SES_MAX_MESSAGE_BYTES, 'x');

    // Act
    await s3.send(new PutObjectCommand({ Bucket: process.env.RAW_MAIL_BUCKET, Key: key, Body: raw, ContentType: 'message/rfc822' }));

    // Assess
    const stored = await s3.send(new HeadObjectCommand({ Bucket: process.env.RAW_MAIL_BUCKET, Key: key }));
    expect(stored.ContentLength).toBe(SES_MAX_MESSAGE_BYTES);
  });
});

describe("the emulator's SQS", () => {
  it("takes a message of a queue's default largest size (1 MiB, as SQS's), and refuses one byte more", async () => {
    // Prepare
    const sqs = new SQSClient({
      region: process.env.AWS_REGION,
      endpoint: process.env.AWS_ENDPOINT_URL,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `size-${process.pid}-${Date.now()}` }));
    const LARGEST = 1_048_576;

    // Act
    const at = await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x'.repeat(LARGEST) }));
    const past = sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x'.repeat(LARGEST + 1) }));

    // Assess
    expect(at.MessageId).toBeDefined();
    await expect(past).rejects.toThrow();
  });
});

describe("the emulator's count of SQS requests as billed", () => {
  let emulator: Spawned;
  let url: string;
  const dir = mkdtempSync(join(tmpdir(), 'surge-emulator-'));

  beforeAll(async () => {
    // One of its own: the suite's emulator counts every test file's calls at once.
    const logFile = join(dir, 'emulator.log');
    emulator = spawnService(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../../infra/twin/services/emulator.ts', import.meta.url))], logFile, {
      ...process.env,
      EMULATOR_PORT: '0',
    });
    url = `http://127.0.0.1:${(await readyLine(emulator, /ready (\d+)/, logFile))[1]}`;
  });
  afterAll(async () => {
    await emulator?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // The path's constant is in emulator.ts, which starts an emulator when imported.
  const billed = async () => ((await (await fetch(`${url}/__twin/stats`)).json()) as { sqsBilledRequests: number }).sqsBilledRequests;

  it('bills a request per 64 KB chunk of what a call sends or gets back', async () => {
    // Prepare
    const sqs = new SQSClient({ region: 'us-east-1', endpoint: url, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'billed' }));
    const before = await billed();

    // Act: a small message, then one of 100 KB sent and received
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'small' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x'.repeat(100 * 1024) }));
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));

    // Assess: 1 for the small send, 2 for the large one, 2 for a receive that returns it (and the small one)
    expect(received.Messages).toHaveLength(2);
    expect((await billed()) - before).toBe(1 + 2 + 2);
    sqs.destroy();
  });
});
