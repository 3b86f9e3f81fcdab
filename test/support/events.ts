import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';

export function fixture<T>(path: string): T {
  return JSON.parse(readFileSync(new URL(`../events/${path}`, import.meta.url), 'utf8')) as T;
}

/** An HTTP API payload 2.0 event built from a recorded-shape fixture, with the parts a test changes. */
export function httpEvent(
  name: 'post-sessions' | 'get-me',
  changes: {
    method?: string;
    path?: string;
    pathParameters?: Record<string, string>;
    body?: unknown;
    rawBody?: string;
    cookies?: string[];
    headers?: Record<string, string>;
    /** The client's address, as API Gateway reports it. */
    sourceIp?: string;
  } = {},
): APIGatewayProxyEventV2 {
  const event = fixture<APIGatewayProxyEventV2>(`apigw-http/${name}.json`);
  if (changes.method || changes.path) {
    const method = changes.method ?? event.requestContext.http.method;
    const path = changes.path ?? event.rawPath;
    event.rawPath = path;
    event.requestContext.http = { ...event.requestContext.http, method, path };
    event.routeKey = event.requestContext.routeKey = `${method} ${path}`;
  }
  if (changes.pathParameters) event.pathParameters = changes.pathParameters;
  if (changes.body !== undefined) event.body = JSON.stringify(changes.body);
  if (changes.rawBody !== undefined) event.body = changes.rawBody;
  if (changes.cookies) event.cookies = changes.cookies;
  if (changes.headers) event.headers = { ...event.headers, ...changes.headers };
  if (changes.sourceIp) event.requestContext.http = { ...event.requestContext.http, sourceIp: changes.sourceIp };
  return event;
}

/** A Lambda context whose deadline is `timeoutMs` from now: from when the invocation starts, as Lambda's is. */
export function lambdaContext(functionName = 'surge-test', timeoutMs = 10_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'test',
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
