import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { SES_MAX_MESSAGE_BYTES } from '../../infra/twin/smtp';
import { sesMessageId } from '../support/mail';

const s3 = new S3Client({ region: process.env.AWS_REGION, endpoint: process.env.AWS_ENDPOINT_URL, forcePathStyle: true, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

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
