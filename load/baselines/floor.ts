/**
 * The floor a read path is held to: behind the same gateway as the path, with no middleware, one
 * Redis GET of a key as large as what the path reads, answered with a body as large as the path's
 * (`GET /__baseline/floor?key=…&body=…`; the bench sets the key beforehand, support/floor.ts).
 * What no implementation of the path can do without: the gateway's ceiling is the same with no
 * store call at all.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { redis } from '../../shared/platform/clients/redis';

const bodies = new Map<number, string>();
/** A JSON body of about `bytes` bytes, built once per size. */
const bodyOf = (bytes: number): string => {
  let body = bodies.get(bytes);
  if (body === undefined) bodies.set(bytes, (body = bytes > 0 ? JSON.stringify({ value: 'x'.repeat(Math.max(0, bytes - 12)) }) : ''));
  return body;
};

export async function handler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const { key = '', body = '0' } = event.queryStringParameters ?? {};
  const value = await redis().get(key);
  if (value === null) return { statusCode: 404, body: '' };
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: bodyOf(Number(body)) };
}
