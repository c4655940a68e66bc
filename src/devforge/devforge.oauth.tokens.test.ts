import { describe, expect, it } from 'vitest';
import { parseScopes, s256Challenge } from './devforge.oauth.tokens.ts';

describe('PKCE and scopes helpers', () => {
  it('computes S256 as in RFC 7636 appendix B', () => {
    expect(s256Challenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('splits scopes on whitespace runs without duplicates', () => {
    expect(parseScopes('  api   read_user api ')).toEqual(['api', 'read_user']);
  });
});
