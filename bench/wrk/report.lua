-- Appended to every wrk script the benchmark runs: at the end, wrk prints one machine-readable line that
-- bench/lib/wrk.ts parses (requests, errors and latency percentiles in microseconds), so no figure is
-- scraped from wrk's human-readable table.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '@@BENCH {"requests":%d,"durationUs":%d,"bytes":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,' ..
    '"statusErrors":%d,"timeouts":%d,"latencyUs":{"mean":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.max, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9)))
end
