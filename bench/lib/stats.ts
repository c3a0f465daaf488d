/** Small statistics over a handful of rounds or a few thousand latencies. */

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** Linear interpolation between closest ranks; NaN for no values. */
export function percentile(values: number[], p: number): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const rank = (p / 100) * (v.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return v[lo] + (v[hi] - v[lo]) * (rank - lo);
}

export const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** Deterministic PRNG (mulberry32), so seeded data is the same on every run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks an index by weight with one uniform draw. */
export function weightedPicker(weights: number[]): (u: number) => number {
  const total = sum(weights);
  const cumulative: number[] = [];
  let acc = 0;
  for (const w of weights) cumulative.push((acc += w / total));
  return (u) => {
    for (let i = 0; i < cumulative.length; i++) if (u < cumulative[i]) return i;
    return cumulative.length - 1;
  };
}
