import { describe, expect, it } from 'vitest';
import { routesOfTable } from '../../infra/table-routes';
import { EDGE_BEHAVIOURS } from '../../infra/stack/edge';
import { originRequestsOf, pathPatternMatcher, type EdgeRoute } from '../../infra/stack/edge-requests';
import { requestReads } from '../../shared/api/api';

/** Every route of the table as the edge sees it. */
const tableRoutes = async (): Promise<EdgeRoute[]> =>
  (await routesOfTable()).map((route) => ({ id: route.spec.id, method: route.method, path: route.path, reads: requestReads(route.api) }));

const feedRoute = (reads: Partial<EdgeRoute['reads']>): EdgeRoute => ({
  id: 'get-feed-extra',
  method: 'GET',
  path: '/feeds/{token}/extra',
  reads: { headers: ['x-correlation-id'], cookies: [], queryStrings: [], ...reads },
});

describe("the edge's forwarding, derived from what the routes read", () => {
  it('forwards the orders route its Idempotency-Key and Waiting-Room-Pass, and a feed its conditional headers, never a cookie', async () => {
    // Act
    const [feeds, rest] = originRequestsOf(await tableRoutes(), EDGE_BEHAVIOURS);

    // Assess
    expect(rest!.headers).toEqual(
      expect.arrayContaining(['idempotency-key', 'waiting-room-pass', 'content-type', 'cloudfront-viewer-address', 'x-forwarded-host', 'x-correlation-id']),
    );
    expect(rest!.cookies).toEqual(['sid']);
    expect(rest!.routes.map((r) => r.id)).toContain('create-order');
    expect(feeds!.headers).toEqual(expect.arrayContaining(['if-none-match', 'if-modified-since']));
    expect(feeds!.cookies).toEqual([]);
    expect(feeds!.queryStrings).toEqual([]);
    expect(feeds!.routes.map((r) => r.id).sort()).toEqual(['get-atom-feed', 'get-feed-issue', 'get-json-feed']);
  });

  it('forwards a header as soon as a route’s schema reads it, to that route’s behaviour only', async () => {
    // Prepare
    const routes = await tableRoutes();
    const withHeader = routes.map((r) => (r.id === 'get-atom-feed' ? { ...r, reads: { ...r.reads, headers: [...r.reads.headers, 'Accept-Language'] } } : r));

    // Act
    const [feeds, rest] = originRequestsOf(withHeader, EDGE_BEHAVIOURS);

    // Assess
    expect(feeds!.headers).toContain('accept-language');
    expect(rest!.headers).not.toContain('accept-language');
  });

  it('fails the synth naming route, cookie and behaviour when a feed route reads a cookie, and likewise a query string', () => {
    expect(() => originRequestsOf([feedRoute({ cookies: ['sid'] })], EDGE_BEHAVIOURS)).toThrow(
      /route GET \/feeds\/\{token\}\/extra \(get-feed-extra\) is served by the behaviour FeedRequests, which forwards no cookie .* but it reads the cookie sid/,
    );
    expect(() => originRequestsOf([feedRoute({ queryStrings: ['since'] })], EDGE_BEHAVIOURS)).toThrow(
      /behaviour FeedRequests, which forwards no query string .* but it reads \?since/,
    );
  });

  it('fails the synth for a route its behaviour does not allow the method of, and past CloudFront’s 10 headers a policy', () => {
    expect(() => originRequestsOf([{ ...feedRoute({}), method: 'POST' }], EDGE_BEHAVIOURS)).toThrow('which does not allow POST');
    const many = Array.from({ length: 11 }, (_, i) => `x-read-${i}`);
    expect(() => originRequestsOf([feedRoute({ headers: many })], EDGE_BEHAVIOURS)).toThrow('would forward 11 headers');
    expect(() => originRequestsOf([feedRoute({ headers: many.slice(0, 10) })], EDGE_BEHAVIOURS)).not.toThrow();
  });

  it('matches paths as CloudFront does: a star crosses slashes, a question mark is one character, the rest is literal and case-sensitive', () => {
    expect(pathPatternMatcher('/feeds/*')('/feeds/t/atom/all')).toBe(true);
    expect(pathPatternMatcher('/feeds/*')('/feeds')).toBe(false);
    expect(pathPatternMatcher('/feeds/*')('/Feeds/t')).toBe(false);
    expect(pathPatternMatcher('*.jpg')('/images/a.jpg')).toBe(true);
    expect(pathPatternMatcher('/a?c')('/abc')).toBe(true);
    expect(pathPatternMatcher('/a?c')('/ac')).toBe(false);
    expect(pathPatternMatcher('/[a]/{b}')('/[a]/{b}')).toBe(true);
    expect(pathPatternMatcher('/[a]/{b}')('/a/b')).toBe(false);
  });
});
