import { awsClientOptions } from './aws';
import { createObjectReader } from './s3-objects';

/** Reads S3 objects: on AWS by virtual-hosted address, in the twin from its emulator, path-style. */
export const getObject = createObjectReader(awsClientOptions);
