import { SQSClient } from '@aws-sdk/client-sqs';
import { once } from '../once';
import { awsClientOptions } from './aws';

export const sqs = once(() => new SQSClient({ ...awsClientOptions(), maxAttempts: 2 }));
