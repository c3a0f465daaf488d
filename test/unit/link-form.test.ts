/**
 * The dashboard's link form is driven by the link's declaration: every field of LINK_FIELDS with a `form` entry is
 * rendered in its section, read back from what a browser posts, and sent in the create and PATCH bodies under its
 * input names, accepted by the API's own validation. The tests iterate the declaration, so a field added to it
 * with a `form` entry is covered here without an edit; a new widget must be given a sample below (TypeScript asks).
 */
import { describe, expect, test } from "bun:test";
import { LINK_STATUSES } from "../../shared/enums.ts";
import { linkFieldEntries, type FormWidget } from "../../shared/link-fields.ts";
import { ownHostsOf, validateLinkInput } from "../../shared/link-input.ts";
import { newLinkRecord, toLinkObject } from "../../shared/link.ts";
import type { CreateLinkInput, LinkObject, UpdateLinkInput } from "../../shared/schemas.ts";
import { FIELD_LABELS, FORM_SECTIONS, linkForm } from "../../control/dashboard/link-form.ts";
import {
  AB_ROW, choicesOf, createInputFrom, EMPTY_FORM, FORM_FIELDS, RULE_ROW, updateInputFrom, valuesFromForm, valuesFromLink, type FormField,
} from "../../control/dashboard/link-form-input.ts";
import { formBody, formFieldsOf } from "../helpers/dashboard-visitor.ts";

/** Not in the body at all. */
const OMIT = Symbol("omitted");

interface Sample {
  /** The field's value as the API's link object shows it (the edit form starts from it). */
  shown: (f: FormField) => unknown;
  /** What a person enters: the controls' names and the values a browser then posts. */
  typed: (f: FormField) => Record<string, string[]>;
  /** What the create and PATCH bodies carry for what was typed. */
  sent: (f: FormField) => unknown;
  /** What the PATCH body carries when the person empties the field. */
  cleared: unknown;
  /** What a create of the untouched new form carries. */
  untouched: (f: FormField) => unknown;
}

const one = (f: FormField, value: string) => ({ [f.posted]: [value] });
const omitted = () => OMIT;

const SAMPLES: Record<FormWidget, Sample> = {
  url: {
    shown: () => "https://example.com/shown", typed: (f) => one(f, " https://example.com/typed "), sent: () => "https://example.com/typed",
    cleared: null, untouched: (f) => (f.input.required ? "" : OMIT),
  },
  text: { shown: () => "shown-text", typed: (f) => one(f, "typed-text"), sent: () => "typed-text", cleared: null, untouched: omitted },
  textarea: { shown: () => "one\ntwo", typed: (f) => one(f, "line 1\r\nline 2"), sent: () => "line 1\nline 2", cleared: null, untouched: omitted },
  number: { shown: () => 9, typed: (f) => one(f, "42"), sent: () => 42, cleared: null, untouched: omitted },
  datetime: {
    shown: () => "2031-01-01T00:00:00.000Z", typed: (f) => one(f, "2032-02-03T04:05"), sent: () => "2032-02-03T04:05Z", cleared: null, untouched: omitted,
  },
  tags: { shown: () => ["x", "y"], typed: (f) => one(f, "a, b"), sent: () => "a, b", cleared: "", untouched: omitted },
  select: {
    shown: (f) => choicesOf(f)[0], typed: (f) => one(f, choicesOf(f).at(-1)!), sent: (f) => choicesOf(f).at(-1), cleared: OMIT,
    untouched: (f) => f.spec.initial,
  },
  checkbox: { shown: () => false, typed: (f) => one(f, "on"), sent: () => true, cleared: OMIT, untouched: () => false },
  // Never shown: a blank password keeps the current one.
  password: { shown: () => undefined, typed: (f) => one(f, "s3cret-pw"), sent: () => "s3cret-pw", cleared: OMIT, untouched: omitted },
  ruleRows: {
    shown: () => [{ kind: "country", match: "DE", url: "https://example.de/" }],
    typed: () => ({ [RULE_ROW.kind]: ["device", "country"], [RULE_ROW.match]: [" mobile ", ""], [RULE_ROW.url]: ["https://m.example.com", ""] }),
    sent: () => [{ kind: "device", match: "mobile", url: "https://m.example.com" }],
    cleared: null, untouched: omitted,
  },
  abRows: {
    shown: () => [{ url: "https://a.example.com/", weight: 3 }],
    typed: () => ({ [AB_ROW.url]: ["https://b.example.com", ""], [AB_ROW.weight]: ["2.5", ""] }),
    sent: () => [{ url: "https://b.example.com", weight: 2.5 }],
    cleared: null, untouched: omitted,
  },
};

