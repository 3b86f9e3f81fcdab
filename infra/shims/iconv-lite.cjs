// Bundled in place of iconv-lite (about 480 KB of code pages). mysql2 turns to it for charsets
// Node's Buffer lacks. Two occur with Surge: utf8mb4 data needs none, but every server greeting
// (the handshake's server version) and an auth-switch request (RDS Proxy, MySQL 8's
// caching_sha2_password) are decoded as CESU-8, which is written out here. Any other charset
// fails the query loudly instead of decoding wrongly.
'use strict';

const REPLACEMENT = '\ufffd';
const continuation = (byte) => byte !== undefined && (byte & 0xc0) === 0x80;

/**
 * CESU-8 is UTF-8 in which a character outside the BMP is two 3-byte sequences, one per UTF-16
 * surrogate; decoding each sequence to its code unit rebuilds the pairs in the JS string.
 */
function decodeCesu8(bytes) {
  let text = '';
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i];
    if (lead < 0x80) {
      text += String.fromCharCode(lead);
      i += 1;
    } else if ((lead & 0xe0) === 0xc0 && lead >= 0xc2 && continuation(bytes[i + 1])) {
      text += String.fromCharCode(((lead & 0x1f) << 6) | (bytes[i + 1] & 0x3f));
      i += 2;
    } else if ((lead & 0xf0) === 0xe0 && continuation(bytes[i + 1]) && continuation(bytes[i + 2])) {
      const unit = ((lead & 0x0f) << 12) | ((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f);
      text += unit >= 0x800 ? String.fromCharCode(unit) : REPLACEMENT;
      i += 3;
    } else {
      text += REPLACEMENT;
      i += 1;
    }
  }
  return text;
}

/** Each UTF-16 code unit as UTF-8, surrogates included, which is what makes it CESU-8. */
function encodeCesu8(text) {
  const bytes = [];
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes.push(unit);
    else if (unit < 0x800) bytes.push(0xc0 | (unit >> 6), 0x80 | (unit & 0x3f));
    else bytes.push(0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f));
  }
  return Buffer.from(bytes);
}

const isCesu8 = (encoding) =>
  String(encoding)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '') === 'cesu8';

function unsupported(encoding) {
  return new Error(`Charset ${encoding} is not bundled; Surge's tables are utf8mb4`);
}

exports.getDecoder = (encoding) => {
  if (!isCesu8(encoding)) throw unsupported(encoding);
  return { write: decodeCesu8, end: () => '' };
};
exports.getEncoder = (encoding) => {
  if (!isCesu8(encoding)) throw unsupported(encoding);
  return { write: encodeCesu8, end: () => Buffer.alloc(0) };
};
exports.encodingExists = (encoding) => Buffer.isEncoding(encoding) || isCesu8(encoding);
