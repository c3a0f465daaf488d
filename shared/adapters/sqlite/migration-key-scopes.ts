/**
 * SQLite migration 17: what an API key may do (issue #23), its scopes separated by spaces as OAuth writes them
 * ("links:read stats:read"). Keys made before have none recorded (NULL) and keep every scope: nothing is rewritten.
 */
export const KEY_SCOPES_SQLITE = `ALTER TABLE api_keys ADD COLUMN scopes TEXT;`;
