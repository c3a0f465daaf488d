/**
 * OAuth's own error answers (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 7009 §2.2.1): JSON `{error, error_description}`,
 * which OAuth clients read, instead of the API's problem+json. Thrown once at the endpoint's edge (routes.ts).
 */
export const OAUTH_ERRORS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  access_denied: 403,
  unsupported_response_type: 400,
} as const;

export type OAuthErrorCode = keyof typeof OAUTH_ERRORS;

export class OAuthError extends Error {
  readonly status: number;
  constructor(readonly code: OAuthErrorCode, readonly description: string) {
    super(description);
    this.status = OAUTH_ERRORS[code];
  }

  toJson(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}
