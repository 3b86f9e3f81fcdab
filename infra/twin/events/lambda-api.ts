/**
 * Lambda's Invoke API for the twin's functions (`POST /2015-03-31/functions/{name}/invocations`),
 * so an operator's tool that invokes a function on AWS runs the same calls against the twin (`npm
 * run redrive -- --failed-mail`). Written here because no emulator can run the twin's functions.
 * Synchronous invocations only (RequestResponse, DryRun); a function is named as on AWS, by name
 * or ARN, `surge-<id>`. The signature is not checked, as the emulator checks none.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { capped, Throttled } from '../lambda/concurrency';
import { FunctionError } from '../lambda/lambda';
import { readBody } from './gateway';
import type { FunctionRunner } from '../lambda/runners';

/** Lambda's limit on a synchronous invocation's payload. */
export const SYNC_PAYLOAD_MAX_BYTES = 6 * 1024 * 1024;

const INVOCATIONS = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
/** `surge-<id>`, or its ARN with an optional qualifier (the twin has only $LATEST). */
const FUNCTION_NAME = /^(?:arn:aws:lambda:[a-z0-9-]+:\d{12}:function:)?surge-([a-z0-9-]+)(?::\$LATEST)?$/;

export interface LambdaApi {
  url: string;
  close(): Promise<void>;
}

/** Lambda's error answer: its type in x-amzn-ErrorType (where the SDK reads it) and the body. */
function refuse(response: ServerResponse, status: number, type: string, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
  response.end(JSON.stringify({ Type: 'User', message }));
}

/** What the Node.js runtime answers for a function that threw: its error's type and message. */
function functionErrorPayload(error: FunctionError) {
  // The handler's error itself in source mode, its name and message as a bundle's thread posted them otherwise.
  const cause = (error.cause ?? {}) as { name?: unknown };
  return { errorType: typeof cause.name === 'string' ? cause.name : 'Error', errorMessage: error.message };
}

/**
 * Serves the Invoke API on `port` (0: any free one) for these functions, each held to its
 * concurrency cap as a synchronous caller is (TooManyRequestsException at it).
 */
export async function startLambdaApi(port: number, runners: Map<string, FunctionRunner>): Promise<LambdaApi> {
  const invokers = new Map([...runners].map(([id, runner]) => [id, capped(runner.spec, (event: unknown) => runner.invoke(event), 'refuse')]));

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://lambda');
    const path = INVOCATIONS.exec(url.pathname);
    if (request.method !== 'POST' || !path) return refuse(response, 404, 'UnknownOperationException', `No operation at ${request.method} ${url.pathname}`);
    const name = decodeURIComponent(path[1]!);
    const invoke = invokers.get(FUNCTION_NAME.exec(name)?.[1] ?? '');
    if (!invoke) return refuse(response, 404, 'ResourceNotFoundException', `Function not found: ${name}`);
    const type = request.headers['x-amz-invocation-type'] ?? 'RequestResponse';
    if (type !== 'RequestResponse' && type !== 'DryRun') {
      return refuse(response, 400, 'InvalidParameterValueException', `The twin invokes synchronously only (RequestResponse, DryRun), not ${type}`);
    }
    const payload = await readBody(request, SYNC_PAYLOAD_MAX_BYTES);
    if (!payload)
      return refuse(response, 413, 'RequestTooLargeException', `Request must be smaller than ${SYNC_PAYLOAD_MAX_BYTES} bytes for the InvokeFunction operation`);
    let event: unknown;
    try {
      event = payload.length === 0 ? {} : JSON.parse(payload.toString('utf8'));
    } catch {
      return refuse(response, 400, 'InvalidRequestContentException', 'Could not parse request body into json');
    }
    if (type === 'DryRun') {
      response.writeHead(204).end();
      return;
    }
    const headers = { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' };
    try {
      const result = await invoke(event);
      response.writeHead(200, headers).end(result === undefined ? 'null' : JSON.stringify(result));
    } catch (error) {
      if (error instanceof Throttled) return refuse(response, 429, 'TooManyRequestsException', 'Rate Exceeded.');
      if (!(error instanceof FunctionError)) throw error;
      response.writeHead(200, { ...headers, 'x-amz-function-error': 'Unhandled' }).end(JSON.stringify(functionErrorPayload(error)));
    }
  }

  const server = createServer((request, response) => {
    serve(request, response).catch((error: Error) => {
      if (!response.headersSent) refuse(response, 500, 'ServiceException', error.message);
      else response.destroy(error);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
