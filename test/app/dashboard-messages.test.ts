/**
 * The dashboard's words for schema messages (control/dashboard/form-errors.ts), pure: each TypeBox message the
 * link and key inputs can produce reads as an instruction, nothing in the schema's voice reaches a person, the
 * services' own messages pass unchanged, and error paths find their field (rows counted from 1 for people,
 * from 0 for ids).
 */
import { describe, expect, test } from "bun:test";
import { fieldRef, humanMessage } from "../../control/dashboard/form-errors.ts";
import { FIELD_REFS } from "../../control/dashboard/link-form.ts";
import { CreateLinkInput, UpdateLinkInput } from "../../shared/schemas.ts";
import { schemaErrors } from "../../shared/validation.ts";

describe("humanMessage", () => {
  test.each([
    ["Expected integer to be greater or equal to 1", "Enter a whole number of at least 1"],
    ["Expected integer to be less or equal to 1000000", "Enter a whole number no greater than 1,000,000"],
    ["Expected integer", "Enter a whole number, like 100"],
    ["Expected number to be greater than 0", "Enter a number greater than 0"],
    ["Expected number", "Enter a number, like 2 or 0.5"],
    ["Expected string length greater or equal to 1", "Fill in this field"],
    ["Expected string length less or equal to 80", "Use at most 80 characters"],
    ["Expected array length to be less or equal to 50", "Use at most 50 rows"],
    ["Expected string to match 'email' format", "Enter an email address, like name@example.com"],
    ["Unexpected property", "This form does not have this field: reload the page and try again"],
    ["unknown field", "This form does not have this field: reload the page and try again"],
    ['must be one of "active", "paused", "archived"', "must be active, paused or archived"],
    ["Expected Uint8Array", "Check this value: it is not one this field takes"],
    // The services' messages are already written for people.
    ["must be an absolute http or https URL", "must be an absolute http or https URL"],
    ["is already taken", "is already taken"],
  ])("%s → %s", (message, words) => {
    expect(humanMessage(message)).toBe(words);
  });

  test("no message the link inputs' schemas give for wrong values stays in the schema's voice", () => {
    const wrong: Record<string, unknown>[] = [
      { url: "" }, { url: 5 }, { url: "x".repeat(3000) }, { url: "https://e.com", maxHits: 0 }, { url: "https://e.com", maxHits: 1.5 },
      { url: "https://e.com", maxHits: 10_000_001 }, { url: "https://e.com", maxHits: "x" }, { url: "https://e.com", folder: "f".repeat(81) },
      { url: "https://e.com", serveOg: "yes" }, { url: "https://e.com", abUrls: [{ url: "https://a.com", weight: -1 }] },
      { url: "https://e.com", abUrls: [{ url: "https://a.com", weight: "x" }] }, { url: "https://e.com", rules: Array(51).fill({ kind: "country", match: "US", url: "https://e.com" }) },
      { url: "https://e.com", status: "bogus" }, { url: "https://e.com", extra: 1 }, { url: "https://e.com", ogTitle: "t".repeat(301) },
    ];
    const messages = new Set<string>();
    for (const value of wrong) {
      for (const schema of [CreateLinkInput, UpdateLinkInput]) for (const e of schemaErrors(schema, value)) messages.add(e.message);
    }
    expect(messages.size).toBeGreaterThan(8);
    const schemaVoice = [...messages].map(humanMessage).filter((m) => /^Expected|Unexpected|unknown field/.test(m));
    expect(schemaVoice).toEqual([]);
  });
});

describe("fieldRef", () => {
  test("a field's error path finds its label and control, under its create and its update name", () => {
    expect(fieldRef("/url", FIELD_REFS)).toEqual({ label: "Destination URL", id: "f-url" });
    expect(fieldRef("/targetUrl", FIELD_REFS)).toEqual({ label: "Destination URL", id: "f-url" });
    expect(fieldRef("/slug", FIELD_REFS)).toEqual({ label: "Slug", id: "f-slug" });
  });

  test("a row's column is numbered from 1 in its label and from 0 in its id; the rows as a whole are their box", () => {
    expect(fieldRef("/rules/2/url", FIELD_REFS)).toEqual({ label: "Rule 3 URL", id: "rule_url-2" });
    expect(fieldRef("/abUrls/0/weight", FIELD_REFS)).toEqual({ label: "Variant 1 weight", id: "ab_weight-0" });
    expect(fieldRef("/rules", FIELD_REFS)).toEqual({ label: "Rules", id: "f-rules" });
  });

  test("an unknown path is named by itself and links nowhere (not Object's own keys either)", () => {
    expect(fieldRef("/nope", FIELD_REFS)).toEqual({ label: "nope" });
    expect(fieldRef("constructor", {})).toEqual({ label: "constructor" });
  });
});
