import { SQSClient } from '@aws-sdk/client-sqs';
import { awsClientOptions } from './aws';

export const sqs = new SQSClient({ ...awsClientOptions, maxAttempts: 2 });
