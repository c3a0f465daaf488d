/** Every case, in the order the benchmark runs them; `--only` takes these ids. */
import type { Ctx } from "../lib/context.ts";
import type { Figure } from "../lib/figures.ts";
import { apiGet } from "./api-get.ts";
import { bulkCreate } from "./bulk-create.ts";
import { ingestion } from "./ingestion.ts";
import { notFound } from "./not-found.ts";
import { peakRss } from "./peak-rss.ts";
import { redirectEmbedded } from "./redirect-embedded.ts";
import { redirectRules } from "./redirect-rules.ts";
import { redisRedirect } from "./redis-redirect.ts";
import { statsLatency } from "./stats-latency.ts";

export interface Case {
  id: string;
  /** Shown while running, and in the report if the case fails to run. */
  title: string;
  caseNos: number[];
  run(ctx: Ctx): Promise<Figure[]>;
}

export const CASES: Case[] = [
  { id: "redirect-embedded", caseNos: [1], title: "Embedded default: plain link, click recorded", run: redirectEmbedded },
  { id: "redirect-rules", caseNos: [3], title: "Embedded: rules + A/B + UTM + maxHits", run: redirectRules },
  { id: "not-found", caseNos: [4], title: "Embedded: 404 for unknown slugs", run: notFound },
  { id: "redirect-redis", caseNos: [2, 5, 7], title: "Redis mode: plain link; redirector RSS; bulk create vs Postgres INSERT", run: redisRedirect },
  { id: "api", caseNos: [8], title: "API: GET /api/v1/links/{slug}", run: apiGet },
  { id: "bulk", caseNos: [5], title: "Embedded: bulk create vs one multi-row INSERT", run: bulkCreate },
  { id: "stats", caseNos: [6], title: "Queries: busy vs quiet link, large vs small account (SQLite, and Postgres in scale mode)", run: statsLatency },
  { id: "rss", caseNos: [7], title: "Embedded: peak RSS", run: peakRss },
  { id: "ingest", caseNos: [9], title: "Redis mode: click ingestion CPU per click, spread and Zipf traffic", run: ingestion },
];
