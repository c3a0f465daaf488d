/**
 * Postgres migration 19: what an API key may do (issue #23), as an array of scope names. Keys made before have
 * none recorded (NULL) and keep every scope: adding a nullable column rewrites no row.
 */
export const KEY_SCOPES_POSTGRES = `ALTER TABLE api_keys ADD COLUMN scopes text[];`;
