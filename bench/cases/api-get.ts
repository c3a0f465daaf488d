/**
 * Case 8: API throughput for GET /api/v1/links/{slug} with authentication and rate limiting on (the key's
 * budget raised by RATE_LIMIT_PER_MINUTE so the benchmark is not refused, but every request still takes a
 * unit atomically). Measured with autocannon's programmatic API: the server is the limit here, an order of
 * magnitude below autocannon's own ceiling, which the reference run against the bare 302 shows in the same
 * invocation. No §7 target: reported for information.
 */
import { apiCall, BENCH_RATE_LIMIT, createLink, startEmbedded, type Clink } from "../lib/app.ts";
import { interleave, throughputFigure } from "../lib/compare.ts";
import type { Ctx } from "../lib/context.ts";
import type { Figure } from "../lib/figures.ts";
import type { LoadResult, RequestVariant } from "../lib/load.ts";
import { median } from "../lib/stats.ts";

/**
 * Proves rate limiting took a unit for every request of a run: RateLimit-Remaining read just before and just
 * after the run must fall by at least the answered requests. The window is fixed per minute, so a run during
 * which the window changed (the budget was refilled) cannot be checked and is left out.
 */
function rateLimitAudit(app: Clink, path: string) {
  let before: { remaining: number; resetS: number; at: number } | null = null;
  const audit = { runs: 0, skipped: 0, counted: 0, answered: 0 };
  const read = async () => {
    const r = await apiCall(app, "GET", path);
    return { remaining: Number(r.headers.get("ratelimit-remaining")), resetS: Number(r.headers.get("ratelimit-reset")), at: Date.now() };
  };
  return {
    audit,
    hooks: {
      before: async () => {
        before = await read();
      },
      after: async (result: LoadResult) => {
        const after = await read();
        if (!before || (after.at - before.at) / 1000 >= before.resetS - 1) {
          audit.skipped++;
          return;
        }
        audit.runs++;
        audit.counted += before.remaining - after.remaining - 1; // the "after" read took one unit itself
        audit.answered += result.requests;
      },
    },
  };
}

export async function apiGet(ctx: Ctx): Promise<Figure[]> {
  const app = await startEmbedded(ctx, "embedded-api");
  try {
    const slug = "bench-api";
    const path = `/api/v1/links/${slug}`;
    await createLink(app, { url: "https://example.com/landing", slug, tags: ["bench", "api"], utmSource: "bench" });
    const first = await apiCall(app, "GET", path);
    if (first.status !== 200 || first.headers.get("ratelimit-limit") !== String(BENCH_RATE_LIMIT)) {
      throw new Error(`GET link answered ${first.status}, RateLimit-Limit ${first.headers.get("ratelimit-limit")}`);
    }
    const c = ctx.opts.apiConnections;
    const variants: RequestVariant[] = [{ path, headers: { authorization: `Bearer ${app.key}` } }];
    const spec = (baseUrl: string, pids: number[], expect: "2xx" | "3xx") => ({ baseUrl, variants, expect, durationS: ctx.opts.durationS, connections: c, serverPids: pids });
    const { audit, hooks } = rateLimitAudit(app, path);
    const cmp = await interleave(
      ctx,
      "autocannon",
      { label: "bare Bun.serve 302", spec: spec(ctx.baseline.url, [ctx.baseline.pid], "3xx") },
      { label: "GET link", spec: spec(app.control.url, [app.control.pid], "2xx"), aroundRun: hooks },
    );
    const headroom = median(cmp.rounds.map((r) => r.subject.rps)) / median(cmp.rounds.map((r) => r.reference.rps));
    const limited = audit.runs > 0 && audit.counted >= audit.answered;
    const figure = throughputFigure(
      {
        id: "api-get",
        caseNo: 8,
        title: "API: GET /api/v1/links/{slug}, auth + rate limit on",
        referenceIsCeiling: true,
        notes: [
          audit.runs === 0
            ? "Rate limiting could not be audited: every run crossed a window boundary."
            : limited
              ? `Rate limiting was on: over ${audit.runs} audited runs the key's remaining budget fell by ${audit.counted.toLocaleString("en")} for ${audit.answered.toLocaleString("en")} answered requests (more: requests in flight when a run stopped).`
              : `RATE LIMIT NOT APPLIED to every request: over ${audit.runs} audited runs the budget fell by ${audit.counted.toLocaleString("en")} for ${audit.answered.toLocaleString("en")} answered requests.`,
          `The reference runs show autocannon's own ceiling (it saturates there, by design of this comparison); the API ran at ${(headroom * 100).toFixed(0)}% of it in the same rounds.`,
        ],
      },
      cmp,
      { subject: "GET /api/v1/links/{slug}", reference: "bare Bun.serve 302 (autocannon)" },
      c,
      false,
    );
    if (figure.generatorCheck?.ok) figure.notes.push("autocannon stayed below saturation in the API runs: the server, not autocannon, set this figure.");
    if (audit.runs > 0 && !limited) figure.verdict = "fail";
    return [figure];
  } finally {
    await app.stop();
  }
}
