/**
 * The error vocabulary of GitLab's OAuth provider (Doorkeeper) and of its REST API, reproduced so that the dev forge
 * answers clients exactly as GitLab would (forge-facts.md, "GitLab's OAuth (Doorkeeper) as the forge").
 *
 * The description strings are protocol data: clients and tests compare them, so they must not be reworded.
 */

/** Doorkeeper's `error_description` for each error name it answers with. */
export const OAUTH_ERROR_DESCRIPTIONS = {
  invalid_request: 'The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.',
  invalid_redirect_uri: "The requested redirect uri is malformed or doesn't match client redirect URI.",
  unauthorized_client: 'The client is not authorized to perform this request using this method.',
  access_denied: 'The resource owner or authorization server denied the request.',
  invalid_scope: 'The requested scope is invalid, unknown, or malformed.',
  invalid_code_challenge_method: 'The code challenge method must be plain or S256.',
  server_error: 'The authorization server encountered an unexpected condition which prevented it from fulfilling the request.',
  unsupported_response_type: 'The authorization server does not support this response type.',
  invalid_client:
    'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
  invalid_grant:
    'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
  unsupported_grant_type: 'The authorization grant type is not supported by the authorization server.',
  invalid_token: 'The access token is invalid',
} as const;

/** An error name Doorkeeper answers with. */
export type OAuthErrorName = keyof typeof OAUTH_ERROR_DESCRIPTIONS;

/** One Doorkeeper error: its name, its description and (for `invalid_request`) the missing parameter. */
export interface OAuthError {
  error: OAuthErrorName;
  description: string;
}

/** Builds a Doorkeeper error; a missing parameter gives Doorkeeper's "Missing required parameter: x." wording. */
export function oauthError(error: OAuthErrorName, missingParam?: string): OAuthError {
  const description =
    error === 'invalid_request' && missingParam !== undefined
      ? `Missing required parameter: ${missingParam}.`
      : OAUTH_ERROR_DESCRIPTIONS[error];
  return { error, description };
}

/**
 * Doorkeeper's HTTP status for an error answered as JSON: client-authentication failures are 401, the rest 400
 * (`Doorkeeper::OAuth::ErrorResponse#status`; `invalid_token` is always 401).
 */
export function oauthErrorStatus(error: OAuthErrorName): 400 | 401 {
  return error === 'invalid_client' || error === 'unauthorized_client' || error === 'invalid_token' ? 401 : 400;
}

/**
 * The headers Doorkeeper puts on every JSON error: no caching and a `WWW-Authenticate` challenge in its realm.
 * Quotes in the description are impossible (the catalogue above has none), so no escaping is needed.
 */
export function oauthErrorHeaders(err: OAuthError): Record<string, string> {
  return {
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'www-authenticate': `Bearer realm="Doorkeeper", error="${err.error}", error_description="${err.description}"`,
  };
}

/** Revocation refused (GitLab's `validate_presence_of_client` and Doorkeeper's token ownership check): 403. */
export const REVOKE_UNAUTHORIZED_BODY = {
  error: 'unauthorized_client',
  error_description: 'You are not authorized to revoke this token',
} as const;

/** The REST API's answer to a missing or unknown token. */
export const API_UNAUTHORIZED_BODY = { message: '401 Unauthorized' } as const;

/** GitLab's API guard (rack-oauth2 bearer errors) for a token it found but cannot accept. */
export const API_TOKEN_EXPIRED_DESCRIPTION = 'Token is expired. You can either do re-authorization or token refresh.';
/** See {@link API_TOKEN_EXPIRED_DESCRIPTION}. */
export const API_TOKEN_REVOKED_DESCRIPTION = 'Token was revoked. You have to re-authorize from the user.';
/** rack-oauth2's default description for `insufficient_scope`. */
export const API_INSUFFICIENT_SCOPE_DESCRIPTION = 'The request requires higher privileges than provided by the access token.';
/** rack-oauth2's default realm, used by GitLab's API guard (not Doorkeeper's). */
export const API_REALM = 'Protected by OAuth 2.0';
