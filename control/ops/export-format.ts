/**
 * The export file (`npm run export`, `npm run import`): JSON lines, UTF-8.
 *
 *   {"type":"header","format":"clink-export","version":1,"exportedAt":"…","source":"SQLite at …"}
 *   {"type":"account","data":{…}}        accounts, then
 *   {"type":"workspace","data":{…}}      workspaces (a personal one's id is its account's, ADR 0011), then
 *   {"type":"member","data":{…}}         their members with their roles, then
 *   {"type":"apiKey","data":{…}}         API keys (SHA-256 hashes only, never a key), then
 *   {"type":"link","data":{…}}           links (every declared field, shared/link-fields.ts, hits included), then
 *   {"type":"cell","data":{…}}           rollup cells (link, UTC hour, dimensions by name, bot, clicks, visitors), then
 *   {"type":"webhookEndpoint","data":{…}} event webhook endpoints, their signing secrets included, then
 *   {"type":"webhookDelivery","data":{…}} their deliveries: the outbox (pending) and the log (delivered, failed), then
 *   {"type":"domain","data":{…}}         custom domains (shared/domain.ts), their state and token included
 *   {"type":"end","counts":{"account":n,"workspace":n,"member":n,"apiKey":n,"link":n,"cell":n,"webhookEndpoint":n,"webhookDelivery":n,"domain":n}}
 *
 * The closing line lets import tell a complete file from a truncated one. Raw clicks, settled totals and
 * sessions are not exported: statistics read cells (settleDays makes the settled totals again from them), the
 * raw log is only kept for a while anyway, and signing in again is cheap. Files of earlier versions hold
 * "rollup" records (four dimensions) instead of cells; they still import, as cells. Files written before event
 * webhooks hold no endpoints or deliveries, those before custom domains no domains (their end record counts none), those
 * before workspaces no workspaces or members: importing an account makes its personal workspace, which holds what
 * the account held.
 */
import { Type as T, type Static, type TSchema } from "@sinclair/typebox";
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { linkFieldEntries, LinkRecordSchema } from "../../shared/link-fields.ts";
import { schemaErrors } from "../../shared/validation.ts";
import { DomainRecord } from "../../shared/domain.ts";
import { Role } from "../../shared/enums.ts";
import { DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, type ExportRecord, type ExportRecordType } from "../../shared/ports.ts";

/** A link record of a file written before a field existed gets that field's initial value. */
function withInitialValues(data: unknown): unknown {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return data;
  const filled: Record<string, unknown> = { ...data };
  for (const [name, f] of linkFieldEntries) if (!(name in filled) && "initial" in f) filled[name] = f.initial;
  return filled;
}

export const EXPORT_FORMAT = "clink-export";
export const EXPORT_VERSION = 1;

const Id = T.String({ minLength: 1, maxLength: 200 });
const Millis = T.Integer({ minimum: 0 });
const NullableString = T.Union([T.String(), T.Null()]);
const NullableMillis = T.Union([Millis, T.Null()]);

const Account = T.Object({ id: Id, email: T.String({ minLength: 3, maxLength: 320 }), passwordHash: T.String(), createdAt: Millis });

const Workspace = T.Object({ id: Id, name: T.String({ minLength: 1, maxLength: 200 }), personalOf: T.Union([Id, T.Null()]),
  // Files from before default domains have none: imported as null (the base domain).
  defaultDomain: T.Optional(T.Union([T.String({ minLength: 1, maxLength: 253 }), T.Null()])), createdAt: Millis });
const Member = T.Object({ workspaceId: Id, accountId: Id, role: Role, createdAt: Millis });

/** `createdBy`: files written before workspaces have none (the key's account made it). */
const ApiKey = T.Object({
  id: Id, accountId: Id, createdBy: T.Optional(Id), name: T.String(), keyHash: T.String({ minLength: 1 }), prefix: T.String(),
  createdAt: Millis, lastUsedAt: NullableMillis, revokedAt: NullableMillis,
});

const Rollup = T.Object({
  linkId: Id, hour: Millis, device: T.String(), browser: T.String(), country: NullableString,
  variant: T.Union([T.Integer({ minimum: 0 }), T.Null()]), clicks: T.Integer({ minimum: 0 }),
});

const DimValues = T.Record(T.String({ maxLength: 64 }), T.Union([T.String({ maxLength: 1_000 }), T.Null()]));
const Cell = T.Object({
  linkId: Id, hour: Millis, dims: DimValues, bot: T.Boolean(), clicks: T.Integer({ minimum: 0 }), visitors: T.Integer({ minimum: 0 }),
});

