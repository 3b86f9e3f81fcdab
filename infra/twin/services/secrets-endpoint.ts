import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The twin's stand-in for Secrets Manager, served by the emulator at the same endpoint as SQS and
 * S3 (AWS's JSON 1.1 protocol, told apart by its X-Amz-Target): GetSecretValue as the functions
 * call it at cold start, CreateSecret and PutSecretValue as the twin and its tests provision and
 * rotate. A request must be SigV4-signed for secretsmanager, as the endpoint would insist.
 */
const secrets = new Map<string, { value: string; version: number }>();

const SIGNED_FOR_SECRETS_MANAGER =
  /^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/[a-z0-9-]+\/secretsmanager\/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$/;

export const isSecretsManagerRequest = (headers: IncomingMessage['headers']) => String(headers['x-amz-target'] ?? '').startsWith('secretsmanager.');

function answer(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));
}

const failure = (type: string, message: string) => ({ __type: type, message });

export function serveSecretsManager(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (!SIGNED_FOR_SECRETS_MANAGER.test(String(req.headers.authorization ?? ''))) {
      answer(res, 400, failure('UnrecognizedClientException', 'The security token included in the request is invalid.'));
      return;
    }
    let input: { SecretId?: string; Name?: string; SecretString?: string };
    try {
      input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      answer(res, 400, failure('SerializationException', 'The request body is not JSON'));
      return;
    }
    const action = String(req.headers['x-amz-target']).slice('secretsmanager.'.length);
    const id = input.SecretId ?? input.Name ?? '';
    const known = secrets.get(id);
    switch (action) {
      case 'GetSecretValue':
        if (!known) return answer(res, 400, failure('ResourceNotFoundException', "Secrets Manager can't find the specified secret."));
        return answer(res, 200, { ARN: arnOf(id), Name: id, SecretString: known.value, VersionId: String(known.version), VersionStages: ['AWSCURRENT'] });
      case 'CreateSecret':
      case 'PutSecretValue': {
        if (typeof input.SecretString !== 'string') return answer(res, 400, failure('InvalidParameterException', 'SecretString is required'));
        if (action === 'CreateSecret' && known) return answer(res, 400, failure('ResourceExistsException', 'The secret already exists.'));
        if (action === 'PutSecretValue' && !known)
          return answer(res, 400, failure('ResourceNotFoundException', "Secrets Manager can't find the specified secret."));
        const version = (known?.version ?? 0) + 1;
        secrets.set(id, { value: input.SecretString, version });
        return answer(res, 200, { ARN: arnOf(id), Name: id, VersionId: String(version) });
      }
      default:
        return answer(res, 400, failure('InvalidAction', `The twin does not serve secretsmanager.${action}`));
    }
  });
}

const arnOf = (id: string) => (id.startsWith('arn:') ? id : `arn:aws:secretsmanager:us-east-1:000000000000:secret:${id}`);
