import { defineRequirements } from '../../test/support/requirements.ts';

/**
 * Requirements of the remote forge MCP server, one id per rule of spec/mcp-oauth.md and of issue 3 items 1–10
 * (STYLE.md 12). Every test that pins a requirement cites its id in brackets in its name, for example
 * `it('[REG-ALLOWLIST] refuses …')`; requirements.test.ts fails when an id has no citing test.
 */
export const REQUIREMENTS = defineRequirements([
  // Spec: what the service does
  {
    id: 'MODE-ENABLE',
    source: 'spec "What the service does" 1',
    rule: 'FORGE_MCP_OAUTH=true enables remote OAuth; without it no OAuth endpoints are served',
  },
  {
    id: 'MODE-PASSTHROUGH',
    source: 'spec "What the service does" 2',
    rule: 'passthrough (default): the client redirect_uri goes to the forge, which redirects straight back to the client; the server never receives the callback',
  },
  {
    id: 'MODE-PROXY',
    source: 'spec "What the service does" 2',
    rule: 'callback proxy: the server uses {MCP_SERVER_URL}/callback with the forge, receives the code, keeps the tokens and redirects the client with a proxy code',
  },
  {
    id: 'MODE-LOCAL-NOTICE',
    source: 'spec "What the service does" 4; issue item 1',
    rule: 'FORGE_OAUTH_REDIRECT_URI does not affect remote OAuth; set with FORGE_MCP_OAUTH it is reported as a notice',
  },
  {
    id: 'STATELESS-REPLICAS',
    source: 'spec "What the service does" 5, "Stateless mode"',
    rule: 'stateless mode runs the callback-proxy flow on several replicas with no shared cache or stickiness',
  },
  {
    id: 'STATEFUL-OTHER-REPLICA',
    source: 'spec "Stateless mode", "Errors"',
    rule: 'stateful mode keeps state in memory: a request reaching another replica fails',
  },
  // Spec: configuration and records
  {
    id: 'CONFIG-VARIABLES',
    source: 'spec "Configuration variables"; issue item 1',
    rule: 'the spec variables are read with their meanings and defaults (register limit 20)',
  },
  {
    id: 'CONFIG-CROSSCHECK',
    source: 'issue item 1',
    rule: 'remote OAuth needs MCP_SERVER_URL and FORGE_OAUTH_APP_ID; stateless mode needs a secret of at least 32 bytes; one line each',
  },
  {
    id: 'CONFIG-ROTATION',
    source: 'issue item 1',
    rule: 'OAUTH_STATELESS_PREVIOUS_SECRET opens values sealed before a rotation; new values use the new secret',
  },
  {
    id: 'LRU-BOUND',
    source: 'spec "Stored records", "Limits"; issue tests',
    rule: 'in-memory stores are LRUs of at most 1000 entries (entry 1001 evicts the oldest)',
  },
  {
    id: 'STATELESS-SEALED',
    source: 'spec "Stateless mode"; issue item 7',
    rule: 'the pending transaction and the stored tokens are sealed into the opaque parameters; tampered or foreign-secret values are refused',
  },
  // Spec: endpoints
  {
    id: 'REG-VIRTUAL-ID',
    source: 'spec "Endpoints" POST /register; issue item 3',
    rule: 'register returns a virtual client_id (a UUID; sealed in stateless mode, readable by any replica)',
  },
  {
    id: 'REG-ALLOWLIST',
    source: 'spec "Endpoints" POST /register, "Errors"',
    rule: 'every redirect URI must be on the allowlist, otherwise invalid_redirect_uri, with the refused URL in the log',
  },
  {
    id: 'REG-UNSAFE',
    source: 'issue item 3',
    rule: 'unsafe redirect URIs are refused: other schemes than http(s) and registered app schemes, plain http off loopback, user info, fragments, localhost@evil tricks',
  },
  {
    id: 'REG-RATE',
    source: 'spec "Limits"; issue item 3',
    rule: 'register is limited per client IP (OAUTH_REGISTER_RATE_LIMIT_PER_HOUR, default 20): 429 with Retry-After',
  },
  {
    id: 'REG-TRUST-PROXY',
    source: 'issue item 3; core TRUST_PROXY',
    rule: 'forwarded addresses count only from trusted proxies (TRUST_PROXY), as the first untrusted hop, so a client cannot choose its address; a forwarded address with a port never causes a 500',
  },
  {
    id: 'RATE-IPV6',
    source: 'review 3',
    rule: 'per-address limits count IPv6 clients by their /64 and IPv4-mapped IPv6 as the IPv4 address',
  },
  {
    id: 'REG-CIMD',
    source: 'issue item 3; forge-facts.md',
    rule: 'an https client_id is a metadata document: fetched with time and size bounds, no redirects, no private addresses, cached; its redirect URIs pass the allowlist',
  },
  {
    id: 'AUTHZ-PASSTHROUGH',
    source: 'spec "Endpoints" GET /authorize',
    rule: 'passthrough: 302 to {FORGE_URL}/oauth/authorize with the real application id and the client redirect_uri, code_challenge and state',
  },
  {
    id: 'AUTHZ-CONSENT-FIRST',
    source: 'spec "Endpoints" GET /authorize; "Callback proxy flow" 2',
    rule: 'callback proxy: the consent page comes first (once per client and callback)',
  },
  {
    id: 'AUTHZ-REGISTERED',
    source: 'issue item 5',
    rule: 'redirect_uri must match a registered one exactly, only the loopback port may differ; otherwise an error page, never a redirect',
  },
  { id: 'AUTHZ-ALLOWLIST', source: 'spec "Authentication" 5', rule: 'a redirect URI outside the allowlist is refused at /authorize too' },
  { id: 'AUTHZ-PKCE-S256', source: 'issue item 5', rule: 'PKCE S256 is required; plain or a missing challenge is refused' },
  {
    id: 'FLOW-3-FORGE-REDIRECT',
    source: 'spec "Callback proxy flow" 3',
    rule: 'on approve: client redirect_uri, state and challenge stored; proxy PKCE pair and state generated; 302 to the forge with the app id, {MCP_SERVER_URL}/callback, proxy challenge and proxy state',
  },
  {
    id: 'FLOW-5-EXCHANGE',
    source: 'spec "Callback proxy flow" 5',
    rule: 'callback exchanges the forge code with the proxy verifier and the callback redirect_uri; the tokens are kept under a new proxy code',
  },
  {
    id: 'FLOW-6-CLIENT-REDIRECT',
    source: 'spec "Callback proxy flow" 6; issue item 7',
    rule: '302 to the client callback with the proxy code, the client original state and iss',
  },
  {
    id: 'FLOW-7-TOKEN',
    source: 'spec "Callback proxy flow" 7',
    rule: '/token verifies the client PKCE, checks expiry, returns the tokens and deletes the code',
  },
  {
    id: 'FLOW-8-MCP',
    source: 'spec "Callback proxy flow" 8',
    rule: 'the client calls /mcp with the bearer and tools reach the forge with the user token',
  },
  {
    id: 'STATE-REPLAY',
    source: 'spec "States and transitions"; issue item 7',
    rule: 'a pending transaction is consumed at /callback: a replayed proxy state is refused',
  },
  { id: 'CODE-ONCE', source: 'spec "States and transitions", "Limits"', rule: 'a proxy code works once' },
  { id: 'CODE-EXPIRY', source: 'spec "Limits"; issue item 7', rule: 'a proxy code lives 10 minutes, checked before tokens are returned' },
  { id: 'CODE-BINDING', source: 'issue item 7', rule: 'a proxy code is bound to the client id, the redirect URI and the code challenge' },
  {
    id: 'FORGE-ERROR-PASSBACK',
    source: 'issue item 7',
    rule: 'a forge error at /callback goes back to the client: access_denied when the user refused, server_error otherwise',
  },
  {
    id: 'PASSTHROUGH-TOKEN',
    source: 'spec "Passthrough flow"',
    rule: '/token posts code, verifier and the real application id to the forge and returns access and refresh tokens',
  },
  {
    id: 'PASSTHROUGH-UNREGISTERED',
    source: 'spec "Passthrough flow", "Errors"',
    rule: 'in passthrough a client callback not registered at the forge is rejected by the forge',
  },
  // Spec: authentication
  { id: 'AUTH-BEARER', source: 'spec "Authentication" 1', rule: '/mcp requires Authorization: Bearer' },
  {
    id: 'AUTH-DUAL-PKCE',
    source: 'spec "Authentication" 2',
    rule: 'callback proxy uses one PKCE pair client-to-server and a separate pair server-to-forge',
  },
  {
    id: 'AUTH-VERIFIER-REQUIRED',
    source: 'spec "Authentication" 3',
    rule: 'the client code_verifier is mandatory at /token when a challenge was stored; a wrong one is refused',
  },
  {
    id: 'AUTH-PUBLIC-CLIENT',
    source: 'spec "Authentication" 4',
    rule: 'no client secret is used with the forge; registered clients are public (token_endpoint_auth_method none)',
  },
  {
    id: 'ALLOW-DEFAULTS',
    source: 'spec "Authentication" 5; issue item 4',
    rule: 'defaults: loopback on any port and the well-known shared callbacks',
  },
  {
    id: 'ALLOW-SYNTAX',
    source: 'issue item 4',
    rule: 'entries combined by commas; exact entries; https prefixes ending in /* keep their trailing slash; invalid entries stop the start',
  },
  {
    id: 'ALLOW-PREFIX-STRICT',
    source: 'review 9',
    rule: 'a /* prefix entry admits no query, no %2F, %5C or %2E (any case) and no dot segments after the prefix',
  },
  { id: 'ALLOW-STAR', source: 'spec "Authentication" 5; issue item 4', rule: '* disables the allowlist, with a warning' },
  {
    id: 'CONSENT-PAGE',
    source: 'spec "Authentication" 6; issue item 6',
    rule: 'the consent page shows the client name and where the browser goes next (host, or "this device" for loopback); Approve is required',
  },
  {
    id: 'CONSENT-CSRF',
    source: 'issue item 6',
    rule: 'consent is CSRF-protected by a token bound to a cookie: a post without or with a wrong token is refused',
  },
  { id: 'CONSENT-HEADERS', source: 'issue item 6', rule: 'CSP with frame-ancestors none, no third-party assets, readable on a phone' },
  {
    id: 'CONSENT-MEMORY',
    source: 'spec "Authentication" 6, "Limits"',
    rule: 'approval is remembered 30 days per client and callback URL, in a sealed cookie',
  },
  {
    id: 'CONSENT-DENY',
    source: 'spec "Authentication" 6; issue item 6',
    rule: 'Deny redirects the client with error=access_denied, its state and iss',
  },
  // Issue items 2, 8, 9, 10
  {
    id: 'DISCOVERY-PRM',
    source: 'issue item 2; forge-facts.md',
    rule: 'RFC 9728 metadata at /.well-known/oauth-protected-resource and …/mcp, resource = {MCP_SERVER_URL}/mcp',
  },
  {
    id: 'DISCOVERY-ASM',
    source: 'issue item 2; forge-facts.md',
    rule: 'RFC 8414 metadata with issuer, endpoints incl. registration and revocation, S256, none, refresh, metadata documents, iss support',
  },
  { id: 'DISCOVERY-PATH', source: 'issue item 2', rule: 'path-prefixed metadata variants when MCP_SERVER_URL has a path' },
  { id: 'DISCOVERY-CORS', source: 'issue item 2', rule: 'CORS on the metadata and on /token' },
  {
    id: 'MCP-401',
    source: 'issue item 2; forge-facts.md',
    rule: '/mcp without a valid bearer: 401 with WWW-Authenticate: Bearer resource_metadata="{MCP_SERVER_URL}/.well-known/oauth-protected-resource/mcp", scope="…"',
  },
  { id: 'MCP-EXPIRED-401', source: 'issue item 2; forge-facts.md', rule: 'an expired token is 401, never 400' },
  { id: 'TOKEN-ERRORS', source: 'issue item 8; STYLE.md 7', rule: 'token errors follow RFC 6749 with Cache-Control: no-store' },
  { id: 'TOKEN-REFRESH', source: 'issue item 8', rule: 'the refresh_token grant is forwarded to the forge' },
  { id: 'TOKEN-REVOKE', source: 'issue item 8', rule: 'POST /revoke is forwarded to the forge revoke endpoint' },
  { id: 'REPLAY-LOCAL', source: 'issue item 8', rule: 'stateless: a consumed sealed code is refused on the replica that saw it' },
  {
    id: 'REPLAY-REDIS',
    source: 'issue item 8',
    rule: 'stateless with OAUTH_REPLAY_CACHE_URL=redis://…: a consumed sealed code is refused on every replica',
  },
  { id: 'VALIDATE-FORGE', source: 'issue item 9', rule: 'the /mcp bearer is validated against the forge (/oauth/token/info)' },
  {
    id: 'VALIDATE-CACHE',
    source: 'issue item 9',
    rule: 'a bounded cache keyed by a hash of the token, TTL at most 60 s: a burst of calls costs one forge check',
  },
  {
    id: 'REVOKE-FORGET',
    source: 'review 8',
    rule: '/revoke drops the token (and, for a refresh token, its access token) from the /mcp validation cache; a refresh drops the old access token',
  },
  { id: 'VALIDATE-DROP-401', source: 'issue item 9', rule: 'the cache entry is dropped when the forge answers 401' },
  {
    id: 'MCP-TRANSPORT',
    source: 'issue item 9',
    rule: 'the MCP SDK (v2, @modelcontextprotocol/server) serves /mcp and stdio; tools have zod schemas and forge errors become tool errors',
  },
  { id: 'ERRORS-GENERIC', source: 'spec "Errors"; issue item 10', rule: 'clients get generic messages; details go to the log' },
  { id: 'NO-SECRETS-LOGGED', source: 'issue item 10', rule: 'no token, code, verifier, state or secret is ever logged' },
  // Review of the first version (regression tests are named after the bug)
  {
    id: 'SIGNIN-RATE',
    source: 'review 1',
    rule: 'pending sign-ins (transactions) are created at most OAUTH_SIGNIN_RATE_LIMIT_PER_10_MIN (default 30) per client address per 10 minutes; beyond, a 429 page with Retry-After, so the 1000-entry LRU cannot be flushed by one client',
  },
  {
    id: 'CONSENT-ONCE',
    source: 'review 1',
    rule: 'a sealed consent request (the consent form) is single-use: its jti is remembered in the replay cache until it expires',
  },
  {
    id: 'REG-SEALED-SIZE',
    source: 'review 4',
    rule: 'stateless /register refuses redirect URIs totalling over 2 KiB (invalid_client_metadata), so sealed client ids stay usable at /authorize',
  },
  {
    id: 'ROTATION-CONSENT',
    source: 'review 5',
    rule: 'consent forms survive a secret rotation: CSRF tokens are accepted under the current and previous stateless secrets; the documented rotation is two-phase',
  },
  {
    id: 'CIMD-SSRF',
    source: 'review 6',
    rule: 'metadata document fetches refuse ::/96, ::ffff:0:0:0/96, NAT64 to private IPv4, ports other than 443, and uncached fetches beyond a limit per client address',
  },
  {
    id: 'TOKEN-FAIL-REVOKE',
    source: 'review 7',
    rule: 'forge tokens behind a proxy code that is burnt by a failed /token, or expires or is evicted unredeemed, are revoked at the forge (best effort, in the background)',
  },
  {
    id: 'CALLBACK-NO-DEAD-END',
    source: 'review 10',
    rule: 'every /callback failure is an HTML page, or a redirect to the client with error=server_error, state and iss when the client is known',
  },
  {
    id: 'CONSENT-UNVERIFIED',
    source: 'review 11',
    rule: 'the consent page labels the name of a dynamically registered client "not verified"',
  },
  {
    id: 'CONFIG-TOKEN-PATH',
    source: 'review 11',
    rule: 'FORGE_OAUTH_TOKEN_PATH has no configuration default; unset, the local flow uses ~/.config/platform/forge-token.json',
  },
  // Issue: end-to-end tests
  {
    id: 'E2E-PASSTHROUGH',
    source: 'issue "Tests that must exist"',
    rule: 'the official SDK client and Chromium complete passthrough and call a tool',
  },
  {
    id: 'E2E-PROXY',
    source: 'issue "Tests that must exist"',
    rule: 'the official SDK client and Chromium complete callback proxy and call a tool',
  },
  {
    id: 'E2E-STATELESS-3',
    source: 'issue "Tests that must exist"',
    rule: 'stateless callback proxy across three server processes behind a round-robin proxy, each step on another replica',
  },
  // Issue 17 item 1: both protocol eras on one stateless /mcp
  {
    id: 'E2E-SDK-BOTH',
    source: 'issue 17 item 1, "Tests that must exist"',
    rule: 'the v1 SDK client and the v2 SDK client (2025 era and 2026-07-28) sign in through the OAuth flow and call tools, on one server and across the stateless replicas',
  },
  {
    id: 'MCP-DISCOVER',
    source: 'issue 17 item 1; mcp-facts 1.1.2',
    rule: 'server/discover answers without initialize, naming 2026-07-28 among the supported versions, with resultType, ttlMs and cacheScope',
  },
  {
    id: 'MCP-HEADERS',
    source: 'issue 17 item 1; mcp-facts 1.1.7',
    rule: 'a missing or disagreeing Mcp-Method/Mcp-Name is 400 with -32020, an unsupported version 400 with -32022 (data.supported, data.requested), an unknown method 404 with -32601; none reaches the forge',
  },
  {
    id: 'MCP-CACHE',
    source: 'issue 17 item 1; mcp-facts 1.1.8–9',
    rule: 'tools/list carries ttlMs and cacheScope (private: the list may vary by authorization), and every 2026-07-28 result resultType; 2025-era answers carry neither',
  },
  {
    id: 'MCP-ERAS',
    source: 'issue 17 item 1',
    rule: 'initialize-based 2025-06-18 and 2025-11-25 are served beside 2026-07-28 on the same /mcp, with no session id issued or required',
  },
  {
    id: 'MCP-405',
    source: 'issue 17 item 1; mcp-facts 1.1.10',
    rule: 'GET and DELETE on /mcp answer 405 with Allow: POST',
  },
  {
    id: 'MCP-SSE-PROGRESS',
    source: 'issue 17 item 1',
    rule: 'a POST is answered with JSON, or with its own SSE stream carrying notifications/progress when the tool call asked for progress, in both eras',
  },
  // Issue 17 item 2: transport safety
  {
    id: 'MCP-ORIGIN',
    source: 'issue 17 item 2; mcp-facts 1.1.10',
    rule: "an Origin other than MCP_SERVER_URL's own or one in MCP_ALLOWED_ORIGINS, and null, is 403 before the bearer is checked; no Origin passes; CORS echoes only an allowed origin",
  },
  {
    id: 'MCP-HOST',
    source: 'issue 17 item 2',
    rule: 'bound to loopback, a Host other than the public host or a loopback name is 403 (DNS rebinding)',
  },
  {
    id: 'MCP-BODY-LIMIT',
    source: 'issue 17 item 2',
    rule: 'a body over the limit is 413 and a body that is not JSON is 400, as JSON-RPC errors',
  },
  {
    id: 'MCP-RATE',
    source: 'issue 17 item 2',
    rule: 'per-address (before the bearer) and per-token request limits answer 429 with Retry-After',
  },
  {
    id: 'MCP-RATE-SHARED',
    source: 'issue 17 item 2; ARCHITECTURE "Scale beyond one machine"',
    rule: 'with PLATFORM_REDIS_URL the /mcp limits are shared by every replica',
  },
  // Issue 17 item 3: one tool contract
  {
    id: 'TOOL-ANNOTATIONS-LOCK',
    source: 'issue 17 item 3',
    rule: 'every tool sets readOnlyHint, destructiveHint, idempotentHint and openWorldHint explicitly, locked per tool by a test',
  },
  {
    id: 'TOOL-CONTRACT',
    source: 'issue 17 item 3',
    rule: 'every tool has a title, a description saying when to use it, described input fields, an outputSchema; the order is deterministic',
  },
  { id: 'TOOL-LIST-BUDGET', source: 'issue 17 item 4', rule: 'the default tools/list answer stays under 32 KB of JSON' },
  {
    id: 'TOOL-RESULT',
    source: 'issue 17 items 3, 6',
    rule: 'results carry structuredContent and the same object as a compact text rendering marked untrusted; lists are slim unless detail=full; get_server_info names server, toolsets, user and forge version',
  },
  {
    id: 'TOOL-PAGING',
    source: 'issue 17 item 3',
    rule: 'list tools answer {items, next_cursor, has_more, total}; paging over several pages loses and repeats nothing and declares the end',
  },
  {
    id: 'TOOL-INCLUDE-PAGES',
    source: 'issue 17 item 3',
    rule: 'each paged include of get_issue and get_merge_request carries next_cursor; include_cursor with that include alone reads its next page, so every item is reachable once and the end is declared',
  },
  {
    id: 'TOOL-ERRORS',
    source: 'issue 17 items 3, 5',
    rule: 'forge failures are isError results with structuredContent.error {type, status, message, retry_after_seconds?, required_scope?}: 404, 403 insufficient_scope, both 429 flavours with the wait, 5xx, timeout and an HTML answer each map to their type',
  },
  {
    id: 'TOOL-ERRORS-VALIDATION',
    source: 'issue 17 item 3',
    rule: 'arguments the input schema refuses are isError results with structuredContent.error type validation (pooled, per-request and stdio), naming the field, never echoing the value',
  },
  {
    id: 'TOOL-PAGING-UNCOUNTED',
    source: 'issue 17 item 3',
    rule: 'the dev forge omits x-total, x-total-pages and rel=last above 10,000 records as GitLab does, keeping x-next-page; list tools then answer without total',
  },
  {
    id: 'TOOL-UNTRUSTED',
    source: 'issue 17 item 3',
    rule: 'forge text (tool results and resource reads) is stripped of invisible and bidirectional-control characters, and the untrusted frame of the text rendering cannot be closed from inside',
  },
  {
    id: 'TOOL-QUICK-ACTIONS',
    source: 'issue 17 item 3',
    rule: 'bodies with lines starting with / are refused as validation errors before any forge call unless FORGE_ALLOW_QUICK_ACTIONS=true',
  },
  { id: 'TOOL-IDS', source: 'issue 17 item 5', rule: 'a project web URL (or one under it) is accepted wherever a project id is' },
  // Issue 17 item 5: the production forge client
  {
    id: 'FORGE-SELF-HOSTED',
    source: 'issue 17 item 5',
    rule: 'one keep-alive undici pool for tools and OAuth calls; a forge under a path prefix and behind a certificate of a custom CA (FORGE_CA_CERT_PATH, beside NODE_EXTRA_CA_CERTS) is reached; HTTPS_PROXY/NO_PROXY are honoured',
  },
  // Issue 17 item 4: choosing the tool surface
  {
    id: 'SURFACE-ENV',
    source: 'issue 17 item 4',
    rule: 'FORGE_TOOLSETS, FORGE_TOOLS, FORGE_DENIED_TOOLS (names or globs) and FORGE_READ_ONLY set the operator bound, in declared order; an unknown toolset or an entry matching no tool stops the start',
  },
  {
    id: 'SURFACE-NARROW',
    source: 'issue 17 item 4',
    rule: 'a request narrows the bound by toolsets, tools, exclusions and read-only; a tool it hides is refused when called',
  },
  {
    id: 'SURFACE-READONLY',
    source: 'issue 17 item 4',
    rule: 'a write tool hidden by read-only mode is absent from tools/list and refused when called, with nothing written to the forge',
  },
  {
    id: 'SURFACE-WIDEN',
    source: 'issue 17 item 4',
    rule: 'a request naming a toolset or tool outside the operator bound, or lifting read-only, is refused with 400 and JSON-RPC -32602',
  },
  {
    id: 'SURFACE-HEADER',
    source: 'issue 17 item 4',
    rule: 'X-MCP-Toolsets, X-MCP-Tools, X-MCP-Exclude-Tools and X-MCP-Readonly narrow the surface in both protocol eras',
  },
  {
    id: 'SURFACE-URL',
    source: 'issue 17 item 4',
    rule: '/mcp/x/{toolsets}[/readonly] narrows the surface for clients that cannot set headers, behind the same guards as /mcp',
  },
  {
    id: 'MCP-FORGE-401',
    source: 'issue 17 items 3, 5; MCP authorization (invalid token is 401)',
    rule: 'a forge 401 on a tool call answers /mcp with HTTP 401 invalid_token (an SSE answer already started keeps the forbidden result with status 401), and the token is refused from then on',
  },
  {
    id: 'MCP-POOLED',
    source: 'issue 17 benchmark; ARCHITECTURE "Scale beyond one machine"',
    rule: 'plain 2025-era tools/list and tools/call share a server per tool surface with the answers of a per-request server, each call with its own token and surface, nothing kept per client',
  },
  {
    id: 'MCP-JSON',
    source: 'issue 17 item 1',
    rule: 'a JSON answer on /mcp is written whole with its Content-Length, and each request logs one completion line',
  },
  // Issue 18: the toolsets (core, issues, merge_requests) and confirmations
  {
    id: 'TOOLSET-REGISTRY',
    source: 'issue 18 item 1',
    rule: 'tools are declared one module per toolset and listed in order in toolsets.ts; FORGE_TOOLSETS unset serves the default toolsets; get_server_info names only the toolsets of the request',
  },
  {
    id: 'TOOL-CORE',
    source: 'issue 18 item 1',
    rule: 'core: the current or any user (get_user, alias get_current_user), projects, one search over GitLab scopes at global, group or project level, labels',
  },
  {
    id: 'TOOL-ISSUES',
    source: 'issue 18 item 1',
    rule: 'issues: list with filters and cursor, get with concurrent includes (notes, discussions, links, related merge requests), save creates or updates (labels added/removed, assignees by username, close/reopen), notes and replies',
  },
  {
    id: 'TOOL-MERGE-REQUESTS',
    source: 'issue 18 item 1',
    rule: 'merge_requests: list, get with concurrent includes, per-file diffs with path filters, a byte cap and too_large/collapsed, save, review by method, merge with the sha guard and already_merged, rebase',
  },
  {
    id: 'TOOL-CONFIRM',
    source: 'issue 18 item 2',
    rule: 'high-impact writes ask first: form elicitation when the client supports it (accepted goes ahead, declined writes nothing), else a server-minted token bound to the tool, the exact arguments and the user, valid 5 minutes, refused when replayed or with changed arguments',
  },
  // Issue 18: the repository, ci and releases toolsets, resources and prompts, and the dev forge behind them
  {
    id: 'REPO-FILE-WINDOW',
    source: 'issue 18 item 1 (repository)',
    rule: 'file contents come in line windows with total_lines and next_offset, optionally with blame; a binary file comes as metadata and a resource link',
  },
  {
    id: 'REPO-TOOLS',
    source: 'issue 18 item 1 (repository)',
    rule: 'tree with a cursor, commits list and get with stats or patch (capped per file, declared), compare refs with paged diffs, branches with default/protected/merged',
  },
  {
    id: 'REPO-COMMIT',
    source: 'issue 18 item 1 (repository)',
    rule: 'one commit of several actions (create, update by content or by exact old/new replacement found once, move, delete, chmod) on a branch created from start_branch, several replacements of one file applied in order, none lost; branches created and protected',
  },
  {
    id: 'CI-TOOLS',
    source: 'issue 18 item 1 (ci)',
    rule: 'pipelines listed and paged, a pipeline with its jobs filtered by status, a job log cleaned of ANSI and section markers as its tail, byte windows with next_byte_offset, or grep matches with context lines',
  },
  {
    id: 'CI-WRITES',
    source: 'issue 18 items 1, 2 (ci)',
    rule: 'pipelines run with variables, retried and cancelled (a cancel on a protected branch asks first); CI lint of given content or the project file',
  },
  {
    id: 'CI-PROTECTED-REF',
    source: 'issue 18 item 2',
    rule: "a pipeline or job cancel asks first on a branch or tag the forge calls protected (wildcard rules included, from the ref's own protected flag) and when that cannot be checked; not on an unprotected branch",
  },
  {
    id: 'CI-LOG-LINK',
    source: 'issue 18 item 3',
    rule: 'get_job answers a resource_link to the whole log whenever its log window holds less than all of it',
  },
  {
    id: 'REVIEW-LINES',
    source: 'issue 18 item 1 (merge_requests)',
    rule: 'a diff note given one line number gets the other from the file diff (added: new only, removed: old only, context: both)',
  },
  {
    id: 'REVIEW-CONTEXT',
    source: 'issue 18 item 1 (merge_requests)',
    rule: 'a diff note on an unchanged (context) line is placed with both its old and new line numbers',
  },
  {
    id: 'REVIEW-OUTSIDE',
    source: 'issue 18 item 1 (merge_requests)',
    rule: 'a diff note on a line or path outside the diff is refused before anything is written',
  },
  {
    id: 'REVIEW-ROLLBACK',
    source: 'issue 18 item 1 (merge_requests)',
    rule: 'a batched review whose step fails deletes the drafts it created and says what could not be undone',
  },
  {
    id: 'REVIEW-OWN-DRAFTS',
    source: 'issue 18 item 1 (merge_requests)',
    rule: "a batched review publishes only the drafts it created, one by one; the user's other drafts stay drafts",
  },
  {
    id: 'REVIEW-LEFTOVER',
    source: 'issue 18 item 1 (merge_requests)',
    rule: 'a retry after a failed batched review publishes each note once, and reports the number it published',
  },
  {
    id: 'REVIEW-DEVFORGE',
    source: 'issue 18 item 4',
    rule: "the dev forge publishes and deletes one draft note as GitLab does (204; 404 for a missing or another user's draft)",
  },
  {
    id: 'FORGE-WEB-URLS',
    source: 'issue 17 item 5',
    rule: 'web URLs of a project, issue, merge request, file, commit, pipeline or job are accepted where ids are (also under a path-prefixed FORGE_URL), filling the number, SHA or path; a URL of another host is a validation error',
  },
  {
    id: 'TOOL-MATRIX',
    source: 'issue 18 tests',
    rule: 'every registered tool, and each include, method, scope and action value of the consolidated ones, is called through the v2 and v1 SDK clients over Streamable HTTP and over stdio against the dev forge, each answer valid against its listed outputSchema with its text rendering; a tool without an entry fails the matrix',
  },
  {
    id: 'TOOL-OPTIN',
    source: 'issue 18 item 1 (opt-in toolsets)',
    rule: 'the wiki, releases and admin toolsets are opt-in: absent from the default tools/list, listed in registry order when named',
  },
  {
    id: 'TOOL-WIKI',
    source: 'issue 18 item 1 (wiki)',
    rule: 'wiki pages listed with a cursor (content on request), read by slug, created or updated (renamed) by save_wiki_page, found by search wiki_blobs; delete_wiki_page is confirmed',
  },
  {
    id: 'TOOL-RELEASES',
    source: 'issue 18 item 1 (releases)',
    rule: 'releases listed with a cursor and read with notes; save_release creates (the tag from ref when missing) or updates; milestones listed with state and search filters and saved (create, update, close, reopen)',
  },
  {
    id: 'TOOL-ADMIN',
    source: 'issue 18 item 1 (admin)',
    rule: 'CI/CD variables listed without values unless reveal_values, masked or hidden values never; members with their role, inherited on request; webhooks listed and saved, their secret token and URL credentials never returned',
  },
  {
    id: 'TOOL-READONLY',
    source: 'issue 18 tests',
    rule: 'read-only mode lists none of the write tools and refuses each when called; a read_api token writing gets insufficient_scope',
  },
  {
    id: 'MCP-RESOURCES',
    source: 'issue 18 item 3',
    rule: 'repository files at a ref and job logs are resource templates read with the caller’s token; tools returning large files or logs link to them',
  },
  {
    id: 'MCP-PROMPTS',
    source: 'issue 18 item 3',
    rule: 'two prompts, review a merge request and triage an issue, expand to plans that name the tools and ask before writing',
  },
  {
    id: 'MCP-COMPLETIONS',
    source: 'issue 18 item 3',
    rule: 'completion/complete offers the user’s project paths and a project’s branches and tags, with hasMore when the forge has more',
  },
]);
