/**
 * Case 9: what recording a click costs in scale mode, every dimension recorded (issue #20): total CPU per click of
 * the consumer, Postgres and Redis for traffic spread over 10,000 links (at most 8 µs) and Zipf-distributed over
 * 100,000 links (at most 3 µs), with realistic clicks (bench/lib/ingestion.ts, the code of npm run bench:consumer).
 * Needs DATABASE_URL and REDIS_URL; --smoke uses 1,000 and 10,000 links.
 */
import type { Ctx } from "../lib/context.ts";
import { judge, type Figure } from "../lib/figures.ts";
import { INGESTION_TARGET_US, measureIngestion, type ConsumerFigure, type TrafficKind } from "../lib/ingestion.ts";
import { placedAddresses } from "../lib/traffic.ts";

const TITLES: Record<TrafficKind, string> = {
  spread: "Redis mode: click ingestion, spread traffic (about one click per link per batch), CPU per click",
  zipf: "Redis mode: click ingestion, Zipf traffic over many links, CPU per click",
};

function toFigure(f: ConsumerFigure, kind: TrafficKind): Figure {
  const target = { op: "<=" as const, value: INGESTION_TARGET_US[kind] };
  const s = f.consumerSplit;
  return {
    id: `ingest-${kind}`,
    caseNo: 9,
    title: TITLES[kind],
    verdict: judge(f.total, target),
    generator: `Redis stream → ClickDrain → Postgres, in process (${f.clicks.toLocaleString("en")} clicks over ${f.links.toLocaleString("en")} links)`,
    ratio: f.total,
    ratioUnit: " µs per click",
    target,
    notes: [
      `CPU per click: consumer ${f.consumer.toFixed(2)} µs, Postgres backends ${f.postgres.toFixed(2)} µs, Redis ${f.redis.toFixed(2)} µs; drained in ${f.seconds.toFixed(1)} s.`,
      `The consumer's share: conversion and visitor hashing ${s.convert.toFixed(2)} µs, store calls ${s.store.toFixed(2)} µs, ledger calls ${s.ledger.toFixed(2)} µs, stream reads and acks ${s.queue.toFixed(2)} µs.`,
      "Realistic clicks (bench/lib/traffic.ts): 37 User-Agents incl. crawlers, referrers Zipf over 200 hosts (35% direct), addresses in ~100 countries, 8% QR, A/B and rules on some links.",
    ],
  };
}

export async function ingestion(ctx: Ctx): Promise<Figure[]> {
  const kinds: TrafficKind[] = ["spread", "zipf"];
  if ("skipped" in ctx.scale) {
    const reason = ctx.scale.skipped;
    return kinds.map((k) => ({ id: `ingest-${k}`, caseNo: 9, title: TITLES[k], verdict: "skipped", generator: "-", target: { op: "<=", value: INGESTION_TARGET_US[k] }, notes: [], reason }));
  }
  const { addresses } = await placedAddresses(3_000);
  const smoke = ctx.opts.profile === "smoke";
  const links: Record<TrafficKind, number> = { spread: smoke ? 1_000 : 10_000, zipf: smoke ? 10_000 : 100_000 };
  const figures: Figure[] = [];
  for (const [i, kind] of kinds.entries()) {
    const f = await measureIngestion({ name: kind, links: links[kind], clicks: ctx.opts.ingestClicks[i]! }, addresses, ctx.scale);
    ctx.log(`  ${kind}: ${f.total.toFixed(2)} µs per click (consumer ${f.consumer.toFixed(2)}, Postgres ${f.postgres.toFixed(2)}, Redis ${f.redis.toFixed(2)})`);
    figures.push(toFigure(f, kind));
  }
  return figures;
}
