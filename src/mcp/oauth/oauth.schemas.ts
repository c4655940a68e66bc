/**
 * The request parameters of the OAuth endpoints (spec "Endpoints"), checked with the core's `checkInput`. A query
 * or form field may arrive repeated (an array) or, in a JSON body, as another type: the first string counts and
 * anything else is treated as absent, so each endpoint keeps answering with its own RFC 6749 error for a missing
 * parameter. Only a body that is not an object at all fails the schema; the endpoints then answer in their own
 * protocol (RFC 6749 JSON or a sign-in page) without the check's message, as they echo no client input.
 */
import { z } from 'zod';

/** The first string of a query or form field, else undefined. */
function first(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

const param = z.preprocess(first, z.string().optional());

/** `GET /authorize` (RFC 6749 §4.1.1, RFC 7636 §4.3, RFC 8707). */
export const authorizeQuerySchema = z.object({
  client_id: param,
  redirect_uri: param,
  response_type: param,
  state: param,
  scope: param,
  code_challenge: param,
  code_challenge_method: param,
  resource: param,
});
export type AuthorizeQuery = z.infer<typeof authorizeQuerySchema>;

/** The consent form posted to `POST /authorize`; a missing decision is a denial. */
export const consentFormSchema = z.object({
  request: z.preprocess(first, z.string().default('')),
  csrf: param,
  decision: z.preprocess(first, z.string().default('deny')),
});

/** `GET /callback`: the forge's answer (RFC 6749 §4.1.2). */
export const callbackQuerySchema = z.object({ state: param, code: param, error: param });
export type CallbackQuery = z.infer<typeof callbackQuerySchema>;

/** `POST /token` (RFC 6749 §4.1.3, §6; RFC 7636 §4.5). */
export const tokenFormSchema = z.object({
  grant_type: param,
  code: param,
  client_id: param,
  redirect_uri: param,
  code_verifier: param,
  refresh_token: param,
  scope: param,
});
export type TokenForm = z.infer<typeof tokenFormSchema>;

/** `POST /revoke` (RFC 7009 §2.1). */
export const revokeFormSchema = z.object({ token: param, token_type_hint: param });
export type RevokeForm = z.infer<typeof revokeFormSchema>;

/** `POST /register` (RFC 7591 §2): the metadata this server reads; other fields are ignored. */
export const registrationSchema = z.object({
  redirect_uris: z.array(z.string()).min(1).max(10),
  client_name: z.string().max(200).optional(),
  grant_types: z.array(z.string()).optional(),
  response_types: z.array(z.string()).optional(),
  token_endpoint_auth_method: z.string().optional(),
  scope: z.string().max(500).optional(),
});
