import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/**
 * The address a request came from, as rate limits key it: API Gateway's source IP. (Behind
 * CloudFront this becomes the viewer's address, from the CloudFront-Viewer-Address header of a
 * request proved to come through CloudFront.)
 */
export function clientAddress(event: APIGatewayProxyEventV2): string {
  return event.requestContext?.http?.sourceIp ?? 'unknown';
}
