/**
 * The whole error contract (design §3.3) in one place: a stable `code`, its HTTP status and title.
 * Errors are values (`AppError`) created anywhere and turned into problem+json once, at the edge.
 */
import { describeErrors } from "./messages.ts";

export const ERROR_CODES = {
  invalid_json: { status: 400, title: "Body is not valid JSON" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  invalid_input: { status: 400, title: "Invalid input" },
  slug_reserved: { status: 400, title: "Slug is reserved" },
  invalid_parameter: { status: 400, title: "Invalid query parameter" },
  invalid_range: { status: 400, title: "Invalid time range" },
  too_many_points: { status: 400, title: "Too many points in the time series" },
  unknown_dimension: { status: 400, title: "Unknown dimension" },
  unknown_time_zone: { status: 400, title: "Unknown time zone" },
  invalid_encoding: { status: 400, title: "File is not UTF-8 text" },
  missing_header: { status: 400, title: "File lacks the header row an import needs" },
  malformed_file: { status: 400, title: "File cannot be read as its format" },
  unauthorized: { status: 401, title: "Unauthorized" },
  forbidden: { status: 403, title: "Forbidden" },
  insufficient_scope: { status: 403, title: "Insufficient scope" },
  forbidden_role: { status: 403, title: "Role does not allow this" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  slug_taken: { status: 409, title: "Slug already taken" },
  external_id_taken: { status: 409, title: "External id already used by another link" },
  webhook_endpoint_limit: { status: 409, title: "Too many webhook endpoints" },
  domain_taken: { status: 409, title: "Domain already added" },
  domain_has_links: { status: 409, title: "Domain still has links" },
  domain_slug_conflict: { status: 409, title: "Slugs already taken on the target domain" },
  unknown_domain: { status: 400, title: "Not a verified domain of this workspace" },
  already_member: { status: 409, title: "Already a member of the workspace" },
  last_owner: { status: 409, title: "A workspace needs an owner" },
  personal_workspace: { status: 409, title: "Not possible in a personal workspace" },
  invitation_used: { status: 409, title: "Invitation already used" },
  invitation_expired: { status: 410, title: "Invitation expired" },
  invitation_revoked: { status: 410, title: "Invitation revoked" },
  payload_too_large: { status: 413, title: "Payload too large" },
  rate_limited: { status: 429, title: "Too many requests" },
  unavailable: { status: 503, title: "Service unavailable" },
  internal: { status: 500, title: "Internal error" },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  path: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: FieldError[];
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors?: FieldError[];
  /** Seconds, for 429 and 503 answers. */
  readonly retryAfter?: number;
  /**
   * The WWW-Authenticate value of a 401 or 403 (RFC 6750 §3: `Bearer error="insufficient_scope", scope="…"`,
   * resource_metadata per RFC 9728); without one a 401 says `Bearer realm="api"`.
   */
  readonly challenge?: string;

  constructor(code: ErrorCode, detail?: string, opts: { errors?: FieldError[]; retryAfter?: number; challenge?: string } = {}) {
    super(detail ?? ERROR_CODES[code].title);
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.errors = opts.errors;
    this.retryAfter = opts.retryAfter;
    this.challenge = opts.challenge;
  }

  toProblem(): Problem {
    const p: Problem = {
      type: `https://clink.dev/problems/${this.code.replace(/_/g, "-")}`,
      title: ERROR_CODES[this.code].title,
      status: this.status,
      detail: this.message,
      code: this.code,
    };
    if (this.errors?.length) p.errors = this.errors;
    return p;
  }
}

/** invalid_input listing every invalid field; its detail names each with its message (messages.ts). */
export const invalidInput = (errors: FieldError[], detail = describeErrors(errors)) =>
  new AppError("invalid_input", detail, { errors });

/** Any thrown value as an AppError; internals are never exposed (a bug becomes a generic 500). */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError("internal", "An unexpected error occurred");
}

/** problem+json Response for an error, with the headers the contract requires. */
export function problemResponse(err: AppError, extraHeaders?: Record<string, string>): Response {
  const headers: Record<string, string> = { "content-type": "application/problem+json", ...extraHeaders };
  if (err.challenge !== undefined) headers["www-authenticate"] = err.challenge;
  else if (err.code === "unauthorized") headers["www-authenticate"] = 'Bearer realm="api"';
  if (err.retryAfter !== undefined) headers["retry-after"] = String(err.retryAfter);
  return new Response(JSON.stringify(err.toProblem()), { status: err.status, headers });
}
