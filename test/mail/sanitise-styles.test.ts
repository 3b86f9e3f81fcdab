import { describe, expect, it } from 'vitest';
import { sanitiseHtml } from '../../shared/mail/sanitise';

/** The style attribute the reader is shown of a paragraph styled `style`, or undefined without one. */
function shownStyle(style: string): string | undefined {
  const html = sanitiseHtml(`<p style="${style.replaceAll('&', '&amp;').replaceAll('"', '&quot;')}">text</p>`);
  const match = /^<p(?: style="([^"]*)")?>text<\/p>$/.exec(html);
  if (!match) throw new Error(`not one paragraph: ${html}`);
  return match[1]?.replaceAll('&quot;', '"').replaceAll('&amp;', '&');
}

describe('styles in newsletter HTML', () => {
  it('keeps the allowed properties with plain values, written as sanitize-html writes them', () => {
    // Prepare / Act
    const shown = shownStyle(' color: #333 ; font-size:16px;font-family: Georgia, serif; text-align:center !important');

    // Assess
    expect(shown).toBe('color:#333;font-size:16px;font-family:Georgia, serif;text-align:center !important');
  });

  it.each([
    ['a remote image', 'background-image:url(https://evil.example/t.gif)'],
    ['a remote image behind an allowed property', 'background-color:url(https://evil.example/t.gif)'],
    ['an expression', 'width:expression(alert(1))'],
    ['a variable', 'color:var(--reader-secret)'],
    ['a negative margin', 'margin:-9999px'],
    ['a negative value after another', 'margin:0 -9999px'],
    ['a property not allowed', 'position:fixed'],
    ['a property in capitals', 'COLOR:red'],
    ['a comment hiding a property', '/*x;*/color:red'],
    ['a comment inside a value', 'color:red/*x*/'],
    ['an escaped character', 'color:r\\65 d'],
    ['a quoted value', 'font-family:"a;b"'],
    ['a block', 'x{color:red}'],
    ['a second colon', 'color:red:blue'],
    ['a value past 64 characters', `font-family:${'a'.repeat(65)}`],
    ['an empty value', 'color:'],
  ])('drops %s, and the attribute with nothing left', (_, style) => {
    // Prepare / Act
    const shown = shownStyle(style);

    // Assess
    expect(shown).toBeUndefined();
  });

  it('keeps what passes around what does not', () => {
    // Prepare / Act
    const shown = shownStyle('position:fixed;color:red;background:url(x);"unclosed;font-weight:bold');

    // Assess
    expect(shown).toBe('color:red;font-weight:bold');
  });

  it('cuts styles down on every element, the rewritten links and images included', () => {
    // Prepare / Act
    const html = sanitiseHtml(
      '<a href="https://bits.example/" style="color:red;position:absolute">a</a><img src="https://bits.example/i.png" style="width:10px;margin:-1px">',
    );

    // Assess
    expect(html).toContain('style="color:red"');
    expect(html).toContain('style="width:10px"');
    expect(html).not.toMatch(/position|margin/);
  });
});
