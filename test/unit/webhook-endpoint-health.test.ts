/** Per-link backoff and pause of a failing webhook endpoint, on a test clock. */
import { describe, expect, test } from "bun:test";
import { backoffMs, DEFAULT_HEALTH_POLICY, EndpointHealth } from "../../shared/webhooks/endpoint-health.ts";

const MINUTE = 60_000;
const P = DEFAULT_HEALTH_POLICY;

describe("backoff", () => {
  test("1 s after the first failure, doubling, at most 60 s", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 100].map((n) => backoffMs(n, P))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  test("a failing link is held back until its backoff ends; other links are not", () => {
    const h = new EndpointHealth();
    expect(h.failed("l1", 1, 0, "answered HTTP 500")).toBeNull();
    expect([h.allows("l1", 1, 999), h.allows("l1", 1, 1_000), h.allows("l2", 1, 0)]).toEqual([false, true, true]);
    h.failed("l1", 1, 1_000, "answered HTTP 500");
    expect([h.allows("l1", 1, 2_999), h.allows("l1", 1, 3_000)]).toEqual([false, true]);
  });

  test("failures of deliveries in flight together never shorten the backoff", () => {
    const h = new EndpointHealth();
    h.failed("l1", 1, 0, "x"); // retry at 1 s
    h.failed("l1", 1, 0, "x"); // second failure: 2 s
    expect([h.allows("l1", 1, 1_999), h.allows("l1", 1, 2_000)]).toEqual([false, true]);
  });

  test("at most 100,000 links are tracked: the longest-tracked is forgotten first", () => {
    const h = new EndpointHealth();
    for (let i = 0; i <= 100_000; i++) h.failed(`l${i}`, 1, 0, "x");
    expect(h.size).toBe(100_000);
    expect([h.allows("l0", 1, 0), h.allows("l1", 1, 0), h.allows("l100000", 1, 0)]).toEqual([true, false, false]);
  });

  test("a delivery that succeeds forgets the failures", () => {
    const h = new EndpointHealth();
    for (let i = 0; i < 5; i++) h.failed("l1", 1, i * MINUTE, "x");
    h.succeeded("l1");
    expect(h.size).toBe(0);
    h.failed("l1", 1, 10 * MINUTE, "x");
    expect(h.allows("l1", 1, 10 * MINUTE + 1_000)).toBe(true); // the first failure's backoff again
  });
});

describe("pause", () => {
  /** Fails `n` times, `gap` apart from `start`; returns the pause reasons given. */
  function fail(h: EndpointHealth, n: number, gap: number, start = 0): (string | null)[] {
    return Array.from({ length: n }, (_, i) => h.failed("l1", 1, start + i * gap, "no answer within 5 s"));
  }

  test("20 failures over 10 minutes pause the link once, with the reason in words", () => {
    const h = new EndpointHealth();
    const gap = Math.ceil((10 * MINUTE) / 19); // the 20th failure exactly 10 minutes after the first
    const reasons = fail(h, 21, gap);
    expect(reasons.slice(0, 19).every((r) => r === null)).toBe(true);
    expect(reasons[19]).toBe("20 deliveries in a row failed over 10 minutes; the last: no answer within 5 s. Set the webhook URL again to resume.");
    expect(reasons[20]).toBeNull(); // reported once
    expect(h.allows("l1", 1, 365 * 24 * 60 * MINUTE)).toBe(false); // paused: no backoff ends it
  });

  test("20 failures within less than 10 minutes only back off", () => {
    const h = new EndpointHealth();
    expect(fail(h, 40, 15_000).every((r) => r === null)).toBe(true); // 40 failures over 9.75 minutes
  });

  test("fewer than 20 failures, however long, only back off", () => {
    const h = new EndpointHealth();
    expect(fail(h, 19, 60 * MINUTE).every((r) => r === null)).toBe(true);
    expect(h.failed("l1", 1, 19 * 60 * MINUTE, "x")).not.toBeNull();
  });

  test("a newer version of the link (webhookUrl set again) starts afresh; an older one does not", () => {
    const h = new EndpointHealth();
    fail(h, 20, MINUTE);
    expect(h.allows("l1", 1, 100 * MINUTE)).toBe(false);
    expect(h.allows("l1", 0, 100 * MINUTE)).toBe(false);
    expect(h.allows("l1", 2, 100 * MINUTE)).toBe(true);
    expect(h.failed("l1", 2, 100 * MINUTE, "x")).toBeNull();
    expect(h.allows("l1", 2, 100 * MINUTE + 1_000)).toBe(true);
  });
});