const sampleOf = (f: FormField) => SAMPLES[f.form.widget];
/** The control names a field posts under. */
const namesOf = (f: FormField) => Object.keys(sampleOf(f).typed(f));
/** The fields a browser posts once `f` is typed into (its controls replaced by what was typed). */
const typedInto = (fields: Record<string, string[]>, f: FormField) => ({ ...fields, ...sampleOf(f).typed(f) });
const emptied = (fields: Record<string, string[]>, f: FormField) =>
  // An unticked box posts nothing, so it stays absent.
  ({ ...fields, ...Object.fromEntries(namesOf(f).map((n) => [n, (fields[n] ?? []).map(() => "")])) });
const bodyOf = (entries: [string, unknown][]) => Object.fromEntries(entries.filter(([, v]) => v !== OMIT));

const CTX = { ownHosts: ownHostsOf(["http://clink.test"], 3000) };

/** A link whose every form field holds its widget's sample, as the API shows it. */
function sampleLink(): LinkObject {
  const record = newLinkRecord({ id: "l1", accountId: "a1", domain: "clink.test", slug: "sample", target: "https://example.com/", createdAt: 0 });
  const link = toLinkObject(record, { baseUrl: "http://clink.test", defaultDomain: "clink.test" }, 0) as unknown as Record<string, unknown>;
  for (const f of FORM_FIELDS) if (f.form.widget !== "password") link[f.name] = sampleOf(f).shown(f);
  link.hasPassword = true;
  return link as unknown as LinkObject;
}

const createForm = () => linkForm({ mode: "create", values: EMPTY_FORM, csrf: "t" });
const editForm = (link: LinkObject) => linkForm({ mode: "edit", values: valuesFromLink(link), csrf: "t" });

describe("the form's fields are the declared fields with a form entry", () => {
  test("FORM_FIELDS lists exactly those, in declaration order, with the input names of the declaration", () => {
    expect(FORM_FIELDS.map((f) => f.name)).toEqual(linkFieldEntries.filter(([, s]) => s.form).map(([n]) => n));
    const target = FORM_FIELDS.find((f) => f.name === "target")!;
    const password = FORM_FIELDS.find((f) => f.name === "passwordHash")!;
    expect([target.posted, target.createAs, target.updateAs]).toEqual(["url", "url", "targetUrl"]);
    expect([password.posted, password.createAs, password.updateAs]).toEqual(["password", "password", "password"]);
    expect(FORM_FIELDS.map((f) => f.name)).toContain("expiredUrl");
    expect(FORM_FIELDS.map((f) => f.name)).toContain("externalId");
  });

  test("each field is in its section's fieldset, with its label, in the create and the edit form", () => {
    expect(Object.values(FORM_SECTIONS).map((s) => s.legend)).toEqual([
      "Link", "Schedule and limits", "UTM parameters", "Targeting rules", "A/B rotation", "Social preview card", "Click webhook",
    ]);
    for (const html of [createForm(), editForm(sampleLink())]) {
      const fieldsets = new Map([...html.matchAll(/<fieldset><legend>([^<]+)<\/legend>([\s\S]*?)<\/fieldset>/g)].map((m) => [m[1], m[2]]));
      expect([...fieldsets.keys()]).toEqual(Object.values(FORM_SECTIONS).map((s) => s.legend));
      for (const f of FORM_FIELDS) {
        const inside = fieldsets.get(FORM_SECTIONS[f.form.section].legend)!;
        for (const name of namesOf(f)) expect(inside, `${f.name} posts ${name}`).toContain(`name="${name}"`);
        if (f.form.widget !== "ruleRows" && f.form.widget !== "abRows") expect(inside).toContain(f.form.label);
      }
    }
  });

  test("the status select offers LINK_STATUSES, the new link's initial status chosen", () => {
    const select = /<select id="f-status" name="status"[^>]*>([\s\S]*?)<\/select>/.exec(createForm())![1];
    expect([...select.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1])).toEqual([...LINK_STATUSES]);
    expect(select).toContain('<option value="active" selected>');
  });

  test("rows are offered up to the number the API takes (the input schema's maxItems)", () => {
    const html = createForm();
    expect(html).toContain('data-rows="rules" data-max="50"');
    expect(html).toContain('data-rows="ab" data-max="10"');
  });

  test("error labels come from the declaration: both names of a field, and the row columns", () => {
    for (const f of FORM_FIELDS) {
      expect(FIELD_LABELS[`/${f.createAs}`]).toEqual(expect.any(String));
      expect(FIELD_LABELS[`/${f.updateAs}`]).toBe(FIELD_LABELS[`/${f.createAs}`]);
    }
    expect([FIELD_LABELS["/url"], FIELD_LABELS["/targetUrl"], FIELD_LABELS["/password"]]).toEqual(["Destination URL", "Destination URL", "Password"]);
    expect([FIELD_LABELS["/rules/*/url"], FIELD_LABELS["/rules/*/match"], FIELD_LABELS["/abUrls/*/weight"]]).toEqual(["Rule # URL", "Rule # match", "Variant # weight"]);
    // Preview fields are named with their section in the list at the top of the form.
    expect([FIELD_LABELS["/ogTitle"], FIELD_LABELS["/ogImageUrl"], FIELD_LABELS["/expiredUrl"]]).toEqual(["Preview title", "Preview image URL", "After the link ends, send visitors to"]);
  });

  test("a field's error is shown under its control, at the path of the operation's input name", () => {
    for (const f of FORM_FIELDS.filter((field) => field.form.widget !== "ruleRows" && field.form.widget !== "abRows")) {
      for (const [mode, path] of [["create", f.createAs], ["edit", f.updateAs]] as const) {
        const values = mode === "create" ? EMPTY_FORM : valuesFromLink(sampleLink());
        const html = linkForm({ mode, values, csrf: "t", error: { detail: "bad", errors: [{ path: `/${path}`, message: `wrong ${f.name}` }] } });
        expect(html).toContain(`<li><a href="#f-${f.posted}">${FIELD_LABELS[`/${path}`]}: wrong ${f.name}</a></li>`);
        expect(html).toContain(`<p class="err" id="f-${f.posted}-error">wrong ${f.name}</p>`);
      }
    }
  });
});

