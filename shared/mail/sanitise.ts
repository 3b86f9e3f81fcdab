import sanitizeHtml from 'sanitize-html';

/** Remote images stay out until a reader asks for them: loading one tells the sender the mail was opened. */
export const REMOTE_IMAGE_ATTRIBUTE = 'data-remote-src';

// Only plain values: no url(), expression() or var() can pass, so no style can fetch anything.
const plain = [/^[#\w\s.,%-]{1,64}$/];
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

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [
    ...sanitizeHtml.defaults.allowedTags.filter((tag) => tag !== 'style'),
    'img',
    'center',
    'font',
  ],
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
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: 'noopener noreferrer nofollow', target: '_blank' } }),
    img: (tagName, attribs) => {
      const { src, srcset: _srcset, ...rest } = attribs;
      return { tagName, attribs: /^https:\/\//i.test(src ?? '') ? { ...rest, [REMOTE_IMAGE_ATTRIBUTE]: src! } : rest };
    },
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
