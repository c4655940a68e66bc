/**
 * The admin API's rules as requirement ids, each with the spec section it comes from
 * (`../shared/spec/model-provider-admin-api.md`). Every test that pins a rule cites its id in its name, for example
 * `it('[ADM-LOCK-2] a stale version is 409 stale_object', …)`; `requirements.test.ts` fails when a requirement has
 * no citing test or a test cites an unknown id (STYLE.md 12).
 *
 * Part 2 (definition commands, discovery, model test, admission) will add its ids here with its tests.
 */
export interface Requirement {
  /** Where in the spec (or the issue) the rule is stated. */
  source: string;
  text: string;
}

export const REQUIREMENTS = {
  // Catalog (issue 4 deliverable 1; spec "Provider configuration")
  'ADM-CAT-1': { source: 'issue 4 §1', text: 'The catalog is read from YAML/JSON files in PLATFORM_CATALOG_DIR, by default the repository catalog resolved from the package root' },
  'ADM-CAT-2': { source: 'issue 4 §1', text: 'The default catalog ships an OpenAI-compatible provider, Anthropic, Google Gemini, Mistral and a local OpenAI-compatible server, several models each, inheriting shared definitions' },
  'ADM-CAT-3': { source: 'Errors: 503 model_plane_unavailable', text: 'A missing or invalid catalog file makes reads 503 model_plane_unavailable (never an empty list) and a log line names the file and the reason' },
  'ADM-CAT-5': { source: 'Errors: 503 model_plane_unavailable (never an empty list); issue 4 §1', text: 'An empty or truncated catalog file (null, or declaring neither providers nor model_definitions) and a catalog with zero providers make the model plane unavailable, with a log line naming the file' },
  'ADM-CAT-4': { source: 'Provider configuration: model_definitions; Model definition fields: pricing', text: 'Shared model definitions are price-free; prices are never inherited' },
  // Model definition grammar and composition
  'ADM-DEF-1': { source: 'Inheritance and composition', text: 'Objects merge recursively except limits; arrays and scalars replace; null keeps its meaning; an unknown inherit is invalid' },
  'ADM-DEF-2': { source: 'Model definition fields', text: 'input_modalities default []; output_modalities follow the workload; tool_calls, streaming, prompt_caching inherit the wire and explicit false disables' },
  'ADM-DEF-3': { source: 'Generation parameter presets', text: 'Presets for max_output_tokens and verbosity; other parameters need kind; omission inherits the wire table, {} empties it; output_format false disables structured output' },
  'ADM-DEF-4': { source: 'token_counter', text: 'Omission inherits the wire counter, null selects the byte estimate; hub, bpe and anchored fields; safety_factor at least 1' },
  'ADM-DEF-5': { source: 'model_identity; Limits', text: 'model_identity is nonempty, at most 256 bytes, without leading or trailing whitespace' },
  'ADM-DEF-6': { source: 'Prices', text: 'Prices are optional and never make a model unavailable; a complete zero formula is allowed; decimals are non-negative and formulas complete' },
  'ADM-DEF-7': { source: 'Model definition fields: model_id', text: 'model_id defaults to the reference after the provider\'s first "/"' },
  'ADM-DEF-9': { source: 'Inheritance and composition: an invalid composed model; issue 12 item 4', text: 'The merged capabilities must pass the authored grammar: a token_counter of another kind merged into an inherited one is an invalid composed model, and the loader refuses the catalog naming the file, provider and model; the shipped catalog loads and every composed model matches the published row schema' },
  'ADM-DEF-8': { source: 'wire_options.prompt_format', text: 'prompt_format accepts only the one supported layout value' },
  // Rows and reads
  'ADM-ROW-1': { source: 'Model row', text: 'Model rows carry ref, capabilities, pricing, available, visible and unavailable_reason' },
  'ADM-ROW-2': { source: 'Model row: unavailable_reason', text: 'unavailable_reason is the first refusal in the order provider_disabled, model_unavailable, model_hidden, missing_credential, reauthorization_required, credential_unusable' },
  'ADM-ROW-3': { source: 'Provider row', text: 'Provider rows carry every listed field; lock_version is null without a policy; unavailable_until is the admission floor' },
  'ADM-ROW-4': { source: 'Provider configuration', text: 'The singular read has configuration.definition, source, models (definition, source, removed) and model_definitions, unexpanded, without credentials' },
  'ADM-READ-1': { source: 'Endpoints: GET /models', text: 'GET /models returns the whole catalog ordered by ref including unavailable models; workload and available filter it' },
  'ADM-READ-2': { source: 'Model row: ref', text: 'References whose upstream id contains "/" work in reads, commands and the CLI' },
  'ADM-READ-3': { source: 'Endpoints: GET /model_providers[/{id}]', text: 'Provider list and singular read; an unknown provider is 404 not_found' },
  'ADM-READ-4': { source: 'What the service does', text: 'Reads make no provider network request' },
  'ADM-READ-5': { source: 'What the service does: changes visible to the next read; issue 4 benchmark', text: 'Every read queries the database (one statement); concurrent reads of an Account share only a query that started after they arrived, so no read misses a write committed before it, on any replica' },
  'ADM-REF-1': { source: 'Endpoints rule 1', text: 'model is the complete reference in the body; a reference outside the provider or an unknown model is 404 not_found' },
  // Versions
  'ADM-LOCK-1': { source: 'Endpoints rule 2; Limits', text: 'A non-null expected_lock_version must be an integer 0..2147483647, otherwise 400 parameter_invalid' },
  'ADM-LOCK-2': { source: 'Endpoints rule 2', text: 'A stale version is 409 stale_object with no automatic retry' },
  'ADM-LOCK-3': { source: 'Endpoints rule 2', text: 'Null conflicts with an existing policy; a non-null version conflicts with an absent policy (lane, visibility, availability)' },
  'ADM-LOCK-4': { source: 'Side rules', text: 'A same-value visibility or availability request with an existing policy leaves the version unchanged' },
  'ADM-LOCK-5': { source: 'issue 4 §2; Versioning', text: 'Two commands racing on one version give one success and one 409 stale_object, on SQLite and PostgreSQL; no update is lost' },
  'ADM-LOCK-6': { source: 'issue 4 §2', text: 'Creating an absent policy is race-safe: a unique key, and the loser gets 409 stale_object' },
  'ADM-LOCK-7': { source: 'Limits: expected_lock_version; Errors: 409 stale_object', text: 'A policy at lock_version 2147483647 refuses further changes with 409 stale_object (declared in OpenAPI); same-value requests still succeed' },
  // Lane, visibility, availability
  'ADM-LANE-1': { source: 'States: Lane PUT lane enabled true; rule 5', text: 'Enabling with a matching (null when untouched) version enables and creates the policy if missing' },
  'ADM-LANE-2': { source: 'States: Lane PUT lane enabled false', text: 'Disabling keeps policy and credentials; without a policy it is 404 not_found' },
  'ADM-LANE-3': { source: 'Endpoints rule 5', text: 'A non-boolean enabled is 400 parameter_invalid' },
  'ADM-VIS-1': { source: 'States: untouched provider; rule 6', text: 'Visibility with a null version on an untouched provider creates a disabled policy at version 0 with that visibility' },
  'ADM-VIS-2': { source: 'States: Model visible false; rule 6', text: 'Hiding makes the model visible false and available false and changes no other model' },
  'ADM-VIS-3': { source: 'States: Model visible true', text: 'Showing restores visibility only: it does not enable the provider, install a key or clear the invalid mark' },
  'ADM-VIS-4': { source: 'Endpoints rule 6', text: 'A non-boolean visible is 400 parameter_invalid' },
  'ADM-AVL-1': { source: 'Endpoints rule 7', text: 'Availability requires an existing policy and works on disabled providers' },
  'ADM-AVL-2': { source: 'States: available false; rule 7', text: 'Marking invalid gives visible false, available false, reason model_unavailable, and members stop seeing it' },
  'ADM-AVL-3': { source: 'States: available true', text: 'Clearing the invalid mark keeps a manual hide' },
  'ADM-AVL-4': { source: 'Endpoints table; Errors', text: 'A non-boolean available is 400 parameter_invalid; a missing expected_lock_version is 400 parameter_missing' },
  'ADM-CMD-1': { source: 'Endpoints; Errors', text: 'Mutation bodies have the root command (missing: 400 parameter_missing); successes are 200; errors use the {error:{code,message}} envelope' },
  // Credentials
  'ADM-KEY-1': { source: 'States: Lane PUT api_key; rule 9', text: 'PUT api_key installs the key and enables the provider, also when the same key is saved again; the key is never returned' },
  'ADM-KEY-2': { source: 'Endpoints rule 9', text: 'A blank key is 400 parameter_invalid and availability is unchanged' },
  'ADM-KEY-3': { source: 'Endpoints rule 9', text: 'API key commands on oauth_tokens or none lanes, or on non-API-key material, are 409 material_kind_conflict' },
  'ADM-KEY-4': { source: 'Endpoints rule 9', text: 'The same normalized key leaves the credential generation unchanged; a changed key advances it' },
  'ADM-KEY-5': { source: 'Endpoints rule 9', text: 'Credential and availability changes commit together and keep model settings' },
  'ADM-KEY-6': { source: 'Endpoints rule 9; side rules', text: 'DELETE api_key clears the key (configured false) and leaves the policy and enabled unchanged; no key is 404' },
  'ADM-KEY-7': { source: 'issue 4 §6; Authentication 8', text: 'Keys are AES-256-GCM encrypted at rest with a key id; platform secrets rotate re-encrypts under the current key; previous keys still decrypt' },
  'ADM-KEY-8': { source: 'What the service does; Authentication 8', text: 'No response, log line or error contains key material, a preview, a length or a fingerprint' },
  'ADM-ERR-1': { source: 'What the service does: no API returns credential material; Authentication 8', text: 'Error messages never repeat client input: unknown field names only when they match [a-z_]{1,64}, never a submitted model reference, provider id or value' },
  'ADM-KEY-9': { source: 'Model row: unavailable_reason credential_unusable; issue 4 §6', text: 'Whether stored material decrypts is decided per (Account, provider) row: a sealed value copied into another row is credential_unusable there' },
  'ADM-KEY-10': { source: 'Endpoints rule 9: same normalized key, same generation', text: 'API keys that are not well-formed Unicode (lone surrogates) or hold control characters are 400 parameter_invalid' },
  // Cost unit, limits
  'ADM-COST-1': { source: 'Endpoints rule 10', text: 'GET cost_unit is null until configured; PUT configures it once and an existing unit cannot be replaced' },
  'ADM-LIM-1': { source: 'Limits; rule 11', text: 'A policy document over 256 distinct references or 2 MiB of canonical JSON is 422 validation_failed and nothing changes' },
  'ADM-LIM-2': { source: 'Limits; Endpoints rule 1; Provider configuration: source', text: 'Hidden or invalid refs whose model left the catalog can still be cleared (visible/available true) so they stop counting; a provider removed from the catalog while a policy exists reads as removed (absent from lists, singular read kept, commands 404)' },
  // Authentication
  'ADM-AUTH-1': { source: 'Authentication 1-2', text: 'Active owners and admins are accepted with an API Session bearer or a platform-plane token' },
  'ADM-AUTH-2': { source: 'Authentication 3', text: 'A non-admin Human Session is 403 administrator_required' },
  'ADM-AUTH-3': { source: 'Authentication 3', text: 'Member-plane and executor tokens are 401 unauthorized, even for administrators' },
  'ADM-AUTH-4': { source: 'Authentication 4', text: 'Revocation, deactivation and demotion apply to the next request' },
  'ADM-AUTH-5': { source: 'Authentication 5', text: 'A browser cookie permits only GET and HEAD; an invalid or wrong-plane Authorization never falls back to the cookie' },
  'ADM-AUTH-6': { source: 'Errors: 401', text: 'A missing or invalid credential is 401 unauthorized' },
  // Member plane
  'ADM-MEM-1': { source: 'Endpoints rule 13; rules 6-7', text: 'Member routes are read-only for member-plane and executor tokens; hidden and invalid models are absent' },
  'ADM-MEM-2': { source: 'Endpoints rule 13', text: 'Provider writes have no member-plane route or alias' },
  'ADM-MEM-3': { source: 'What the service does', text: 'Admin changes are visible to the next member read' },
  // CLI and OpenAPI
  'ADM-CLI-1': { source: 'Endpoints rule 12', text: 'platform models hide|unhide|invalidate|restore read the provider version first and report a conflict without retrying' },
  'ADM-API-2': { source: 'Errors; issue 4 §9', text: 'OpenAPI declares every error a route can answer: 401 on authenticated routes, 403 on admin routes, 400/413/415 on routes with a body, 409 stale_object on versioned commands; the server answers 413 and 415 in the envelope' },
  'ADM-API-3': { source: 'issue 12 item 4', text: 'Every REST response a test server sends under /api/v1 and /agent_api/v1 holds to the OpenAPI document it serves (status, content type, body, documented headers; errors in the envelope); an undocumented route or status, or a drifting body, fails the test' },
  'ADM-API-4': { source: 'issue 12 item 4', text: 'The OpenAPI document describes the session routes and itself, has a relative servers entry, and is served with Cache-Control public, no-cache and an ETag (304 on If-None-Match)' },
  'ADM-API-1': { source: 'issue 4 §9', text: 'GET /api/v1/openapi.json describes every admin and member route in OpenAPI 3.1 from the schemas that validate requests' },
} as const satisfies Record<string, Requirement>;

export type RequirementId = keyof typeof REQUIREMENTS;
