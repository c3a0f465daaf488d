#!/bin/sh
# Runs the nodes of a throwaway Redis Cluster (cluster-enabled, nothing persisted, bound to 127.0.0.1) until its
# stdin closes, then stops them, removes DIR and exits. The test setup (test/setup/redis-cluster.ts) starts it with
# a pipe as stdin and forms the cluster; the pipe closes when the test runner stops it or exits in any way (tests
# failed, --bail, Ctrl-C, SIGKILL), so no redis-server outlives the run.
#
# usage: redis-cluster-nodes.sh DIR PORT:BUS_PORT...
set -u

dir=$1
shift

# Starts the nodes, waits for the end of fd 3 (our stdin), then stops them and removes DIR.
supervise() {
  pids=""
  for pair in "$@"; do
    port=${pair%%:*}
    bus=${pair#*:}
    redis-server --port "$port" --cluster-port "$bus" --bind 127.0.0.1 --cluster-enabled yes \
      --cluster-config-file "$dir/nodes-$port.conf" --cluster-node-timeout 5000 --dir "$dir" \
      --logfile "$dir/redis-$port.log" --save "" --appendonly no --daemonize no </dev/null 3<&- &
    pids="$pids $!"
  done
  # Signals to the whole process group (Ctrl-C, `timeout`) reach the nodes themselves; this shell stays to clean
  # up when the runner, which got the same signal, is gone and its end of the pipe closes.
  trap '' INT TERM HUP
  cat <&3 >/dev/null
  kill $pids 2>/dev/null
  wait
  rm -rf "$dir"
}

# The nodes and their watcher run in a subshell. Under Bun's --no-orphans (which CI passes, and which children of
# a Bun inherit) this shell gets SIGKILL the moment the runner dies; a forked subshell does not inherit that, so
# the watcher lives to see the pipe close and cleans up. fd 3 carries the pipe: a background job's stdin is
# /dev/null.
exec 3<&0
supervise "$@" &
exec 3<&-
trap '' INT TERM HUP
wait
