/** The twin's secrets in the emulator's Secrets Manager. */
import { createSignedRequester, serviceLocation } from '../../shared/platform/clients/aws-http';
import { TWIN_REGION, TWIN_SECRETS } from './deployment';
import { demoAccounts } from './seed';
import type { StoreCredentials } from './stores';

/** Stores the twin's secrets in the emulator's Secrets Manager, as the stack's generated secrets are on AWS. */
export async function putSecrets(emulatorUrl: string, values: Record<string, string>): Promise<void> {
  const send = createSignedRequester({
    service: 'secretsmanager',
    region: TWIN_REGION,
    credentials: async () => ({ accessKeyId: 'local', secretAccessKey: 'local' }),
    uriEscapePath: true,
  });
  for (const [name, value] of Object.entries(values)) {
    for (const action of ['CreateSecret', 'PutSecretValue']) {
      const response = await send(serviceLocation('secretsmanager', TWIN_REGION, emulatorUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': `secretsmanager.${action}` },
        body: JSON.stringify({ Name: name, SecretId: name, SecretString: value }),
      });
      response.resume();
      if (response.statusCode === 200) break;
      if (action === 'PutSecretValue')
        throw new Error(`The twin could not store the secret ${name}: Secrets Manager's stand-in answered ${response.statusCode}`);
    }
  }
}

/** What the functions look up: AWS-like stores' credentials, and in bundle mode the first admin the deploy trigger creates. */
export async function putTwinSecrets(emulatorUrl: string, secure: StoreCredentials | undefined, bundles: boolean): Promise<void> {
  const demoAdmin = demoAccounts.find((account) => account.role === 'admin')!;
  await putSecrets(emulatorUrl, {
    ...(secure
      ? {
          [TWIN_SECRETS.database]: JSON.stringify({ username: secure.database.user, password: secure.database.password }),
          [TWIN_SECRETS.redisAuth]: secure.redisPassword,
        }
      : {}),
    // The demo admin, whom the seed also keeps, so on a fresh database the deploy trigger creates it as on AWS.
    ...(bundles ? { [TWIN_SECRETS.firstAdmin]: JSON.stringify({ email: demoAdmin.email, password: demoAdmin.password }) } : {}),
  });
}
