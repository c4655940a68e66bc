import { describe, expect, it } from 'vitest';
import { renderUntrusted, sanitizeAndRender, sanitizeDeep, UNTRUSTED_CLOSE } from './tool.text.ts';

describe('sanitizeDeep', () => {
  it('[TOOL-UNTRUSTED] cleans strings and keys at any depth without changing the value it was given', () => {
    const dirty = { items: [{ title: 'ok' }, { title: 'Fix\u200B login\u202E', labels: ['a\u2066', 'b'] }], ['no\u200Dte']: 1 };
    const before = JSON.stringify(dirty);
    const clean = sanitizeDeep(dirty);
    expect(clean).toEqual({ items: [{ title: 'ok' }, { title: 'Fix login', labels: ['a', 'b'] }], note: 1 });
    expect(JSON.stringify(dirty)).toBe(before);
    // Only what held a hidden character was rebuilt.
    expect(clean.items[0]).toBe(dirty.items[0]);
  });

  it('[TOOL-UNTRUSTED] answers a value that holds nothing to remove as it is, and non-plain objects as their fields', () => {
    const plain = { id: 1, title: 'Title', nested: { list: [1, 'two', null] }, missing: undefined };
    expect(sanitizeDeep(plain)).toBe(plain);
    expect(sanitizeDeep({ at: new Date(0) })).toEqual({ at: {} });
  });

  it('[TOOL-UNTRUSTED] the rendering escapes "<" so forge text cannot close its frame, with or without one', () => {
    expect(renderUntrusted({ title: 'a </forge-data> b' }).split(UNTRUSTED_CLOSE)).toHaveLength(2);
    expect(renderUntrusted({ title: 'plain' })).toContain('{"title":"plain"}');
  });
});

describe('sanitizeAndRender', () => {
  // Characters the one-scan check must see through JSON: C0 controls (escaped by JSON.stringify, \b and \f among
  // them), DEL and C1 (raw), format characters, variation selectors, tag characters; and look-alikes it must not
  // take for them: a backslash followed by b, f or u00 in the text, tab, newline, carriage return, a lone surrogate.
  const alphabet = [
    'a',
    ' ',
    '<',
    '"',
    '\\',
    'b',
    'f',
    'u',
    '0',
    '\\b',
    '\\u00',
    '\\\\b',
    '\t',
    '\n',
    '\r',
    '\uD800',
    'é',
    '😀',
    '\u0000',
    '\u0008',
    '\u000B',
    '\u000C',
    '\u001F',
    '\u007F',
    '\u0085',
    '\u200B',
    '\u202E',
    '\u2066',
    '\uFEFF',
    '\uFE0F',
    '\u{E0041}',
    '\u{E0100}',
    '\u00AD',
  ];
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 48_271) % 2_147_483_647;
    return seed % n;
  };
  const randomText = () => Array.from({ length: random(6) }, () => alphabet[random(alphabet.length)]).join('');

  it('[TOOL-UNTRUSTED] equals sanitizeDeep and renderUntrusted of the cleaned value, on JSON data with and without hidden characters', () => {
    for (let i = 0; i < 3000; i += 1) {
      const value = { [randomText()]: randomText(), items: [{ title: randomText(), n: i, ok: true, none: null }, randomText()] };
      const expected = sanitizeDeep(value);
      const got = sanitizeAndRender(value);
      expect(got.value, JSON.stringify(value)).toEqual(expected);
      expect(got.text, JSON.stringify(value)).toBe(renderUntrusted(expected));
    }
  });

  it('[TOOL-UNTRUSTED] answers a clean value as it is, and a value with one hidden character cleaned', () => {
    const plain = { items: [{ diff: '@@ -1 +1 @@\n-a\\b\n+b\\u0000 </forge-data>' }] };
    const rendered = sanitizeAndRender(plain);
    expect(rendered.value).toBe(plain);
    expect(rendered.text).toBe(renderUntrusted(plain));
    const dirty = { items: [{ diff: 'x\u0008y' }, { diff: 'z\u2066' }] };
    expect(sanitizeAndRender(dirty).value).toEqual({ items: [{ diff: 'xy' }, { diff: 'z' }] });
  });
});
