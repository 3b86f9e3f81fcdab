import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api } from '../../shared/api/api';
import { clientAddress, markThroughCloudFront, viewerAddress } from '../../shared/platform/http/client-address';
import { json } from '../../shared/platform/http/response';
import * as z from '../../shared/platform/zod';
import { httpEvent, lambdaContext } from '../support/events';

const ORIGIN_SECRET = 'origin-secret-of-the-test';

// The origin secret as Secrets Manager would hand it to the function at cold start.
vi.mock('../../shared/platform/clients/secrets', () => ({ createSecretReader: () => async () => ORIGIN_SECRET }));

/** A public function that answers with the address it sees. */
/** A function's stack reads its environment at its first invocation: a stack of its own per call, as a fresh instance. */
const whoAmI = () =>
  api({ access: 'public', answers: { 200: z.object({ address: z.string() }) }, errors: [] }).handler(async (event) =>
    json(200, { address: clientAddress(event) }),
  );

const fromEdge = (headers: Record<string, string>): APIGatewayProxyEventV2 => {
  const event = httpEvent('get-me', { headers });
  event.requestContext.http.sourceIp = '130.176.1.1';
  return event;
};

describe('clientAddress', () => {
  it("reads the viewer's IPv4 and IPv6 address, without its port, from CloudFront-Viewer-Address", () => {
    expect(viewerAddress('198.51.100.10:46532')).toBe('198.51.100.10');
    expect(viewerAddress('2001:0db8:0000:0000:0000:ff00:0042:8329:46532')).toBe('2001:0db8:0000:0000:0000:ff00:0042:8329');
    expect(viewerAddress('2001:DB8::1:443')).toBe('2001:db8::1');
    expect(viewerAddress('[2001:db8::1]:443')).toBe('2001:db8::1');
  });

  it('takes nothing from a header that holds no address and port', () => {
    expect(viewerAddress(undefined)).toBeUndefined();
    expect(viewerAddress('198.51.100.10')).toBeUndefined();
    expect(viewerAddress('evil.example:80')).toBeUndefined();
    expect(viewerAddress(':443')).toBeUndefined();
  });

  it("is the viewer's address only for a request proved to come through CloudFront, API Gateway's source IP otherwise", () => {
    // Prepare
    const proved = fromEdge({ 'cloudfront-viewer-address': '2001:db8::7:51000' });
    const unproved = fromEdge({ 'cloudfront-viewer-address': '203.0.113.9:51000' });
    const malformed = fromEdge({ 'cloudfront-viewer-address': 'nonsense' });

    // Act
    markThroughCloudFront(proved);
    markThroughCloudFront(malformed);

    // Assess
    expect(clientAddress(proved)).toBe('2001:db8::7');
    expect(clientAddress(unproved)).toBe('130.176.1.1');
    expect(clientAddress(malformed)).toBe('130.176.1.1');
  });
});

describe('the CloudFront check of every route', () => {
  const invoke = async (headers: Record<string, string>) => {
    const result = await whoAmI()(fromEdge(headers), lambdaContext());
    return { status: result.statusCode, body: JSON.parse(result.body!) };
  };

  describe('with CloudFront in front (ORIGIN_SECRET_ID set)', () => {
    beforeEach(() => {
      process.env.ORIGIN_SECRET_ID = 'surge-origin-secret';
    });
    afterEach(() => {
      delete process.env.ORIGIN_SECRET_ID;
    });

    it("serves a request with the origin header, keyed by the viewer's address", async () => {
      const result = await invoke({ 'x-origin-verify': ORIGIN_SECRET, 'cloudfront-viewer-address': '198.51.100.10:46532' });

      expect(result).toEqual({ status: 200, body: { address: '198.51.100.10' } });
    });

    it('refuses with 403 and the usual error body a request whose origin header is missing or wrong', async () => {
      const missing = await invoke({ 'cloudfront-viewer-address': '198.51.100.10:46532' });
      const wrong = await invoke({ 'x-origin-verify': `${ORIGIN_SECRET}x` });

      for (const result of [missing, wrong]) {
        expect(result).toEqual({ status: 403, body: { error: { code: 'FORBIDDEN', message: 'Requests to this API go through its CloudFront distribution' } } });
      }
    });
  });

  it("checks nothing where nothing is in front, and keys by API Gateway's source IP", async () => {
    const result = await invoke({ 'cloudfront-viewer-address': '198.51.100.10:46532' });

    expect(result).toEqual({ status: 200, body: { address: '130.176.1.1' } });
  });
});
