import { describe, expect, it } from 'vitest';
import { createPkcePair, createState, s256, stateMatches } from './mcp-local.pkce.ts';

describe('PKCE S256 and state', () => {
  it('computes the RFC 7636 appendix B example', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('creates fresh verifiers of legal length and alphabet with a matching challenge', () => {
    const a = createPkcePair();
    const b = createPkcePair();
    expect(a.verifier).not.toBe(b.verifier);
    expect(a.verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(a.challenge).toBe(s256(a.verifier));
    expect(a.method).toBe('S256');
  });

  it('compares states exactly', () => {
    const state = createState();
    expect(state.length).toBeGreaterThanOrEqual(32);
    expect(stateMatches(state, state)).toBe(true);
    expect(stateMatches(state, `${state}x`)).toBe(false);
    expect(stateMatches(state, state.slice(1))).toBe(false);
    expect(stateMatches(state, null)).toBe(false);
    expect(stateMatches(state, createState())).toBe(false);
  });
});
