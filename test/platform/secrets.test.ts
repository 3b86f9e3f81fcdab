import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { databaseCredentials, firstAdminCredentials } from '../../shared/platform/clients/credentials';
import { createSecretReader } from '../../shared/platform/clients/secrets';

let server: Server | undefined;
afterEach(() => server?.close());

/** A stand-in endpoint answering with the scripted responses in turn; counts the requests. */
async function endpoint(...answers: ((res: ServerResponse) => void)[]) {
  const seen = { requests: 0 };
  server = createServer((req, res) => {
    req.resume().on('end', () => answers[Math.min(seen.requests++, answers.length - 1)]!(res));
  });
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  const read = createSecretReader({
    region: 'eu-west-1',
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    credentials: async () => ({ accessKeyId: 'AKID', secretAccessKey: 'secret' }),
    maxAttempts: 3,
  });
  return { read, seen };
}

const json = (status: number, body: unknown) => (res: ServerResponse) =>
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));

describe('the Secrets Manager lookup', () => {
  it('tries again after throttling (a 400) and after an error page that is not JSON', async () => {
    // Prepare
    const { read, seen } = await endpoint(
      json(400, { __type: 'ThrottlingException', message: 'Rate exceeded' }),
      (res) => res.writeHead(502).end('<html>bad gateway</html>'),
      json(200, { SecretString: 'token' }),
    );

    // Act
    const value = await read('surge/redis-auth');

    // Assess
    expect(value).toBe('token');
    expect(seen.requests).toBe(3);
  });

  it('fails at once on an answer another attempt will not change', async () => {
    const { read, seen } = await endpoint(json(400, { __type: 'ResourceNotFoundException', message: 'no such secret' }));

    await expect(read('surge/missing')).rejects.toThrow(/400 ResourceNotFoundException/);
    expect(seen.requests).toBe(1);
  });
});

describe('reading a secret’s fields', () => {
  it('never quotes a secret that is not JSON in its error', () => {
    expect(() => databaseCredentials('s3cr3t-Passw0rd')).toThrow(/not a JSON object/);
    expect(() => databaseCredentials('s3cr3t-Passw0rd')).not.toThrow(/s3cr3t/);
    expect(() => firstAdminCredentials('{"email":"a@b.example"')).not.toThrow(/a@b/);
    expect(databaseCredentials('{"username":"surge","password":"p"}')).toEqual({ user: 'surge', password: 'p' });
  });
});
