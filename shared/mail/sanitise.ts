import sanitizeHtml from 'sanitize-html';

/** Remote images stay out until a reader asks for them: loading one tells the sender the mail was opened. */
export const REMOTE_IMAGE_ATTRIBUTE = 'data-remote-src';

/** The properties a style attribute may keep. */
const STYLE_PROPERTIES = new Set([
  'color',
  'background-color',
  'font-size',
  'font-weight',
  'font-style',
  'font-family',
  'text-align',
  'text-decoration',
  'line-height',
  'padding',
  'margin',
  'width',
  'max-width',
  'border',
  'vertical-align',
]);
// Only plain values: no url(), expression() or var() can pass, so no style can fetch anything; no
// leading minus, so nothing is pushed off the page or over the reader's own interface.
const PLAIN_VALUE = /^(?![\s-])(?!.*\s-)[#\w\s.,%-]{1,64}$/;
const IMPORTANT = /\s*!\s*important$/i;

/**
 * A style attribute cut down to the allowed properties with plain values, written `prop:value`
 * and joined by `;` as sanitize-html writes them. Read by hand rather than by sanitize-html's
 * postcss parse, which was a fifth of sanitising a newsletter's HTML (a style on every paragraph):
 * a plain value holds no `;`, `:`, quote, bracket, brace, backslash or slash, so splitting on `;`
 * and then at the first `:` finds every declaration that can pass exactly as a CSS parser does, and
 * whatever such a parser would read otherwise (a comment, a string, an escape, a block) leaves a
 * property or a value that fails its check, and is dropped. Nothing else of the attribute is kept.
 */
export function plainStyle(style: string): string {
  const kept: string[] = [];
  for (const declaration of style.split(';')) {
    const colon = declaration.indexOf(':');
    if (colon < 0) continue;
    const property = declaration.slice(0, colon).trim();
    const value = declaration.slice(colon + 1).trim();
    const important = IMPORTANT.exec(value);
    const plain = important ? value.slice(0, important.index) : value;
    if (STYLE_PROPERTIES.has(property) && PLAIN_VALUE.test(plain)) kept.push(`${property}:${plain}${important ? ' !important' : ''}`);
  }
  return kept.join(';');
}

function isAbsolute(url: string | undefined, protocols: string[]): boolean {
  if (!url || !/^[a-z][a-z0-9+.-]*:/i.test(url.trim())) return false;
  try {
    return protocols.includes(new URL(url.trim()).protocol);
  } catch {
    return false;
  }
}

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags.filter((tag) => tag !== 'style'), 'img', 'center', 'font'],
  disallowedTagsMode: 'discard',
  allowedAttributes: {
    a: ['href', 'title', 'rel', 'target'],
    img: ['alt', 'title', 'width', 'height', REMOTE_IMAGE_ATTRIBUTE],
    td: ['colspan', 'rowspan', 'align', 'valign', 'width'],
    th: ['colspan', 'rowspan', 'align', 'valign', 'width'],
    table: ['width', 'align', 'cellpadding', 'cellspacing', 'border'],
    font: ['color', 'size'],
    '*': ['style', 'dir', 'lang'],
  },
  // Styles are cut down by transformTags['*'] (plainStyle), not by postcss.
  parseStyleAttributes: false,
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  transformTags: {
    '*': (tagName, { style, ...attribs }) => {
      const kept = style === undefined ? '' : plainStyle(style);
      return { tagName, attribs: kept ? { ...attribs, style: kept } : attribs };
    },
    // Only absolute links: a relative one would point into the reader's own app.
    a: (tagName, { href, ...attribs }) => ({
      tagName,
      attribs: {
        ...attribs,
        ...(isAbsolute(href, ['https:', 'http:', 'mailto:']) ? { href: href! } : {}),
        rel: 'noopener noreferrer nofollow',
        target: '_blank',
      },
    }),
    // The sender's own data-remote-src is never kept: only an https src becomes one.
    img: (tagName, { src, srcset: _srcset, [REMOTE_IMAGE_ATTRIBUTE]: _parked, ...attribs }) => ({
      tagName,
      attribs: isAbsolute(src, ['https:']) ? { ...attribs, [REMOTE_IMAGE_ATTRIBUTE]: src! } : attribs,
    }),
  },
};

/**
 * HTML as a reader may see it: no scripts, event handlers, forms, frames, embedded objects, base,
 * meta refresh or style sheets; links open apart and send no referrer; remote images are parked
 * in an attribute the reader's client loads only on request; styles only with plain values.
 */
export function sanitiseHtml(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}
