/**
 * Discovery documents (issue 3 item 2; forge-facts.md "What real MCP clients need"): RFC 9728 protected-resource
 * metadata and RFC 8414 authorization-server metadata, at the root, under the path of `MCP_SERVER_URL` when it has
 * one (RFC 9728 §3.1 / RFC 8414 §3.1 insert the well-known segment before the path), and at
 * `{MCP_SERVER_URL}/.well-known/oauth-protected-resource/mcp`, the URL the 401 challenge names.
 */
import type { OAuthMode } from './oauth.types.ts';

export interface MetadataSettings {
  serverUrl: string;
  scopes: string;
  mode: OAuthMode;
}

/**
 * RFC 9728 document; `resource` is `{MCP_SERVER_URL}/mcp` (the SDK client refuses a mismatch), or the narrowed URL
 * `{MCP_SERVER_URL}/mcp/x/{toolsets}[/readonly]` for the document found by inserting the well-known segment before
 * that URL's path (RFC 9728 §3.3: the `resource` must be the URL the client derived it from).
 */
export function protectedResourceMetadata(s: MetadataSettings, resource = `${s.serverUrl}/mcp`): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [s.serverUrl],
    scopes_supported: s.scopes.split(' '),
    bearer_methods_supported: ['header'],
    resource_name: 'Forge MCP server',
  };
}

/** RFC 8414 document; `issuer` is exactly `MCP_SERVER_URL`. */
export function authorizationServerMetadata(s: MetadataSettings): Record<string, unknown> {
  return {
    issuer: s.serverUrl,
    authorization_endpoint: `${s.serverUrl}/authorize`,
    token_endpoint: `${s.serverUrl}/token`,
    registration_endpoint: `${s.serverUrl}/register`,
    revocation_endpoint: `${s.serverUrl}/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: s.scopes.split(' '),
    client_id_metadata_document_supported: true,
    // RFC 9207: only callback proxy mode answers the client itself; in passthrough the forge redirects, without `iss`.
    authorization_response_iss_parameter_supported: s.mode === 'callback_proxy',
  };
}

/** The path of `MCP_SERVER_URL` without a trailing slash ('' at the root). */
export function serverPathPrefix(serverUrl: string): string {
  return new URL(serverUrl).pathname.replace(/\/+$/, '');
}

/** Every path the protected-resource metadata is served at. */
export function protectedResourcePaths(serverUrl: string): string[] {
  const p = serverPathPrefix(serverUrl);
  return [
    ...new Set([
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      `/.well-known/oauth-protected-resource${p}`,
      `/.well-known/oauth-protected-resource${p}/mcp`,
      `${p}/.well-known/oauth-protected-resource`,
      `${p}/.well-known/oauth-protected-resource/mcp`,
    ]),
  ];
}

/** The path of a narrowed `/mcp` URL (`/mcp/x/{toolsets}[/readonly]`, toolsets as the route takes them). */
const NARROWED_MCP_PATH = /^\/mcp\/x\/[a-z0-9_,]{1,200}(?:\/readonly)?$/;

/** Whether `path` (relative to `MCP_SERVER_URL`) is a narrowed `/mcp` URL, whose resource is itself. */
export function isNarrowedMcpPath(path: string): boolean {
  return NARROWED_MCP_PATH.test(path);
}

/**
 * The well-known prefixes under which a narrowed URL's own protected-resource document is found: the segment
 * inserted before the whole path (RFC 9728 §3.1), and under the server's path prefix (as for `/mcp`).
 */
export function narrowedResourcePrefixes(serverUrl: string): string[] {
  const p = serverPathPrefix(serverUrl);
  return [...new Set([`/.well-known/oauth-protected-resource${p}`, `${p}/.well-known/oauth-protected-resource`])];
}

/** Every path the authorization-server metadata is served at. */
export function authorizationServerPaths(serverUrl: string): string[] {
  const p = serverPathPrefix(serverUrl);
  return [
    ...new Set([
      '/.well-known/oauth-authorization-server',
      `/.well-known/oauth-authorization-server${p}`,
      `${p}/.well-known/oauth-authorization-server`,
    ]),
  ];
}

/** The URL named by `resource_metadata` in the 401 challenge (forge-facts.md, exactly). */
export function resourceMetadataUrl(serverUrl: string): string {
  return `${serverUrl}/.well-known/oauth-protected-resource/mcp`;
}

/** `WWW-Authenticate` of a 401 from `/mcp`: `Bearer resource_metadata="…", scope="…"` (plus the RFC 6750 error). */
export function bearerChallenge(serverUrl: string | undefined, scopes: string, error?: 'invalid_token'): string {
  const parts = serverUrl === undefined ? ['Bearer realm="forge-mcp"'] : [`Bearer resource_metadata="${resourceMetadataUrl(serverUrl)}"`];
  parts.push(`scope="${scopes}"`);
  if (error) parts.push(`error="${error}"`);
  return parts.join(', ');
}
