import { createRequire } from 'node:module';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';

const shim = createRequire(import.meta.url)('../../infra/shims/iconv-lite.cjs') as typeof iconv;

/** Strings across the planes CESU-8 treats differently: ASCII, two- and three-byte BMP, and pairs of surrogates. */
const SAMPLES = ['8.0.28-MariaDB', 'caching_sha2_password', 'café Ñandú', '数据库 サーバー', 'emoji 😀 and 𝄞 clef', '\u07ff\u0800\uffff'];

function randomText(length: number): string {
  const ranges = [
    [0x20, 0x7e],
    [0x80, 0x7ff],
    [0x800, 0xd7ff],
    [0xe000, 0xffff],
    [0x10000, 0x10ffff],
  ] as const;
  let text = '';
  for (let i = 0; i < length; i++) {
    const [low, high] = ranges[Math.floor(Math.random() * ranges.length)]!;
    text += String.fromCodePoint(low + Math.floor(Math.random() * (high - low + 1)));
  }
  return text;
}

describe('the iconv-lite shim bundled with mysql2', () => {
  it('decodes and encodes CESU-8 exactly as iconv-lite does', () => {
    // Prepare
    const texts = [...SAMPLES, ...Array.from({ length: 200 }, () => randomText(1 + Math.floor(Math.random() * 40)))];

    // Act
    const decoded = texts.map((text) => shim.getDecoder('cesu8').write(iconv.encode(text, 'cesu8')));
    const encoded = texts.map((text) => shim.getEncoder('cesu8').write(text));

    // Assess
    expect(decoded).toEqual(texts);
    expect(encoded.map((bytes) => bytes.toString('hex'))).toEqual(texts.map((text) => iconv.encode(text, 'cesu8').toString('hex')));
  });

  it('fails loudly on a charset it does not carry', () => {
    expect(() => shim.getDecoder('cp1251')).toThrow(/Charset cp1251 is not bundled/);
    expect(shim.encodingExists('cesu8')).toBe(true);
    expect(shim.encodingExists('cp1251')).toBe(false);
  });
});
