import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/**
 * The header CloudFront's viewer-request function sets to the host the client asked for (the
 * distribution's, or its alias): API Gateway is reached at its own host, so Host says nothing of
 * the one the client knows. The function overwrites whatever a client sent (infra/stack/edge.ts).
 */
export const VIEWER_HOST_HEADER = 'x-forwarded-host';

const HOST = /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:\d{1,5})?$/;

/**
 * The API's address as its client reached it, e.g. https://api.example.com, for links a client
 * follows later (feed URLs). API Gateway says https in X-Forwarded-Proto; the twin, plain HTTP,
 * says nothing. A host that is not a host name falls back to the one API Gateway saw.
 */
export function publicBaseUrl(event: APIGatewayProxyEventV2): string {
  const headers = event.headers ?? {};
  const proto = headers['x-forwarded-proto'] === 'https' ? 'https' : 'http';
  const host =
    [headers[VIEWER_HOST_HEADER], headers.host, event.requestContext.domainName].find((candidate) => candidate !== undefined && HOST.test(candidate)) ??
    'localhost';
  return `${proto}://${host}`;
}
