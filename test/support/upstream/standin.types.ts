/**
 * The shared vocabulary of the provider stand-ins: what a test configures, what the server records, and the contract
 * each dialect module (`openai.standin.ts`, `anthropic.standin.ts`, `gemini.standin.ts`) fulfils.
 */

export type StandinDialect = 'openai' | 'anthropic' | 'gemini';

/** A file part of a multipart request (the transcription upload). */
export interface RecordedFile {
  filename: string;
  contentType: string;
  data: Buffer;
}

/** One request as the stand-in received it, recorded before any scripted or normal answer is chosen. */
export interface RecordedRequest {
  method: string;
  /** The path with the base path, as sent: `/v1/chat/completions`, `/v1beta/models/gemini-2.5-flash:generateContent`. */
  path: string;
  /** Path and query string as sent. */
  url: string;
  query: Record<string, string>;
  /** Header names lower-cased; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: Buffer;
  /** The parsed body when it was sent as JSON and parses; undefined otherwise. */
  json: unknown;
  /** The fields of a multipart/form-data body; undefined for other bodies. */
  form: Record<string, string | RecordedFile> | undefined;
}

/** A model the stand-in serves and lists in its directory. */
export interface StandinModel {
  /** The upstream id (Gemini: without the `models/` prefix; one given with it is stripped). */
  id: string;
  /** Omitted: the dialect's usual name (OpenAI lists none; Anthropic and Gemini a title). Null: the field is absent. */
  display_name?: string | null;
  /** Unix seconds; listed as OpenAI's `created` and Anthropic's `created_at`. Default: a fixed date in 2025. */
  created?: number;
  /** Answer `max_tokens` with 400 `unsupported_parameter`, as OpenAI's reasoning models do (they take `max_completion_tokens`). */
  rejectsMaxTokens?: boolean;
}

/**
 * An error in a dialect's documented shape. The stand-in renders it as its dialect does:
 * OpenAI `{"error":{"message","type","param","code"}}`, Anthropic `{"type":"error","error":{"type","message"},"request_id"}`,
 * Gemini `{"error":{"code","message","status","details"}}`. Omitted fields take the dialect's usual value for the status.
 */
export interface ErrorSpec {
  /** Set by the `PROVIDER_ERRORS` helpers; a stand-in of another dialect refuses the spec (a mistake in the test). */
  dialect?: StandinDialect;
  status: number;
  message?: string;
  /** The error's kind in the dialect's own field: OpenAI `error.type`, Anthropic `error.type`, Gemini `error.status`. */
  type?: string;
  /** OpenAI `error.code` (for example `model_not_found`, `insufficient_quota`); other dialects have no such field. */
  code?: string | null;
  /** OpenAI `error.param`. */
  param?: string | null;
  /** Gemini `error.details` (ErrorInfo, RetryInfo, QuotaFailure); Anthropic `error.details`. */
  details?: unknown;
  /** Extra response headers, such as `retry-after`. */
  headers?: Record<string, string>;
}

/** A complete HTTP answer, and how it travels. */
export interface RawAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string | Buffer;
  /** Send without `content-length` (chunked), so a reader cannot learn the size before reading. */
  chunked?: boolean;
  /** Announce the whole body's length, send only this many bytes, then cut the connection. */
  truncateAt?: number;
}

/** How many requests a script applies to. */
export type Times = number | 'always';

/** Which requests a script applies to: the next `times` (default 1) of those `when` accepts (default all). */
export interface ScriptScope {
  times?: Times;
  when?: (request: RecordedRequest) => boolean;
}

/**
 * Where directory paging goes wrong. `afterPages` good pages are served; the next page is the faulty one:
 * - `page_error`: that page's request is answered with `error` (default: the dialect's 500);
 * - `missing_cursor`: that page says more follow but names no cursor (Anthropic `has_more` with `last_id: null`,
 *   paginated OpenAI `has_more` without `last_id`; Gemini cannot express it: its only sign of more is the token);
 * - `repeat_cursor`: that page's next cursor is the one it was fetched with, so a naive client loops (needs `afterPages` ≥ 1);
 * - `endless`: every page names a next one; past the configured models the rows are made up (`endless-<n>`).
 */
export type DirectoryFault =
  | { how: 'page_error'; afterPages: number; error?: ErrorSpec }
  | { how: 'missing_cursor' | 'repeat_cursor'; afterPages: number }
  | { how: 'endless' };

export interface DirectoryOptions {
  /**
   * Rows per page, when smaller than what the client asks for. Undefined: the dialect's own behaviour (OpenAI one
   * unpaginated list; Anthropic the client's `limit`, default 20; Gemini the client's `pageSize`, default 50, at most
   * 1000). For OpenAI a number switches to the cursor paging some compatible servers use (`limit`/`after` →
   * `has_more`/`first_id`/`last_id`).
   */
  pageSize?: number;
  /** Pads every page with whitespace inside the JSON until its body is at least this many bytes (the oversized directory). */
  padToBytes?: number;
  /** Sends directory pages without `content-length`. */
  chunked?: boolean;
  fault?: DirectoryFault;
}

export interface StandinOptions {
  dialect: StandinDialect;
  /** The accepted key; any other, or none, is refused in the dialect's shape. Undefined: no authentication required. */
  apiKey?: string;
  /** Default: the dialect's models of the shipped catalog (`catalog/*.yaml`), so the catalog's probes find their model. */
  models?: StandinModel[];
  /** Shorthand for `directory.pageSize`. */
  pageSize?: number;
  directory?: DirectoryOptions;
  /** Added before every answer. */
  latencyMs?: number;
  /** The generated text of every inference answer. Default `ok`. */
  reply?: string;
}

/** The mutable state a dialect answers from. */
export interface StandinState {
  models: readonly StandinModel[];
  directory: DirectoryOptions;
  reply: string;
  /** A fresh id for this answer (`req_…`), unique within the stand-in. */
  nextId(): string;
}

/** What one dialect module provides to the server. */
export interface DialectModule {
  name: StandinDialect;
  /** The path part of the provider's `base_url` (`/v1`, `/v1beta`). */
  basePath: string;
  defaultModels: readonly StandinModel[];
  /** Renders an error in this dialect's shape. */
  error(spec: ErrorSpec, state: StandinState): RawAnswer;
  /** The refusal when the request's credential is missing or not `apiKey`; null when it may pass. */
  authenticate(request: RecordedRequest, apiKey: string, state: StandinState): RawAnswer | null;
  /** The answer to a path outside the base path (a wrong `base_url`). */
  notFound(request: RecordedRequest, state: StandinState): RawAnswer;
  /** The normal answer; `route` is the path after the base path, without its leading slash. */
  handle(request: RecordedRequest, route: string, state: StandinState): RawAnswer;
}
