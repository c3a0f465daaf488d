/**
 * The dashboard's words for validation messages (control/dashboard/form-errors.ts), pure: the link inputs' schema
 * messages are the API's own (shared/messages.ts) and reach a person unchanged, nothing in a validator's voice is
 * shown, the few messages that mean something else in a form are reworded, and error paths find their field (rows
 * counted from 1 for people, from 0 for ids).
 */
import { describe, expect, test } from "bun:test";
import { fieldRef, humanMessage } from "../../control/dashboard/form-errors.ts";
import { FIELD_REFS } from "../../control/dashboard/link-form.ts";
import { MESSAGES } from "../../shared/messages.ts";
import { CreateLinkInput, UpdateLinkInput } from "../../shared/schemas.ts";
import { schemaErrors } from "../../shared/validation.ts";

describe("humanMessage", () => {
  test.each([
    ["unknown field", "This form does not have this field: reload the page and try again"],
    ["unknown field: to change the destination use targetUrl", "This form does not have this field: reload the page and try again"],
    ["invalid cursor", "is out of date or was changed: start again from the first page"],
    ["Expected Uint8Array", "is not a value this field takes"],
    // The shared messages are already written for people.
    ["must be at least 1", "must be at least 1"],
    [MESSAGES.slug, MESSAGES.slug],
    [MESSAGES.address, MESSAGES.address],
    ["is already taken", "is already taken"],
    ["unknown fields are refused", "unknown fields are refused"],
  ])("%s → %s", (message, words) => {
    expect(humanMessage(message)).toBe(words);
  });

  test("the link inputs' schema messages for wrong values are the API's words, shown unchanged and never in a validator's voice", () => {
    const wrong: Record<string, unknown>[] = [
      { url: "" }, { url: 5 }, { url: "x".repeat(3000) }, { url: "https://e.com", maxHits: 0 }, { url: "https://e.com", maxHits: 1.5 },
      { url: "https://e.com", maxHits: 10_000_001 }, { url: "https://e.com", maxHits: "x" }, { url: "https://e.com", folder: "f".repeat(81) },
      { url: "https://e.com", serveOg: "yes" }, { url: "https://e.com", abUrls: [{ url: "https://a.com", weight: -1 }] },
      { url: "https://e.com", abUrls: [{ url: "https://a.com", weight: "x" }] }, { url: "https://e.com", rules: Array(51).fill({ kind: "country", match: "US", url: "https://e.com" }) },
      { url: "https://e.com", status: "bogus" }, { url: "https://e.com", ogTitle: "t".repeat(301) }, { url: "https://e.com", slug: "a b" },
      { url: "https://e.com", tags: ["t".repeat(41)] }, { url: "https://e.com", tags: Array(21).fill("t") }, { url: "https://e.com", rules: [{ kind: "planet" }] },
    ];
    const messages = new Map<string, string>();
    for (const value of wrong) {
      for (const schema of [CreateLinkInput, UpdateLinkInput]) for (const e of schemaErrors(schema, value)) messages.set(e.message, humanMessage(e.message));
    }
    expect(messages.size).toBeGreaterThan(12);
    for (const [message, shown] of messages) {
      // An update given the create's url: the one message a form words otherwise (see above).
      if (!message.startsWith(MESSAGES.unknownField)) expect(shown).toBe(message);
      expect(message).not.toMatch(/Expected|Unexpected|union|\bregular expression\b/);
    }
    expect([...messages.keys()]).toEqual(expect.arrayContaining([
      "must not be empty", "must be a string", "must be at most 2,048 characters", "must be at least 1", "must be a whole number",
      "must be at most 1,000,000", "must be at most 80 characters", 'must be one of true, false, "true", "false", 1, 0, "on", "off", "1", "0"',
      "must be greater than 0", "must be a number", "must be at most 40 characters", "is required",
      "must have at most 50 items", "must be active, paused or archived", MESSAGES.slug, "must have at most 20 items", "must be country or device",
      "unknown field: to change the destination use targetUrl",
    ]));
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
