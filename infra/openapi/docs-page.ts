/**
 * The docs page at `GET /docs`: Swagger UI (swagger-ui-dist, from npm) inlined into one HTML file
 * at build time, its script and styles in the page itself, so it loads nothing but the page and
 * the document it reads from `openapi.json` beside it (`/openapi.json`, under a stage's prefix too).
 * Nothing from a CDN; Swagger UI's online validator badge is turned off (validatorUrl: null).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const asset = (name: string) => readFileSync(join(dist, name), 'utf8');

/** Text put inside a <script> or <style> element, which must not close it early. */
const inline = (text: string, element: 'script' | 'style') => text.replace(new RegExp(`</${element}`, 'gi'), `<\\/${element}`);

/** A small lightning bolt, Surge's mark, as an inline SVG. */
const FAVICON = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M9 0 2 9h5l-1 7 7-9H8z" fill="#0b57d0"/></svg>')}`;

export function docsPage(title: string): string {
  const init = `window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#api', validatorUrl: null, deepLinking: true, docExpansion: 'list' });`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${title}</title>`,
    // Its own icon, inline: a browser asks for /favicon.ico otherwise, and the API has none (a 404 in the console).
    `<link rel="icon" href="${FAVICON}">`,
    `<style>${inline(asset('swagger-ui.css'), 'style')}</style>`,
    '</head>',
    '<body>',
    '<div id="api"></div>',
    `<script>${inline(asset('swagger-ui-bundle.js'), 'script')}</script>`,
    `<script>${init}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
