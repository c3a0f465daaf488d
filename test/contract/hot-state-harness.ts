/**
 * What the contract suites of HotState's roles and of the click queue share. A suite's `make()` returns an
 * instance on the suite's current backend; two calls within one test must share that backend (two redirector
 * processes on one Redis). An adapter file may give each test a fresh backend (memory: a new instance; Redis: a
 * new key prefix) from its own `beforeEach`.
 */
import { afterEach } from "bun:test";

export const uid = () => crypto.randomUUID().slice(0, 8);

/** Polls until `check` holds; returns the elapsed milliseconds, or fails after `ms`. */
export async function within(ms: number, check: () => boolean): Promise<number> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > ms) throw new Error(`condition not met within ${ms} ms`);
    await Bun.sleep(2);
  }
  return performance.now() - start;
}

/** Called inside a describe: `instance()` opens one with `make`, closed (when it can be) after each test. */
export function instances<T>(make: () => Promise<T>): () => Promise<T> {
  const opened: T[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((h) => (h as { close?: () => Promise<void> }).close?.()));
  });
  return async () => {
    const h = await make();
    opened.push(h);
    return h;
  };
}
