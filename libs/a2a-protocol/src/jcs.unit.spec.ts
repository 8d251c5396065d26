import { describe, expect, it } from 'vitest';
import { canonicalize } from './jcs';

/** The IEEE 754 double with the given big-endian bit pattern (RFC 8785 Appendix B lists its samples so). */
const double = (bits: string): number => Buffer.from(bits, 'hex').readDoubleBE(0);

describe('canonicalize (RFC 8785)', () => {
  it('serialises the RFC 8785 Appendix B numbers as ECMAScript does', () => {
    const samples: [string, string][] = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    for (const [bits, expected] of samples) {
      expect(canonicalize(double(bits)), bits).toBe(expected);
    }
  });

  it('rejects NaN and the infinities (RFC 8785 §3.2.2.3)', () => {
    for (const bits of ['7fffffffffffffff', '7ff0000000000000', 'fff0000000000000']) {
      expect(() => canonicalize(double(bits)), bits).toThrow(TypeError);
    }
    expect(() => canonicalize({ a: [1, Number.NaN] })).toThrow(/\$\.a\[1\]/);
  });

  it('canonicalises the RFC 8785 §3.2.2 sample: sorted members, no whitespace, canonical numbers and strings', () => {
    const input =
      '{\n  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n' +
      '  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n' +
      '  "literals": [null, true, false]\n}';
    expect(canonicalize(JSON.parse(input))).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts member names by UTF-16 code units, so an astral character sorts before U+FB33 (RFC 8785 §3.2.3)', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    expect(canonicalize(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control",' +
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
        '"\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('escapes only quote, backslash and controls, with the short forms and lowercase \\u00xx', () => {
    expect(canonicalize('"\\\b\f\n\r\t\u0000\u001f\u007f\u2028é😀/')).toBe(
      '"\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\u007f\u2028é😀/"',
    );
  });

  it('rejects lone surrogates in values and member names (I-JSON)', () => {
    expect(() => canonicalize('\ud800')).toThrow(TypeError);
    expect(() => canonicalize('a\udc00b')).toThrow(TypeError);
    expect(() => canonicalize({ '\ud83d': 1 })).toThrow(TypeError);
    expect(canonicalize('\ud83d\ude00')).toBe('"😀"');
  });

  it('sorts nested objects, keeps array order, serialises -0 as 0 and leaves out undefined members', () => {
    expect(
      canonicalize({ b: [3, { z: 1, a: -0 }, 'x'], a: { d: true, c: null }, u: undefined }),
    ).toBe('{"a":{"c":null,"d":true},"b":[3,{"a":0,"z":1},"x"]}');
    expect(canonicalize({})).toBe('{}');
    expect(canonicalize([])).toBe('[]');
  });

  it('rejects values without a JSON form', () => {
    for (const value of [
      undefined,
      [undefined],
      10n,
      () => 1,
      Symbol('s'),
      new Date(0),
      new Map(),
    ]) {
      expect(() => canonicalize(value)).toThrow(TypeError);
    }
  });
});
