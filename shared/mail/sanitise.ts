import sanitizeHtml from 'sanitize-html';

/** Remote images stay out until a reader asks for them: loading one tells the sender the mail was opened. */
export const REMOTE_IMAGE_ATTRIBUTE = 'data-remote-src';

// Only plain values: no url(), expression() or var() can pass, so no style can fetch anything; no
// leading minus, so nothing is pushed off the page or over the reader's own interface.
const plain = [/^(?![\s-])(?!.*\s-)[#\w\s.,%-]{1,64}$/];
const STYLES = Object.fromEntries(
  [
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
  ].map((property) => [property, plain]),
);

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
  allowedStyles: { '*': STYLES },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  transformTags: {
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
