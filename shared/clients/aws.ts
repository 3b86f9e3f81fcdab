import { awsEnv, readEnv } from '../config';

const { AWS_REGION, AWS_ENDPOINT_URL } = readEnv(awsEnv);

/** Options shared by every AWS SDK client: the twin points them at its emulator explicitly. */
export const awsClientOptions = {
  region: AWS_REGION,
  ...(AWS_ENDPOINT_URL ? { endpoint: AWS_ENDPOINT_URL } : {}),
};
