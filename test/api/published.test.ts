/**
 * What the API publishes about itself: GET /openapi.json answers the document as built from the
 * table and the entries, and GET /docs a page that carries its renderer whole, loads nothing from
 * another host, and, opened in headless Chromium (Debian's), shows every route of the table.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functions } from '../../functions/table';
import { buildFunctionBundle } from '../../infra/bundling';
import { openApiDocument } from '../../infra/openapi/document';
import { writeApiFiles } from '../../infra/openapi/files';
import { httpEvent, lambdaContext } from '../support/events';
import { route } from '../support/routes';

const getApiDocs = await route('get-api-docs');
const getApiDocument = await route('get-api-document');

const CHROMIUM = '/usr/bin/chromium';
const root = fileURLToPath(new URL('../..', import.meta.url));

const routes = functions.flatMap((spec) => (spec.trigger.kind === 'http' ? [{ id: spec.id, method: spec.trigger.method, path: spec.trigger.path }] : []));

type Handler = (event: ReturnType<typeof httpEvent>, context: ReturnType<typeof lambdaContext>) => Promise<APIGatewayProxyStructuredResultV2>;
const get = (handler: Handler, path: string) => handler(httpEvent('get-me', { path, cookies: [] }), lambdaContext());

/** Where a page would load something from another host: an attribute or a CSS url() naming one. */
const EXTERNAL = /(?:\b(?:src|href|action)\s*=\s*["']?|url\(\s*["']?|@import\s+["'])(?:https?:)?\/\//gi;

describe('the published API description', () => {
  // As the twin does as it starts: the files source mode reads, built from the sources as they are.
  beforeAll(() => writeApiFiles(join(root, 'dist')));

  it('GET /openapi.json answers the document as built from the table and the entries', async () => {
    // Act
    const answer = await get(getApiDocument as Handler, '/openapi.json');

    // Assess
    expect(answer.statusCode).toBe(200);
    expect(answer.headers?.['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body!)).toEqual(JSON.parse(JSON.stringify(await openApiDocument())));
  });

  it('GET /docs answers one HTML page with its renderer inlined, which reads the document beside it and names no other host', async () => {
    // Act
    const answer = await get(getApiDocs as Handler, '/docs');

    // Assess
    expect(answer.statusCode).toBe(200);
    expect(answer.headers?.['content-type']).toMatch(/^text\/html/);
    const page = answer.body!;
    expect(page).toMatch(/SwaggerUIBundle\(\{ url: 'openapi\.json'/);
    expect(page.length).toBeGreaterThan(500_000);
    expect(page.match(EXTERNAL) ?? []).toEqual([]);
    // Nothing loaded from a URL: its icon is inline too, so no /favicon.ico is asked for (a 404 in the console).
    expect(page).not.toMatch(/<script[^>]*\ssrc=|<link[^>]*\shref="(?!data:)/i);
    expect(page).toMatch(/<link rel="icon" href="data:image\/svg\+xml,/);
  });

  it('each serving bundle carries the file it serves, built beside its index.mjs, and serves that one', async () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'surge-published-'));
    try {
      // Act: built as `cdk deploy` and the twin's --bundles build them.
      const document = await buildFunctionBundle(root, functions.find((f) => f.id === 'get-api-document')!, join(dir, 'document'));
      const docs = await buildFunctionBundle(root, functions.find((f) => f.id === 'get-api-docs')!, join(dir, 'docs'));
      const served = await get((await import(document.outfile)).handler as Handler, '/openapi.json');
      const page = await get((await import(docs.outfile)).handler as Handler, '/docs');

      // Assess
      expect(JSON.parse(served.body!)).toEqual(JSON.parse(JSON.stringify(await openApiDocument())));
      expect(served.body).toBe(readFileSync(join(dir, 'document', 'openapi.json'), 'utf8'));
      expect(page.body).toBe(readFileSync(join(dir, 'docs', 'docs.html'), 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  describe.skipIf(!existsSync(CHROMIUM))('opened in headless Chromium', () => {
    let server: Server;
    let origin: string;

    beforeAll(async () => {
      // The two routes as the twin's gateway serves them: each request to its function.
      const byPath: Record<string, Handler> = { '/docs': getApiDocs as Handler, '/openapi.json': getApiDocument as Handler };
      server = createServer((request, response) => {
        const handler = byPath[new URL(request.url!, 'http://x').pathname];
        if (!handler) return void response.writeHead(404).end();
        void get(handler, request.url!).then((answer) => response.writeHead(answer.statusCode!, answer.headers as Record<string, string>).end(answer.body));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('shows every route of the table, having asked nothing of another host', async () => {
      // Prepare
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
      const elsewhere: string[] = [];
      try {
        const page = await browser.newPage();
        // Anything for another origin is refused and noted: the page must not need it.
        await page.route('**/*', (route) =>
          route.request().url().startsWith(origin) ? route.continue() : (elsewhere.push(route.request().url()), route.abort()),
        );

        // Act
        await page.goto(`${origin}/docs`);
        await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });
        const shown = await page.$$eval('.opblock', (blocks) =>
          blocks.map(
            (block) =>
              `${block.querySelector('.opblock-summary-method')?.textContent ?? ''} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''}`,
          ),
        );

        // Assess
        expect(shown.sort()).toEqual(routes.map((route) => `${route.method} ${route.path}`).sort());
        expect(elsewhere).toEqual([]);
      } finally {
        await browser.close();
      }
    }, 60_000);
  });
});
