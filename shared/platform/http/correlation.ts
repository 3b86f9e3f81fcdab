import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** A caller may name its request with this header; the id then follows the request into the writer's logs. */
export const CORRELATION_HEADER = 'x-correlation-id';

/** What a given id may be: short, and safe in a log line and a message attribute. */
const VALID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's correlation id: the caller's `x-correlation-id` when it is a valid one, otherwise
 * API Gateway's request id (what its access log records), so every request has one.
 */
export function correlationIdOf(event: APIGatewayProxyEventV2): string {
  const given = event.headers[CORRELATION_HEADER];
  return given !== undefined && VALID.test(given) ? given : event.requestContext.requestId;
}
