import { awsEnv, readEnv } from '../config';
import { once } from '../once';

/** Options shared by every AWS SDK client: the twin points them at its emulator explicitly. */
export const awsClientOptions = once(() => {
  const { AWS_REGION, AWS_ENDPOINT_URL } = readEnv(awsEnv);
  return { region: AWS_REGION, ...(AWS_ENDPOINT_URL ? { endpoint: AWS_ENDPOINT_URL } : {}) };
});
