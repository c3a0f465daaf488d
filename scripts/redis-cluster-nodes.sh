#!/bin/sh
# Runs the nodes of a throwaway Redis Cluster (cluster-enabled, nothing persisted, bound to 127.0.0.1) until its
# stdin closes, then stops them and removes DIR. The test setup (test/setup/redis-cluster.ts) starts it with a
# pipe as stdin and forms the cluster; the pipe closes when the test runner stops it or exits in any way (tests
# failed, --bail, Ctrl-C, SIGKILL), so no redis-server outlives the run.
#
# usage: redis-cluster-nodes.sh DIR PORT:BUS_PORT...
set -u

dir=$1
shift
pids=""
for pair in "$@"; do
  port=${pair%%:*}
  bus=${pair#*:}
  redis-server --port "$port" --cluster-port "$bus" --bind 127.0.0.1 --cluster-enabled yes \
    --cluster-config-file "$dir/nodes-$port.conf" --cluster-node-timeout 5000 --dir "$dir" \
    --logfile "$dir/redis-$port.log" --save "" --appendonly no --daemonize no </dev/null &
  pids="$pids $!"
done

# Signals to the whole process group (Ctrl-C, `timeout`) reach the nodes themselves; this shell stays to clean up
# when the runner, which got the same signal, is gone and its end of the pipe closes.
trap '' INT TERM HUP
cat >/dev/null
kill $pids 2>/dev/null
wait
rm -rf "$dir"
