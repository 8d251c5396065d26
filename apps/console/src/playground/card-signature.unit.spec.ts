import { describe, expect, it } from 'vitest';
import { canonicalJson } from './card-signature';

describe('RFC 8785 canonical JSON of a card', () => {
  it('sorts members by UTF-16 code units at every depth and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: [true, null, { d: 'x', c: 2.5 }], é: 'é', Z: 1e21 })).toBe(
      '{"Z":1e+21,"a":[true,null,{"c":2.5,"d":"x"}],"b":1,"é":"é"}',
    );
  });

  it('drops members whose value is undefined, as JSON.parse never yields them', () => {
    expect(canonicalJson({ a: undefined, b: '\u2028' })).toBe('{"b":"\u2028"}');
  });
});
