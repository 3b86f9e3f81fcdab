import { once } from '../once';
import { awsClientOptions } from './aws';
import { createObjectReader } from './s3-objects';

const reader = once(() => createObjectReader(awsClientOptions()));

/** Reads S3 objects: on AWS by virtual-hosted address, in the twin from its emulator, path-style. */
export const getObject = (bucket: string, key: string, maxBytes: number): Promise<Buffer> => reader()(bucket, key, maxBytes);
