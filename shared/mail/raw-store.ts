import { getObject } from '../platform/clients/s3';
import { ObjectMissing, ObjectTooLarge } from '../platform/clients/s3-objects';
import { MailRejected } from './rejection';

/**
 * Reads a raw message that SES's S3 action stored, never more than maxBytes of it: a larger object
 * is refused by its length before any body is read, and a body that runs past it is cut off.
 */
export async function readRawMail(bucket: string, key: string, maxBytes: number): Promise<Buffer> {
  try {
    return await getObject(bucket, key, maxBytes);
  } catch (error) {
    if (error instanceof ObjectMissing) throw new MailRejected('raw-message-missing', `No raw message at ${key}`);
    if (error instanceof ObjectTooLarge) {
      const size = error.bytes === undefined ? `over ${maxBytes} bytes` : `${error.bytes} bytes; at most ${maxBytes} are accepted`;
      throw new MailRejected('too-large', `The message has ${size}`);
    }
    throw error;
  }
}
