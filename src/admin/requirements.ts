import { defineRequirements } from '../../test/support/requirements.ts';

/**
 * The admin API's rules as requirement ids, each with the spec section it comes from
 * (`../shared/spec/model-provider-admin-api.md`). Every test that pins a rule cites its id in its name, for example
 * `it('[ADM-LOCK-2] a stale version is 409 stale_object', …)`; `requirements.test.ts` fails when a requirement has
 * no citing test or a test cites an unknown id (STYLE.md 12). Only tests read this list.
 *
 * Part 2 (definition commands, discovery, model test, admission) will add its ids here with its tests.
 */
export const REQUIREMENTS = defineRequirements([
  // Catalog (issue 4 deliverable 1; spec "Provider configuration")
  {
    id: 'ADM-CAT-1',
    source: 'issue 4 §1',
    rule: 'The catalog is read from YAML/JSON files in PLATFORM_CATALOG_DIR, by default the repository catalog resolved from the package root',
  },
  {
    id: 'ADM-CAT-2',
    source: 'issue 4 §1',
    rule: 'The default catalog ships an OpenAI-compatible provider, Anthropic, Google Gemini, Mistral and a local OpenAI-compatible server, several models each, inheriting shared definitions',
  },
  {
    id: 'ADM-CAT-3',
    source: 'Errors: 503 model_plane_unavailable',
    rule: 'A missing or invalid catalog file makes reads 503 model_plane_unavailable (never an empty list) and a log line names the file and the reason',
  },
  {
    id: 'ADM-CAT-5',
    source: 'Errors: 503 model_plane_unavailable (never an empty list); issue 4 §1',
    rule: 'An empty or truncated catalog file (null, or declaring neither providers nor model_definitions) and a catalog with zero providers make the model plane unavailable, with a log line naming the file',
  },
  {
    id: 'ADM-CAT-4',
    source: 'Provider configuration: model_definitions; Model definition fields: pricing',
    rule: 'Shared model definitions are price-free; prices are never inherited',
  },
  // Model definition grammar and composition
  {
    id: 'ADM-DEF-1',
    source: 'Inheritance and composition',
    rule: 'Objects merge recursively except limits; arrays and scalars replace; null keeps its meaning; an unknown inherit is invalid',
  },
  {
    id: 'ADM-DEF-2',
    source: 'Model definition fields',
    rule: 'input_modalities default []; output_modalities follow the workload; tool_calls, streaming, prompt_caching inherit the wire and explicit false disables',
  },
  {
    id: 'ADM-DEF-3',
    source: 'Generation parameter presets',
    rule: 'Presets for max_output_tokens and verbosity; other parameters need kind; omission inherits the wire table, {} empties it; output_format false disables structured output',
  },
  {
    id: 'ADM-DEF-4',
    source: 'token_counter',
    rule: 'Omission inherits the wire counter, null selects the byte estimate; hub, bpe and anchored fields; safety_factor at least 1',
  },
  {
    id: 'ADM-DEF-5',
    source: 'model_identity; Limits',
    rule: 'model_identity is nonempty, at most 256 bytes, without leading or trailing whitespace',
  },
  {
    id: 'ADM-DEF-6',
    source: 'Prices',
    rule: 'Prices are optional and never make a model unavailable; a complete zero formula is allowed; decimals are non-negative and formulas complete',
  },
  {
    id: 'ADM-DEF-7',
    source: 'Model definition fields: model_id',
    rule: 'model_id defaults to the reference after the provider\'s first "/"',
  },
  {
    id: 'ADM-DEF-9',
    source: 'Inheritance and composition: an invalid composed model; issue 12 item 4',
    rule: 'The merged capabilities must pass the authored grammar: a token_counter of another kind merged into an inherited one is an invalid composed model, and the loader refuses the catalog naming the file, provider and model; the shipped catalog loads and every composed model matches the published row schema',
  },
  { id: 'ADM-DEF-8', source: 'wire_options.prompt_format', rule: 'prompt_format accepts only the one supported layout value' },
  // Definition commands (issue 14; spec "Provider configuration", "Provider declaration", state table, rules 2, 3, 11)
  {
    id: 'ADM-PDEF-1',
    source: 'Endpoints: PUT definition; rule 3',
    rule: 'PUT definition on a catalog provider stores an override (source override); saving never enables a provider, installs a credential or calls upstream',
  },
  {
    id: 'ADM-PDEF-2',
    source: 'States: Provider definition PUT definition new provider id',
    rule: 'PUT definition with a new provider id creates it disabled with source custom, at version 0',
  },
  {
    id: 'ADM-PDEF-3',
    source: 'States: Provider definition DELETE definition file-backed',
    rule: 'DELETE definition returns a catalog provider to its file declaration (source catalog)',
  },
  {
    id: 'ADM-PDEF-4',
    source: 'States: Provider definition DELETE definition custom; GET /model_providers',
    rule: 'DELETE definition of a custom provider removes the declaration, disables the kept policy, keeps the credential; it leaves the lists and the singular read shows source removed, definition null and the version',
  },
  {
    id: 'ADM-PDEF-5',
    source: 'Endpoints: GET /model_providers/{id}',
    rule: 'A removed custom provider is recreated with the version read from it (null conflicts with the kept policy)',
  },
  {
    id: 'ADM-PDEF-6',
    source: 'Provider declaration; rule 3',
    rule: 'An incomplete declaration, an unsupported api_format or credentials lane, or one that leaves a model uncomposable is 422 validation_failed naming the field, nothing saved',
  },
  {
    id: 'ADM-MDEF-1',
    source: 'Inheritance and composition: PUT replaces; rule 1',
    rule: 'PUT model_definition replaces the whole stored entry and never merges with the previous one; a ref outside the provider is 404',
  },
  {
    id: 'ADM-MDEF-2',
    source: 'States: Model definition entry DELETE model_definition',
    rule: 'DELETE model_definition writes a removal entry that stays in configuration.models (removed true); the model leaves GET /models',
  },
  {
    id: 'ADM-MDEF-3',
    source: 'States: Model definition entry POST reset',
    rule: 'reset removes the entry and restores file inheritance; a custom model without a file definition disappears',
  },
  {
    id: 'ADM-MDEF-4',
    source: 'Provider configuration',
    rule: 'The stored and returned definition is what was authored (inheritance not expanded, omitted values not filled); rows show the composed result',
  },
  {
    id: 'ADM-MDEF-5',
    source: 'Inheritance and composition; rule 11; Limits',
    rule: 'An unknown inherit, an invalid composed model or a document over its limits is 422 validation_failed naming the field, with the stored policy and version byte-identical',
  },
  {
    id: 'ADM-MDEF-6',
    source: 'Endpoints rule 2',
    rule: 'Definition commands keep the version rules and codes of part 1 (400 parameter_invalid, 409 stale_object, 400 parameter_missing for a missing command)',
  },
  {
    id: 'ADM-LIVE-1',
    source: 'Endpoints rule 3: later reads use the saved definition without a restart',
    rule: 'A definition saved through one replica is seen by the next read on another replica sharing the database, on the admin and member planes',
  },
  {
    id: 'ADM-LIVE-2',
    source: 'Endpoints rule 3; What the service does',
    rule: 'No definition route or read makes an upstream request (a stand-in upstream fails the test when called)',
  },
  // Wire adapters (issue 14 §5)
  {
    id: 'ADM-WIRE-1',
    source: 'Provider declaration: api_format; Model definition fields: inherit the wire',
    rule: 'One adapter module per wire and workload declares workloads, capabilities, the default parameter table and counter, the directory format and the probe; the catalog inherits from these declarations',
  },
  {
    id: 'ADM-WIRE-2',
    source: 'Endpoints rule 8: a fixed small request matching the workload',
    rule: 'Every shipped catalog model has a fixed probe request (or test_input_unavailable for speech without a voice), built without sending anything',
  },
  {
    id: 'ADM-WIRE-3',
    source: 'issue 14 §5',
    rule: 'Adapters build the upstream request for a composed model (URL, credential placement, model id, parameters, tools, structured output, streaming) and refuse what the model does not offer',
  },
  {
    id: 'ADM-WIRE-4',
    source: 'wire_options.prompt_format',
    rule: 'model3_5 merges leading system and developer instructions, sends later ones as user messages in place, keeps stored roles; omission adds no transformation',
  },
  {
    id: 'ADM-WIRE-5',
    source: 'Endpoints rule 4: discovery',
    rule: 'Each directory format is requested and parsed with its paging; a body of another shape is refused',
  },
  // Token counters (issue 14 §4; spec "token_counter")
  {
    id: 'ADM-TOK-1',
    source: 'token_counter: bpe',
    rule: 'bpe counts with a shipped encoding (cl100k_base, o200k_base at least), exactly as the reference tiktoken on the test texts',
  },
  {
    id: 'ADM-TOK-2',
    source: 'token_counter: hub; tokenizer assets',
    rule: 'hub counts with a tokenizer.json installed under PLATFORM_TOKENIZER_DIR before start; a missing or invalid file makes the counter unavailable (shown on the model row) and no other counter is used',
  },
  {
    id: 'ADM-TOK-3',
    source: 'token_counter: anchored',
    rule: 'anchored is the encoding count times the decimal safety_factor, rounded up',
  },
  {
    id: 'ADM-TOK-4',
    source: 'token_counter: null',
    rule: 'null selects the byte estimate; an unknown encoding is unavailable, never replaced',
  },
  // Rows and reads
  { id: 'ADM-ROW-1', source: 'Model row', rule: 'Model rows carry ref, capabilities, pricing, available, visible and unavailable_reason' },
  {
    id: 'ADM-ROW-2',
    source: 'Model row: unavailable_reason',
    rule: 'unavailable_reason is the first refusal in the order provider_disabled, model_unavailable, model_hidden, missing_credential, reauthorization_required, credential_unusable',
  },
  {
    id: 'ADM-ROW-3',
    source: 'Provider row',
    rule: 'Provider rows carry every listed field; lock_version is null without a policy; unavailable_until is the admission floor',
  },
  {
    id: 'ADM-ROW-4',
    source: 'Provider configuration',
    rule: 'The singular read has configuration.definition, source, models (definition, source, removed) and model_definitions, unexpanded, without credentials',
  },
  {
    id: 'ADM-READ-1',
    source: 'Endpoints: GET /models',
    rule: 'GET /models returns the whole catalog ordered by ref including unavailable models; workload and available filter it',
  },
  { id: 'ADM-READ-2', source: 'Model row: ref', rule: 'References whose upstream id contains "/" work in reads, commands and the CLI' },
  {
    id: 'ADM-READ-3',
    source: 'Endpoints: GET /model_providers[/{id}]',
    rule: 'Provider list and singular read; an unknown provider is 404 not_found',
  },
  { id: 'ADM-READ-4', source: 'What the service does', rule: 'Reads make no provider network request' },
  {
    id: 'ADM-READ-5',
    source: 'What the service does: changes visible to the next read; issue 4 benchmark',
    rule: "Every read queries the database (the Account's model-plane version, one statement; the state again only when a write moved it); concurrent reads of an Account share only a query that started after they arrived, so no read misses a write committed before it, on any replica",
  },
  {
    id: 'ADM-REF-1',
    source: 'Endpoints rule 1',
    rule: 'model is the complete reference in the body; a reference outside the provider or an unknown model is 404 not_found',
  },
  // Versions
  {
    id: 'ADM-LOCK-1',
    source: 'Endpoints rule 2; Limits',
    rule: 'A non-null expected_lock_version must be an integer 0..2147483647, otherwise 400 parameter_invalid',
  },
  { id: 'ADM-LOCK-2', source: 'Endpoints rule 2', rule: 'A stale version is 409 stale_object with no automatic retry' },
  {
    id: 'ADM-LOCK-3',
    source: 'Endpoints rule 2',
    rule: 'Null conflicts with an existing policy; a non-null version conflicts with an absent policy (lane, visibility, availability)',
  },
  {
    id: 'ADM-LOCK-4',
    source: 'Side rules',
    rule: 'A same-value visibility or availability request with an existing policy leaves the version unchanged',
  },
  {
    id: 'ADM-LOCK-5',
    source: 'issue 4 §2; Versioning',
    rule: 'Two commands racing on one version give one success and one 409 stale_object, on SQLite and PostgreSQL; no update is lost',
  },
  {
    id: 'ADM-LOCK-6',
    source: 'issue 4 §2',
    rule: 'Creating an absent policy is race-safe: a unique key, and the loser gets 409 stale_object',
  },
  {
    id: 'ADM-LOCK-7',
    source: 'Limits: expected_lock_version; Errors: 409 stale_object',
    rule: 'A policy at lock_version 2147483647 refuses further changes with 409 stale_object (declared in OpenAPI); same-value requests still succeed',
  },
  // Lane, visibility, availability
  {
    id: 'ADM-LANE-1',
    source: 'States: Lane PUT lane enabled true; rule 5',
    rule: 'Enabling with a matching (null when untouched) version enables and creates the policy if missing',
  },
  {
    id: 'ADM-LANE-2',
    source: 'States: Lane PUT lane enabled false',
    rule: 'Disabling keeps policy and credentials; without a policy it is 404 not_found',
  },
  { id: 'ADM-LANE-3', source: 'Endpoints rule 5', rule: 'A non-boolean enabled is 400 parameter_invalid' },
  {
    id: 'ADM-VIS-1',
    source: 'States: untouched provider; rule 6',
    rule: 'Visibility with a null version on an untouched provider creates a disabled policy at version 0 with that visibility',
  },
  {
    id: 'ADM-VIS-2',
    source: 'States: Model visible false; rule 6',
    rule: 'Hiding makes the model visible false and available false and changes no other model',
  },
  {
    id: 'ADM-VIS-3',
    source: 'States: Model visible true',
    rule: 'Showing restores visibility only: it does not enable the provider, install a key or clear the invalid mark',
  },
  { id: 'ADM-VIS-4', source: 'Endpoints rule 6', rule: 'A non-boolean visible is 400 parameter_invalid' },
  { id: 'ADM-AVL-1', source: 'Endpoints rule 7', rule: 'Availability requires an existing policy and works on disabled providers' },
  {
    id: 'ADM-AVL-2',
    source: 'States: available false; rule 7',
    rule: 'Marking invalid gives visible false, available false, reason model_unavailable, and members stop seeing it',
  },
  { id: 'ADM-AVL-3', source: 'States: available true', rule: 'Clearing the invalid mark keeps a manual hide' },
  {
    id: 'ADM-AVL-4',
    source: 'Endpoints table; Errors',
    rule: 'A non-boolean available is 400 parameter_invalid; a missing expected_lock_version is 400 parameter_missing',
  },
  {
    id: 'ADM-CMD-1',
    source: 'Endpoints; Errors',
    rule: 'Mutation bodies have the root command (missing: 400 parameter_missing); successes are 200; errors use the {error:{code,message}} envelope',
  },
  // Credentials
  {
    id: 'ADM-KEY-1',
    source: 'States: Lane PUT api_key; rule 9',
    rule: 'PUT api_key installs the key and enables the provider, also when the same key is saved again; the key is never returned',
  },
  { id: 'ADM-KEY-2', source: 'Endpoints rule 9', rule: 'A blank key is 400 parameter_invalid and availability is unchanged' },
  {
    id: 'ADM-KEY-3',
    source: 'Endpoints rule 9',
    rule: 'API key commands on oauth_tokens or none lanes, or on non-API-key material, are 409 material_kind_conflict',
  },
  {
    id: 'ADM-KEY-4',
    source: 'Endpoints rule 9',
    rule: 'The same normalized key leaves the credential generation unchanged; a changed key advances it',
  },
  { id: 'ADM-KEY-5', source: 'Endpoints rule 9', rule: 'Credential and availability changes commit together and keep model settings' },
  {
    id: 'ADM-KEY-6',
    source: 'Endpoints rule 9; side rules',
    rule: 'DELETE api_key clears the key (configured false) and leaves the policy and enabled unchanged; no key is 404',
  },
  {
    id: 'ADM-KEY-7',
    source: 'issue 4 §6; Authentication 8',
    rule: 'Keys are AES-256-GCM encrypted at rest with a key id; platform secrets rotate re-encrypts under the current key; previous keys still decrypt',
  },
  {
    id: 'ADM-KEY-8',
    source: 'What the service does; Authentication 8',
    rule: 'No response, log line or error contains key material, a preview, a length or a fingerprint',
  },
  {
    id: 'ADM-ERR-1',
    source: 'What the service does: no API returns credential material; Authentication 8',
    rule: 'Error messages never repeat client input: unknown field names only when they match [a-z_]{1,64}, never a submitted model reference, provider id or value',
  },
  {
    id: 'ADM-KEY-9',
    source: 'Model row: unavailable_reason credential_unusable; issue 4 §6',
    rule: 'Whether stored material decrypts is decided per (Account, provider) row: a sealed value copied into another row is credential_unusable there',
  },
  {
    id: 'ADM-KEY-10',
    source: 'Endpoints rule 9: same normalized key, same generation',
    rule: 'API keys that are not well-formed Unicode (lone surrogates) or hold control characters are 400 parameter_invalid',
  },
  // Cost unit, limits
  {
    id: 'ADM-COST-1',
    source: 'Endpoints rule 10',
    rule: 'GET cost_unit is null until configured; PUT configures it once and an existing unit cannot be replaced',
  },
  {
    id: 'ADM-LIM-1',
    source: 'Limits; rule 11',
    rule: 'A policy document over 256 distinct references or 2 MiB of canonical JSON is 422 validation_failed and nothing changes',
  },
  {
    id: 'ADM-LIM-2',
    source: 'Limits; Endpoints rule 1; Provider configuration: source',
    rule: 'Hidden or invalid refs whose model left the catalog can still be cleared (visible/available true) so they stop counting; a provider removed from the catalog while a policy exists reads as removed (absent from lists, singular read kept, commands 404)',
  },
  // Authentication
  {
    id: 'ADM-AUTH-1',
    source: 'Authentication 1-2',
    rule: 'Active owners and admins are accepted with an API Session bearer or a platform-plane token',
  },
  { id: 'ADM-AUTH-2', source: 'Authentication 3', rule: 'A non-admin Human Session is 403 administrator_required' },
  { id: 'ADM-AUTH-3', source: 'Authentication 3', rule: 'Member-plane and executor tokens are 401 unauthorized, even for administrators' },
  { id: 'ADM-AUTH-4', source: 'Authentication 4', rule: 'Revocation, deactivation and demotion apply to the next request' },
  {
    id: 'ADM-AUTH-5',
    source: 'Authentication 5',
    rule: 'A browser cookie permits only GET and HEAD; an invalid or wrong-plane Authorization never falls back to the cookie',
  },
  { id: 'ADM-AUTH-6', source: 'Errors: 401', rule: 'A missing or invalid credential is 401 unauthorized' },
  // Member plane
  {
    id: 'ADM-MEM-1',
    source: 'Endpoints rule 13; rules 6-7',
    rule: 'Member routes are read-only for member-plane and executor tokens; hidden and invalid models are absent',
  },
  { id: 'ADM-MEM-2', source: 'Endpoints rule 13', rule: 'Provider writes have no member-plane route or alias' },
  { id: 'ADM-MEM-3', source: 'What the service does', rule: 'Admin changes are visible to the next member read' },
  // CLI and OpenAPI
  {
    id: 'ADM-CLI-1',
    source: 'Endpoints rule 12',
    rule: 'platform models hide|unhide|invalidate|restore read the provider version first and report a conflict without retrying',
  },
  {
    id: 'ADM-CLI-2',
    source: 'issue 14 §7; Endpoints rule 12',
    rule: 'platform providers show|define|remove and platform models define|remove|reset read the version first, report a conflict without retrying (exit 3) and print the envelope with --json',
  },
  {
    id: 'ADM-API-2',
    source: 'Errors; issue 4 §9',
    rule: 'OpenAPI declares every error a route can answer: 401 on authenticated routes, 403 on admin routes, 400/413/415 on routes with a body, 409 stale_object on versioned commands; the server answers 413 and 415 in the envelope',
  },
  {
    id: 'ADM-API-3',
    source: 'issue 12 item 4',
    rule: 'Every REST response a test server sends under /api/v1 and /agent_api/v1 holds to the OpenAPI document it serves (status, content type, body, documented headers; errors in the envelope); an undocumented route or status, or a drifting body, fails the test',
  },
  {
    id: 'ADM-API-4',
    source: 'issue 12 item 4',
    rule: 'The OpenAPI document describes the session routes and itself, has a relative servers entry, and is served with Cache-Control public, no-cache and an ETag (304 on If-None-Match)',
  },
  {
    id: 'ADM-API-1',
    source: 'issue 4 §9',
    rule: 'GET /api/v1/openapi.json describes every admin and member route in OpenAPI 3.1 from the schemas that validate requests',
  },
]);
