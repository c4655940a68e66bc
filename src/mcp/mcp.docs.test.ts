/** docs/mcp.md stays true: its variables, allowlist examples, default list and error lines are checked here. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../test/support/shared.ts';
import { ConfigError } from '../core/config.ts';
import { mcpEnvSpec, parseMcpConfig } from './mcp.config.ts';
import { DEFAULT_ALLOWED_REDIRECT_URIS, isAllowedRedirectUri, parseAllowlist } from './oauth/oauth.allowlist.ts';

const doc = readFileSync(join(repoRoot, 'docs', 'mcp.md'), 'utf8');

describe('docs/mcp.md', () => {
  it('[CONFIG-VARIABLES] names every MCP variable', () => {
    for (const name of [...Object.keys(mcpEnvSpec), 'TRUST_PROXY']) expect(doc, name).toContain(`\`${name}\``);
  });

  it('[ALLOW-SYNTAX] its allowlist examples parse, and the documented defaults are the built-in ones', () => {
    const examples = [...doc.matchAll(/^FORGE_OAUTH_ALLOWED_REDIRECT_URIS='?([^'\s]+)'?/gm)].map((m) => m[1] ?? '');
    expect(examples.length).toBeGreaterThanOrEqual(4);
    for (const example of examples) expect(() => parseAllowlist(example), example).not.toThrow();
    const defaultsParagraph = doc.slice(doc.indexOf('`defaults` is:'), doc.indexOf('Examples:'));
    for (const entry of DEFAULT_ALLOWED_REDIRECT_URIS) expect(defaultsParagraph, entry).toContain(`\`${entry}\``);
    const prefix = parseAllowlist('defaults,https://hooks.example.com/mcp/*');
    expect(isAllowedRedirectUri(prefix, 'https://hooks.example.com/mcp/tenant/cb')).toBe(true);
    expect(isAllowedRedirectUri(parseAllowlist('https://app.example.com/oauth/*'), 'https://app.example.com/oauthx')).toBe(false);
  });

  it('[CONFIG-CROSSCHECK] shows the error lines the start really prints', () => {
    let lines: readonly string[] = [];
    try {
      parseMcpConfig({ FORGE_URL: 'https://gitlab.example.com', FORGE_MCP_OAUTH: 'true', OAUTH_STATELESS_MODE: 'true' });
    } catch (error) {
      if (error instanceof ConfigError) lines = error.problems;
    }
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(doc).toContain(`config error: ${line}`);
  });

  it('[ROTATION-CONSENT] describes the two-phase rotation: both secrets everywhere before the new one seals', () => {
    const section = doc.slice(doc.indexOf('**Rotating the stateless secret**'), doc.indexOf('**Logs.**'));
    const phase1 = section.indexOf('`OAUTH_STATELESS_SECRET=<old>` and `OAUTH_STATELESS_PREVIOUS_SECRET=<new>`');
    const phase2 = section.indexOf('`OAUTH_STATELESS_SECRET=<new>` and `OAUTH_STATELESS_PREVIOUS_SECRET=<old>`');
    expect(phase1).toBeGreaterThan(0);
    expect(phase2).toBeGreaterThan(phase1);
    expect(section).toMatch(/remove `OAUTH_STATELESS_PREVIOUS_SECRET`/);
  });
});
