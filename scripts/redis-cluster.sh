#!/usr/bin/env bash
# Starts a throwaway 3-master Redis Cluster on 127.0.0.1:7001-7003 for the Cluster contract tests
# (REDIS_CLUSTER_NODES=127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003). Idempotent: a healthy cluster is
# left alone, missing nodes are started, and a cluster that never formed is created. Nothing is persisted.
# `npm test` does not need it (the test setup starts a private cluster per run, test/setup/redis-cluster.ts); it
# is for a cluster that outlives runs: name it in REDIS_CLUSTER_NODES_TEST and the test setup uses it.
set -euo pipefail

DIR=/tmp/clink-cluster
PORTS=(7001 7002 7003)
HOST=127.0.0.1

command -v redis-server >/dev/null || { echo "redis-server not found (install redis-server)" >&2; exit 1; }
command -v redis-cli >/dev/null || { echo "redis-cli not found (install redis-tools)" >&2; exit 1; }
mkdir -p "$DIR"

cli() { redis-cli -h "$HOST" -p "$1" "${@:2}"; }
up() { [ "$(cli "$1" ping 2>/dev/null || true)" = "PONG" ]; }
info_field() { cli "$1" cluster info 2>/dev/null | tr -d '\r' | sed -n "s/^$2://p"; }
healthy() {
  for p in "${PORTS[@]}"; do [ "$(info_field "$p" cluster_state)" = "ok" ] || return 1; done
}

if healthy; then
  echo "Redis Cluster already running and healthy on ${PORTS[*]}"
  exit 0
fi

for p in "${PORTS[@]}"; do
  if up "$p"; then continue; fi
  redis-server --port "$p" --bind "$HOST" --cluster-enabled yes \
    --cluster-config-file "$DIR/nodes-$p.conf" --cluster-node-timeout 5000 \
    --dir "$DIR" --logfile "$DIR/redis-$p.log" --daemonize yes --save "" --appendonly no
done

for p in "${PORTS[@]}"; do
  for _ in $(seq 1 50); do up "$p" && break; sleep 0.1; done
  up "$p" || { echo "node $p did not start; see $DIR/redis-$p.log" >&2; exit 1; }
done

# Nodes restarted with their nodes-N.conf rejoin by themselves; give them a moment before deciding.
for _ in $(seq 1 30); do healthy && break; sleep 0.1; done

if ! healthy; then
  assigned=0
  for p in "${PORTS[@]}"; do assigned=$((assigned + $(info_field "$p" cluster_slots_assigned))); done
  if [ "$assigned" -ne 0 ]; then
    # A half-formed or stale cluster (e.g. one node lost its config): this is test data, so start over.
    echo "Cluster is unhealthy with slots assigned; resetting the test nodes"
    for p in "${PORTS[@]}"; do cli "$p" flushall >/dev/null; cli "$p" cluster reset hard >/dev/null; done
  fi
  echo "Creating the cluster"
  redis-cli --cluster create "$HOST:7001" "$HOST:7002" "$HOST:7003" --cluster-replicas 0 --cluster-yes >/dev/null
fi

for _ in $(seq 1 300); do
  if healthy; then
    echo "Redis Cluster ready: REDIS_CLUSTER_NODES=$HOST:7001,$HOST:7002,$HOST:7003"
    exit 0
  fi
  sleep 0.1
done
echo "Redis Cluster did not reach cluster_state:ok within 30 s; logs in $DIR" >&2
exit 1