const EventType = T.Union(WEBHOOK_EVENT_TYPES.map((t) => T.Literal(t)));
const WebhookEndpoint = T.Object({
  id: Id, accountId: Id, url: T.String({ minLength: 1, maxLength: 2048 }), secret: T.String({ pattern: "^whsec_" }),
  events: T.Array(EventType), active: T.Boolean(), createdAt: Millis, updatedAt: Millis,
});
const WebhookDelivery = T.Object({
  id: Id, endpointId: Id, accountId: Id, eventType: EventType, payload: T.String(), createdAt: Millis,
  status: T.Union(DELIVERY_STATUSES.map((s) => T.Literal(s))), attempts: T.Integer({ minimum: 0 }), nextAttemptAt: NullableMillis,
  giveUpAt: Millis, lastAttemptAt: NullableMillis, lastError: NullableString, deliveredAt: NullableMillis,
});

/** Files of earlier versions count rollups and no cells, or no webhook records; these count all (rollups 0). */
const Counts = T.Object({
  account: Millis, workspace: T.Optional(Millis), member: T.Optional(Millis), apiKey: Millis, link: Millis, cell: T.Optional(Millis), rollup: T.Optional(Millis),
  webhookEndpoint: T.Optional(Millis), webhookDelivery: T.Optional(Millis), domain: T.Optional(Millis),
});

const Header = T.Object({
  type: T.Literal("header"), format: T.Literal(EXPORT_FORMAT), version: T.Integer(), exportedAt: T.String(),
  source: T.String(),
});
const End = T.Object({ type: T.Literal("end"), counts: Counts });

export type ExportHeader = Static<typeof Header>;
export type ExportCounts = Required<Static<typeof Counts>>;

/**
 * Each record type's schema, checked by the project's one validator (shared/validation.ts): the link's `format`s
 * (uri) are what its published schema promises, not a check (compiled with them, every link of a file was refused
 * as "Unknown format 'uri'").
 */
const RECORD_SCHEMAS: Record<ExportRecordType, TSchema> = {
  account: Account,
  workspace: Workspace,
  member: Member,
  apiKey: ApiKey,
  link: LinkRecordSchema,
  cell: Cell,
  rollup: Rollup,
  webhookEndpoint: WebhookEndpoint,
  webhookDelivery: WebhookDelivery,
  domain: DomainRecord,
};

const valid = <S extends TSchema>(schema: S, v: unknown): v is Static<S> => schemaErrors(schema, v).length === 0;

export const emptyCounts = (): ExportCounts => ({ account: 0, workspace: 0, member: 0, apiKey: 0, link: 0, cell: 0, rollup: 0, webhookEndpoint: 0, webhookDelivery: 0, domain: 0 });

export function headerLine(source: string, exportedAt: Date): string {
  const header: ExportHeader = { type: "header", format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: exportedAt.toISOString(), source };
  return JSON.stringify(header);
}

export const recordLine = (r: ExportRecord): string => JSON.stringify(r);
export const endLine = (counts: ExportCounts): string => JSON.stringify({ type: "end", counts });

/** An end record's counts with what older files leave out as 0. */
const allCounts = (c: Static<typeof Counts>): ExportCounts => ({ ...emptyCounts(), ...c });

/** A problem with the file, naming the line. */
export class ExportFileError extends Error {
  constructor(readonly line: number, message: string) {
    super(`line ${line}: ${message}`);
  }
}

export type ParsedLine =
  | { kind: "header"; header: ExportHeader }
  | { kind: "record"; record: ExportRecord }
  | { kind: "end"; counts: ExportCounts };

/** Parses and validates one line; throws ExportFileError saying what is wrong (never echoing field values). */
export function parseLine(text: string, line: number): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ExportFileError(line, "not valid JSON");
  }
  const type = (value as { type?: unknown } | null)?.type;
  if (type === "header") {
    if (!valid(Header, value)) throw new ExportFileError(line, `not a ${EXPORT_FORMAT} header`);
    if (value.version !== EXPORT_VERSION) {
      throw new ExportFileError(line, `export format version ${value.version} is not supported (this version reads ${EXPORT_VERSION})`);
    }
    return { kind: "header", header: value };
  }
  if (type === "end") {
    if (!valid(End, value)) throw new ExportFileError(line, "malformed end record");
    return { kind: "end", counts: allCounts(value.counts) };
  }
  if (typeof type === "string" && Object.hasOwn(RECORD_SCHEMAS, type)) {
    const given = (value as { data?: unknown }).data;
    const data = type === "link" ? withInitialValues(given) : given;
    const [first] = schemaErrors(RECORD_SCHEMAS[type as ExportRecordType], data);
    if (first) throw new ExportFileError(line, `invalid ${type} record at ${first.path}: ${first.message}`);
    return { kind: "record", record: { type, data } as ExportRecord };
  }
  throw new ExportFileError(line, "unknown record type");
}

/** The file's lines with their numbers (1-based), streamed; blank lines are skipped. */
export async function* readLines(path: string): AsyncIterable<{ text: string; line: number }> {
  const rl = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
  let line = 0;
  for await (const text of rl) {
    line++;
    if (text.trim() !== "") yield { text, line };
  }
}
