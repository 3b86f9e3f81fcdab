/**
 * What Surge accepts of one inbound mail. SES itself takes up to 40 MB, so a bigger message than
 * maxMessageBytes still arrives and is rejected by its stored size, unread; the parser holds every
 * message to all of these before and while it parses.
 */
export const mailLimits = {
  /** Whole raw message, headers included. */
  maxMessageBytes: 10 * 1024 * 1024,
  /** MIME parts, counted from the raw bytes before parsing: parse time grows with the part count. */
  maxParts: 500,
  /** Multipart nesting. */
  maxNestingDepth: 20,
  /** Header bytes of every part together. */
  maxHeaderBytes: 256 * 1024,
  /** Attached messages parsed inline; deeper ones stay opaque attachments. */
  maxAttachedMessageDepth: 3,
  /** HTML larger than this is not sanitised or stored; the text part still is. */
  maxHtmlBytes: 2 * 1024 * 1024,
  maxTextBytes: 2 * 1024 * 1024,
  /** Parsing and sanitising of one message must finish within this, or the parser thread is stopped. */
  maxProcessingMs: 5_000,
  /** The parser thread's heap; a message that needs more is rejected, the function lives on. */
  maxParserHeapMb: 256,
} as const;

export type MailLimits = { readonly [K in keyof typeof mailLimits]: number };
