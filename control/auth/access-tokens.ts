/**
 * The seam between Bearer authentication and the OAuth authorization server (issue #23): `ck_` keys are checked by
 * KeyAuthenticator itself; any other Bearer value is offered to the access-token verifier, if one is installed.
 */
import type { Caller } from "../deps.ts";

export interface AccessTokenVerifier {
  /** Whether `token` has an access token's shape (its prefix); other values are reported as malformed keys. */
  accepts(token: string): boolean;
  /**
   * The caller of a live access token issued for `resource` (RFC 8707: a token for the API is refused at /mcp and
   * the other way round), with the token's scopes and grant; AppError unauthorized otherwise (expired, revoked,
   * unknown, or for another resource), with an `invalid_token` challenge.
   */
  verify(token: string, resource: string): Promise<Caller>;
}
