/**
 * The analytics pages' controls, plain links and two GET forms so they work without a script and every
 * choice lands in the URL: range presets, interval, the bots switch, custom dates, the time zone, and the CSV
 * download of the range shown. A refused question (a reversed range, too many bars) is shown as an error summary that takes the
 * focus, with the fields it names marked invalid.
 */
import type { FieldError } from "../../shared/errors.ts";
import { BOT_MODES, INTERVALS, type BotMode } from "../stats/analytics-types.ts";
import { MAX_POINTS as MAX_BARS } from "../stats/query.ts";
import { DEFAULT_ZONE, pageUrl, queryParams, RANGE_NAMES, RANGE_PRESETS, rangeDates, type PageQuery, type RangeProblem, type ResolvedRange } from "./analytics-query.ts";
import { errorSummary, fieldProblems, invalidAttrs, type FieldRefs } from "./form-errors.ts";
import { esc } from "./layout.ts";

const BOT_WORDS: Record<BotMode, string> = { exclude: "People", include: "People and bots", only: "Bots only" };
const INTERVAL_WORDS = { hour: "Hour", day: "Day", week: "Week", month: "Month" } as const;
/** An interval's longest length (DST included): an option is taken away only when even that gives too many bars. */
const INTERVAL_MS = { hour: 3_600_000, day: 25 * 3_600_000, week: 7 * 86_400_000 + 3_600_000, month: 31 * 86_400_000 + 3_600_000 } as const;

/** The controls a problem can point at; the interval and bots are groups of links, so nothing to focus. */
const FIELDS: FieldRefs = {
  "/from": { label: "First day", id: "range-from" },
  "/to": { label: "Last day", id: "range-to" },
  "/interval": { label: "Interval" },
  "/bots": { label: "Bots" },
  "/tz": { label: "Time zone", id: "range-tz" },
  "/page": { label: "This page" },
};

/** Every zone Intl knows, UTC first: the time-zone picker's options. */
const ZONES = [DEFAULT_ZONE, ...Intl.supportedValuesOf("timeZone").filter((z) => z !== DEFAULT_ZONE)];

const problemErrors = (problems: RangeProblem[]): FieldError[] => problems.map((p) => ({ path: `/${p.field ?? "page"}`, message: p.text }));

interface Choice {
  text: string;
  /** null: not available here (said why in `why`). */
  href: string | null;
  current: boolean;
  why?: string;
}

/** A row of choices as links; the chosen one is marked for sight and for screen readers. */
function choices(label: string, items: Choice[], after = ""): string {
  const links = items.map((i) => i.href === null
    ? `<span class="seg seg-off" title="${esc(i.why ?? "")}">${esc(i.text)}<span class="sr-only"> (${esc(i.why ?? "")})</span></span>`
    : `<a class="seg" href="${esc(i.href)}"${i.current ? ' aria-current="true"' : ""}>${esc(i.text)}</a>`).join("");
  return `<div class="pick"><span class="pick-label" id="pick-${esc(label.toLowerCase())}">${esc(label)}</span><div class="segs" role="group" aria-labelledby="pick-${esc(label.toLowerCase())}">${links}</div>${after}</div>`;
}

/** Hidden inputs carrying the page's state through a form, except the parameters the form's own fields set. */
function hiddenState(q: PageQuery, own: string[]): string {
  return [...queryParams(q)].filter(([n]) => !own.includes(n)).map(([n, v]) => `<input type="hidden" name="${esc(n)}" value="${esc(v)}">`).join("");
}

/** A control of a form and its message, marked invalid when a problem names it. */
function control(errors: FieldError[], name: "from" | "to" | "tz", label: string, input: (attrs: string) => string): string {
  const ref = FIELDS[`/${name}`]!;
  return `<div><label for="${ref.id}">${label}</label>${input(`id="${ref.id}" name="${name}"${invalidAttrs(errors, `/${name}`, ref.id!)}`)}${fieldProblems(errors, `/${name}`, ref)}</div>`;
}

export interface RangeControlsOptions {
  path: string;
  q: PageQuery;
  /** The range shown (null when the custom dates could not be read). */
  resolved: ResolvedRange | null;
  problems: RangeProblem[];
  /** The CSV download for the range shown, or null (nothing to download while the question is refused). */
  csvHref: string | null;
}

export function rangeControls(o: RangeControlsOptions): string {
  const { path, q } = o;
  const errors = problemErrors(o.problems);
  const shownInterval = o.resolved?.interval ?? q.interval;
  const dates = q.range === "custom" || !o.resolved ? { from: q.from, to: q.to } : rangeDates(o.resolved);
  const ranges = RANGE_NAMES.map((r) => ({ text: RANGE_PRESETS[r].label, href: pageUrl(path, q, { range: r, interval: "", from: "", to: "" }), current: q.range === r }));
  const intervals = INTERVALS.map((i): Choice => {
    const tooMany = o.resolved !== null && (o.resolved.to - o.resolved.from) / INTERVAL_MS[i] > MAX_BARS;
    return { text: INTERVAL_WORDS[i], href: tooMany ? null : pageUrl(path, q, { interval: i }), current: shownInterval === i, why: "too many bars for this range" };
  });
  const bots = BOT_MODES.map((b) => ({ text: BOT_WORDS[b], href: pageUrl(path, q, { bots: b === "exclude" ? "" : b }), current: (q.bots || "exclude") === b }));
  const date = (name: "from" | "to", label: string, value: string) => control(errors, name, label, (attrs) => `<input type="date" ${attrs} value="${esc(value)}" required>`);
  const tz = o.resolved?.tz ?? (q.tz || DEFAULT_ZONE);
  const zones = ZONES.map((z) => `<option${z === tz ? " selected" : ""}>${esc(z)}</option>`).join("");
  const csv = o.csvHref ? `<a class="btn" href="${esc(o.csvHref)}" download>Download CSV</a>` : "";
  return `${errors.length ? errorSummary({ detail: "", errors }, FIELDS) : ""}
<section class="card range" aria-label="What to show">
${choices("Range", ranges, q.range === "custom" ? '<span class="seg-note small muted">custom dates</span>' : "")}
${choices("Interval", intervals)}
${choices("Clicks of", bots)}
<form method="get" action="${esc(path)}" class="custom-range">${hiddenState({ ...q, range: "custom" }, ["from", "to"])}
${date("from", "First day", dates.from)}${date("to", "Last day", dates.to)}
<div class="act"><button type="submit">Show these days</button></div></form>
<form method="get" action="${esc(path)}" class="custom-range">${hiddenState(q, ["tz"])}
${control(errors, "tz", "Time zone", (attrs) => `<select ${attrs}>${zones}</select>`)}
<div class="act"><button type="submit">Use this zone</button></div>${csv ? `<div class="act csv">${csv}</div>` : ""}</form>
</section>`;
}

/** The CSV export's address for the range shown: from and to as the API takes them (and the page's kept parameters). */
export function csvHref(path: string, r: ResolvedRange | null, keep: [string, string][] = []): string | null {
  if (!r) return null;
  return `${path}?${new URLSearchParams([...keep, ["from", new Date(r.from).toISOString()], ["to", new Date(r.to).toISOString()]])}`;
}
