import { GetObjectCommand, NoSuchKey } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { s3 } from '../clients/s3';
import { MailRejected } from './rejection';

/**
 * Reads a raw message that SES's S3 action stored, never more than maxBytes of it: a larger object
 * is refused by its length before any body is read, and a body that runs past it is cut off.
 */
export async function readRawMail(bucket: string, key: string, maxBytes: number): Promise<Buffer> {
  let object;
  try {
    object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  } catch (error) {
    if (error instanceof NoSuchKey) throw new MailRejected('raw-message-missing', `No raw message at ${key}`);
    throw error;
  }
  const body = object.Body as Readable;
  if ((object.ContentLength ?? 0) > maxBytes) {
    body.destroy();
    throw new MailRejected('too-large', `The message has ${object.ContentLength} bytes; at most ${maxBytes} are accepted`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      throw new MailRejected('too-large', `The message has over ${maxBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}
