/**
 * Case 9: what recording a click costs in scale mode, every dimension recorded (issue #20): total CPU per click of
 * the consumer, Postgres and Redis for traffic spread over 10,000 links (at most 8 µs) and Zipf-distributed over
 * 100,000 links (at most 3 µs), with realistic clicks (bench/lib/ingestion.ts, the code of npm run bench:consumer).
 * Each kind is followed by the ingestion floor on the same clicks (bench/lib/ingestion-floor.ts, docs/adr/0014): the
 * least work the requirements impose, with none of clink's code; clink's figure is stated against it.
 * Needs DATABASE_URL and REDIS_URL; --smoke uses 1,000 and 10,000 links.
 */
import type { Ctx } from "../lib/context.ts";
import { judge, type Figure } from "../lib/figures.ts";
import { INGESTION_TARGET_US, measureIngestion, PER_ENTRY, type ConsumerFigure, type TrafficKind } from "../lib/ingestion.ts";
import { measureFloor, type FloorFigure } from "../lib/ingestion-floor.ts";
import { placedAddresses } from "../lib/traffic.ts";

const TITLES: Record<TrafficKind, string> = {
  spread: "Redis mode: click ingestion, spread traffic (about one click per link per batch), CPU per click",
  zipf: "Redis mode: click ingestion, Zipf traffic over many links, CPU per click",
};

/** "clink X µs = N× the floor (floor Y µs …)", and whether the target is reachable at all on this machine. */
export function againstFloor(c: ConsumerFigure, f: FloorFigure): string {
  return `clink ${c.total.toFixed(2)} µs = ${(c.total / f.total).toFixed(2)}× the floor (floor ${f.total.toFixed(2)} µs: consumer ${f.consumer.toFixed(2)}, ` +
    `Postgres ${f.postgres.toFixed(2)}, Redis ${f.redis.toFixed(2)}); the target of ${c.targetUs} µs is ${f.total <= c.targetUs ? "above the floor: reachable" : "BELOW THE FLOOR on this machine"}.`;
}

function floorFigure(f: FloorFigure, kind: TrafficKind): Figure {
  return {
    id: `ingest-floor-${kind}`,
    caseNo: 9,
    title: `${TITLES[kind]}: the floor (least work the requirements impose, no clink code)`,
    verdict: "info",
    generator: `Redis stream → bench/lib/ingestion-floor.ts → Postgres, in process (${f.clicks.toLocaleString("en")} clicks, the same as clink's)`,
    ratio: f.total,
    ratioUnit: " µs per click",
    notes: [
      `CPU per click: consumer ${f.consumer.toFixed(2)} µs (stream ${f.split.queue.toFixed(2)}, dimensions, cells and visitor hashing ${f.split.convert.toFixed(2)}, ` +
        `ledger calls ${f.split.ledger.toFixed(2)}, statements ${f.split.store.toFixed(2)}), Postgres backends ${f.postgres.toFixed(2)} µs, Redis ${f.redis.toFixed(2)} µs; drained in ${f.seconds.toFixed(1)} s.`,
    ],
  };
}

function toFigure(f: ConsumerFigure, kind: TrafficKind, floor: FloorFigure): Figure {
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
      againstFloor(f, floor),
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
    // The smoke run proves the code runs (CI): a few entries of warm-up, not two full reads.
    const t = { name: kind, links: links[kind], clicks: ctx.opts.ingestClicks[i]!, warmClicks: smoke ? 4 * PER_ENTRY : undefined };
    const f = await measureIngestion(t, addresses, ctx.scale);
    ctx.log(`  ${kind}: ${f.total.toFixed(2)} µs per click (consumer ${f.consumer.toFixed(2)}, Postgres ${f.postgres.toFixed(2)}, Redis ${f.redis.toFixed(2)})`);
    const floor = await measureFloor(t, addresses, ctx.scale);
    ctx.log(`  ${kind} floor: ${floor.total.toFixed(2)} µs per click (consumer ${floor.consumer.toFixed(2)}, Postgres ${floor.postgres.toFixed(2)}, Redis ${floor.redis.toFixed(2)})`);
    figures.push(toFigure(f, kind, floor), floorFigure(floor, kind));
  }
  return figures;
}