describe("create: what is typed is posted and sent under the create input names", () => {
  test("the untouched new form sends the required field, the select's initial value and unticked boxes only", () => {
    const body = createInputFrom(valuesFromForm(formBody(formFieldsOf(createForm()))));
    expect(body).toEqual(bodyOf(FORM_FIELDS.map((f) => [f.createAs, sampleOf(f).untouched(f)])));
  });

  test("every field typed into the form is sent, and the API accepts the body", () => {
    let fields = formFieldsOf(createForm());
    for (const f of FORM_FIELDS) fields = typedInto(fields, f);
    const body = createInputFrom(valuesFromForm(formBody({ ...fields, slug: ["typed-slug"] })));
    expect(body).toEqual({ ...bodyOf(FORM_FIELDS.map((f) => [f.createAs, sampleOf(f).sent(f)])), slug: "typed-slug" });
    const { changes } = validateLinkInput<CreateLinkInput>("create", body, CTX);
    for (const f of FORM_FIELDS) expect(changes, f.name).toHaveProperty(f.input.rule === "password" ? "password" : f.name);
  });
});

describe("edit: only what changed is sent, under the update input names", () => {
  test("saving the edit form unchanged sends nothing", () => {
    const link = sampleLink();
    expect(updateInputFrom(valuesFromForm(formBody(formFieldsOf(editForm(link)))), valuesFromLink(link))).toEqual({});
  });

  test("typing into one field sends that field alone, and the API accepts it", () => {
    const link = sampleLink();
    const shown = formFieldsOf(editForm(link));
    for (const f of FORM_FIELDS) {
      const body = updateInputFrom(valuesFromForm(formBody(typedInto(shown, f))), valuesFromLink(link));
      expect(body, f.name).toEqual({ [f.updateAs!]: sampleOf(f).sent(f) });
      expect(() => validateLinkInput<UpdateLinkInput>("update", body, CTX)).not.toThrow();
    }
  });

  test("emptying one field clears it (the required one is sent blank for the API to refuse); a blank password keeps it", () => {
    const link = sampleLink();
    const shown = formFieldsOf(editForm(link));
    for (const f of FORM_FIELDS) {
      const body = updateInputFrom(valuesFromForm(formBody(emptied(shown, f))), valuesFromLink(link));
      const cleared = f.input.required ? "" : sampleOf(f).cleared;
      expect(body, f.name).toEqual(bodyOf([[f.updateAs!, cleared]]));
    }
  });

  test("ticking \"Remove the password\" sends password: null", () => {
    const link = sampleLink();
    const html = editForm(link);
    expect(html).toContain('name="removePassword"');
    const body = updateInputFrom(valuesFromForm(formBody({ ...formFieldsOf(html), removePassword: ["1"] })), valuesFromLink(link));
    expect(body).toEqual({ password: null });
  });
});
