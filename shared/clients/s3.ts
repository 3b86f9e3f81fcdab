import { S3Client } from '@aws-sdk/client-s3';
import { awsClientOptions, usesEmulator } from './aws';

// The emulator has no wildcard DNS on loopback, so bucket names go in the path there.
export const s3 = new S3Client({ ...awsClientOptions, forcePathStyle: usesEmulator });
