import { SQSClient } from '@aws-sdk/client-sqs';
import { awsEnv, readEnv } from '../config';
import { once } from '../once';
import { awsClientOptions } from './aws';

export const sqs = once(() => {
  // Passed explicitly: the SDK reads AWS_ENDPOINT_URL_SQS itself only when no endpoint is given, and the twin gives one.
  const { AWS_ENDPOINT_URL_SQS } = readEnv(awsEnv);
  return new SQSClient({ ...awsClientOptions(), ...(AWS_ENDPOINT_URL_SQS ? { endpoint: AWS_ENDPOINT_URL_SQS } : {}), maxAttempts: 2 });
});
