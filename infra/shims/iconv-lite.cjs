// Bundled in place of iconv-lite (about 480 KB of code pages). mysql2 turns to it only for
// charsets Node's Buffer lacks; Surge's schema is utf8mb4 throughout, so those never occur, and
// if one ever did, the query fails loudly instead of decoding wrongly.
'use strict';

function unsupported(encoding) {
  return new Error(`Charset ${encoding} is not bundled; Surge's tables are utf8mb4`);
}

exports.getDecoder = (encoding) => {
  throw unsupported(encoding);
};
exports.getEncoder = (encoding) => {
  throw unsupported(encoding);
};
exports.encodingExists = (encoding) => Buffer.isEncoding(encoding);
