import { isIP } from 'node:net';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** Events whose origin header proved they came through CloudFront (set by throughCloudFront, shared/platform/http/middleware.ts). */
const throughCloudFront = new WeakSet<APIGatewayProxyEventV2>();

/** Marks an event as proved to come through CloudFront: its CloudFront-Viewer-Address is then CloudFront's, not the client's. */
export function markThroughCloudFront(event: APIGatewayProxyEventV2): void {
  throughCloudFront.add(event);
}

/** The header CloudFront adds, where its origin request policy asks, with the viewer's address and port. */
export const VIEWER_ADDRESS_HEADER = 'cloudfront-viewer-address';

/**
 * The address in a CloudFront-Viewer-Address header: `198.51.100.10:46532`, or an IPv6 address
 * followed by `:<port>` (the port is after the last colon; brackets, should they come, are dropped).
 */
export function viewerAddress(header: string | undefined): string | undefined {
  const colon = header?.lastIndexOf(':') ?? -1;
  if (!header || colon <= 0) return undefined;
  const address = header
    .slice(0, colon)
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  return isIP(address) ? address : undefined;
}

/**
 * The address a request came from, as rate limits key it. Behind CloudFront, API Gateway's source
 * IP is an edge server's, so it is the viewer's from CloudFront-Viewer-Address, but only for a
 * request proved to come through CloudFront: anyone can send that header to the API directly.
 */
export function clientAddress(event: APIGatewayProxyEventV2): string {
  if (throughCloudFront.has(event)) {
    const viewer = viewerAddress(event.headers?.[VIEWER_ADDRESS_HEADER]);
    if (viewer) return viewer;
  }
  return event.requestContext?.http?.sourceIp ?? 'unknown';
}
