/** ISO 8601 UTC for an epoch-ms time, null kept as null: how the API shows every date. */
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
