import PostalMime, { decodeWords, type Address, type Email } from 'postal-mime';
import { mailLimits, type MailLimits } from './limits';
import { MailRejected } from './rejection';

export interface AttachmentInfo {
  filename: string;
  mimeType: string;
  size: number;
}

export interface ParsedMail {
  subject: string;
  from: { name: string; address: string };
  sentAt: Date | undefined;
  /** The List-Id's identifier, lower-cased, without its angle brackets. */
  listId: string | undefined;
  /** The List-Id's phrase, e.g. "Weekly News" of `"Weekly News" <weekly.example.com>`. */
  listName: string | undefined;
  /** The List-Unsubscribe URLs a reader may follow: https and mailto only. */
  listUnsubscribe: string[];
  /** Unsanitised here; the parser thread sanitises it. Absent when larger than the HTML budget. */
  html: string | undefined;
  text: string | undefined;
  attachments: AttachmentInfo[];
}

// C0 and C1 controls (tab excepted), line and paragraph separators, bidi overrides and isolates.
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** One line of display text: no control characters (so no CR/LF header tricks), collapsed, capped. */
export function oneLine(value: string | undefined, maxLength: number): string {
  if (!value) return '';
  return value.replace(CONTROLS, ' ').replace(/\s+/g, ' ').trim().slice(0, maxLength);
}

/** An attachment's name as a bare file name: no directories, no leading dots, no controls. */
function safeFilename(name: string | null | undefined): string {
  const base =
    oneLine(name ?? '', 1_000)
      .split(/[\\/]/)
      .pop() ?? '';
  const cleaned = base
    .replace(/^[.\s]+/, '')
    .replace(/[<>:"|?*]/g, '_')
    .slice(0, 200);
  return cleaned || 'attachment';
}

/**
 * An upper bound on the message's MIME parts, counted on the raw bytes: every line that is a
 * delimiter of a boundary declared anywhere in the message. The parser's work grows with the part
 * count, so a message with too many is refused before it is parsed at all.
 */
function countParts(raw: Buffer): number {
  const text = raw.toString('latin1');
  const boundaries = new Set<string>();
  for (const match of text.matchAll(/boundary\s*=\s*(?:"([^"\r\n]{1,200})"|([^\s;"]{1,200}))/gi)) {
    boundaries.add(match[1] ?? match[2]!);
  }
  if (boundaries.size === 0) return 1;
  let parts = 0;
  for (let at = text.indexOf('\n--'); at !== -1; at = text.indexOf('\n--', at + 3)) {
    const end = text.indexOf('\n', at + 3);
    const line = text.slice(at + 3, end === -1 ? undefined : end).replace(/[\s]+$/, '');
    const name = line.endsWith('--') ? line.slice(0, -2) : line;
    if (boundaries.has(name) || boundaries.has(line)) parts++;
  }
  return parts;
}

function mailbox(address: Address | undefined): { name: string; address: string } | undefined {
  if (!address) return undefined;
  const box = address.address !== undefined ? address : address.group[0];
  if (!box?.address) return undefined;
  return { name: oneLine(box.name, 200), address: oneLine(box.address, 320).toLowerCase() };
}

/** A header's value with any MIME encoded words decoded (mailers encode a quoted List-Id phrase). */
function header(email: Email, key: string): string | undefined {
  const value = email.headers.find((h) => h.key === key)?.value;
  return value === undefined ? undefined : decodeWords(value);
}

/** TIMESTAMP holds 1970 to 2038 (a day's margin at the start for any session time zone); outside it, unknown. */
function sentAt(date: string | undefined): Date | undefined {
  if (!date) return undefined;
  const at = new Date(date);
  const time = at.getTime();
  return Number.isFinite(time) && time >= Date.UTC(1970, 0, 2) && time < Date.UTC(2038, 0, 1) ? at : undefined;
}

function listId(value: string | undefined): { id: string; name: string | undefined } | undefined {
  const line = oneLine(value, 1_000);
  const match = /^(.*?)<([^<>\s]{1,255})>\s*$/.exec(line) ?? /^()([^<>\s]{1,255})$/.exec(line);
  if (!match) return undefined;
  const id = match[2]!.toLowerCase();
  if (!/^[a-z0-9!#$%&'*+\-/=?^_`{|}~.]+$/.test(id)) return undefined;
  const name = oneLine(match[1]!.trim().replace(/^"|"$/g, ''), 200);
  return { id, name: name || undefined };
}

/** `<https://…>, <mailto:…>` as URLs a client can offer safely; any other scheme is dropped. */
function unsubscribeUrls(value: string | undefined): string[] {
  const urls: string[] = [];
  for (const [, candidate] of oneLine(value, 4_000).matchAll(/<([^<>\s]{1,900})>/g)) {
    try {
      const url = new URL(candidate!);
      if (url.protocol === 'https:' || url.protocol === 'mailto:') urls.push(url.href);
    } catch {
      // Not a URL: nothing a reader could follow.
    }
  }
  return urls.slice(0, 2);
}

function byteLength(value: string | undefined): number {
  return value === undefined ? 0 : Buffer.byteLength(value);
}

/** Cuts a string to at most maxBytes of UTF-8 without splitting a character. */
function capBytes(value: string | undefined, maxBytes: number): string | undefined {
  if (value === undefined || Buffer.byteLength(value) <= maxBytes) return value;
  return Buffer.from(value)
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}

/**
 * Parses one raw message under the limits: size and part count before parsing, nesting and header
 * size while parsing (time and memory are bounded by the thread it runs on: isolated-parse.ts).
 * Anything a hostile message can make of it ends in MailRejected with a reason; the result carries
 * only bounded, single-line header values.
 */
export async function parseMail(raw: Buffer, limits: MailLimits = mailLimits): Promise<ParsedMail> {
  if (raw.length > limits.maxMessageBytes) {
    throw new MailRejected('too-large', `The message has ${raw.length} bytes; at most ${limits.maxMessageBytes} are accepted`);
  }
  const parts = countParts(raw);
  if (parts > limits.maxParts) throw new MailRejected('too-many-parts', `The message has ${parts} parts; at most ${limits.maxParts} are accepted`);

  let email: Email;
  try {
    email = await PostalMime.parse(raw, {
      maxNestingDepth: limits.maxNestingDepth,
      maxHeadersSize: limits.maxHeaderBytes,
      maxRfc822NestingDepth: limits.maxAttachedMessageDepth,
      attachmentEncoding: 'arraybuffer',
    });
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    if (/nesting depth/i.test(message)) throw new MailRejected('too-deep', message);
    if (/header size/i.test(message)) throw new MailRejected('headers-too-large', message);
    throw new MailRejected('unparseable', message);
  }

  const from = mailbox(email.from) ?? mailbox(email.sender);
  if (!from) throw new MailRejected('no-sender', 'The message names no sender address');
  const list = listId(header(email, 'list-id'));
  return {
    subject: oneLine(email.subject, 500),
    from,
    sentAt: sentAt(email.date),
    listId: list?.id,
    listName: list?.name,
    listUnsubscribe: unsubscribeUrls(header(email, 'list-unsubscribe')),
    html: byteLength(email.html) <= limits.maxHtmlBytes ? email.html : undefined,
    text: capBytes(email.text, limits.maxTextBytes),
    attachments: email.attachments.map((a) => ({
      filename: safeFilename(a.filename),
      mimeType: oneLine(a.mimeType, 100).toLowerCase(),
      size: typeof a.content === 'string' ? Buffer.byteLength(a.content) : a.content.byteLength,
    })),
  };
}
