#!/usr/bin/env bash
# The full Temporal server, the one production runs (docker-compose.yml's temporalio/auto-setup
# 1.29.1: PostgreSQL persistence and visibility, 4 history shards, namespace `default` kept
# 72 h), built from source and run as a local process: for the cluster tests
# (`npm run test:cluster`) and for anyone who wants the service on it rather than on the dev
# server.
#
#   scripts/temporal-server.sh build       builds the binaries if missing (.ci/run does it ahead
#                                          of time, beside other work)
#   scripts/temporal-server.sh start DIR   builds the binaries if missing, creates the databases
#                                          and schemas, starts the server, creates the namespace
#                                          and the search attributes; prints its address
#   scripts/temporal-server.sh stop DIR    stops it and drops its databases
#
# Environment: PGHOST, PGPORT, PGUSER, PGPASSWORD (default 127.0.0.1, 5432, postgres, none);
# TEMPORAL_DB_PREFIX (default temporal: databases PREFIX and PREFIX_visibility);
# TEMPORAL_PORT (default 7233: the frontend; the other services use the next 8 ports; all
# below 32768, as the server keeps membership ports in a smallint).
set -euo pipefail

VERSION=1.29.1
usage="usage: temporal-server.sh build | start DIR | stop DIR"
command=${1:?$usage}
[ "$command" = build ] || dir=${2:?$usage}
pg_host=${PGHOST:-127.0.0.1}
pg_port=${PGPORT:-5432}
pg_user=${PGUSER:-postgres}
prefix=${TEMPORAL_DB_PREFIX:-temporal}
port=${TEMPORAL_PORT:-7233}
address="127.0.0.1:$port"
gobin="$(go env GOPATH)/bin"
temporal_cli=${TEMPORAL_CLI_PATH:-$gobin/temporal}

sql_tool() {
  "$gobin/sql" --plugin postgres12 --endpoint "$pg_host" --port "$pg_port" --user "$pg_user" \
    ${PGPASSWORD:+--password "$PGPASSWORD"} "$@"
}

# Retries `$@` until it succeeds, once every half second, for at most $1 tries.
retry() {
  local tries=$1; shift
  until "$@" >/dev/null 2>&1; do
    tries=$((tries - 1))
    if [ "$tries" -le 0 ]; then "$@"; return 1; fi
    sleep 0.5
  done
}

schema="$(go env GOMODCACHE)/go.temporal.io/server@v$VERSION/schema/postgresql/v12"

build() {
  if [ ! -x "$gobin/server" ] || [ ! -x "$gobin/sql" ]; then
    echo "building the Temporal server $VERSION with go install (about 5 minutes, once)" >&2
    go install "go.temporal.io/server/cmd/server@v$VERSION" "go.temporal.io/server/cmd/tools/sql@v$VERSION"
  fi
  [ -d "$schema" ] || go mod download "go.temporal.io/server@v$VERSION"
}

start() {
  build

  mkdir -p "$dir/config"
  for db in "$prefix" "${prefix}_visibility"; do
    local kind=temporal
    [ "$db" = "$prefix" ] || kind=visibility
    sql_tool --database "$db" create-database >> "$dir/schema.log" 2>&1
    sql_tool --database "$db" setup-schema -v 0.0 >> "$dir/schema.log" 2>&1
    sql_tool --database "$db" update-schema -d "$schema/$kind/versioned" >> "$dir/schema.log" 2>&1
  done

  # No dynamic configuration: the server's defaults, as in production.
  : > "$dir/config/dynamicconfig.yaml"
  cat > "$dir/config/development.yaml" <<YAML
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: 4
  datastores:
$(for store in default visibility; do
    db=$prefix; [ "$store" = default ] || db=${prefix}_visibility
    cat <<STORE
    $store:
      sql:
        pluginName: postgres12_pgx
        databaseName: $db
        connectAddr: "$pg_host:$pg_port"
        connectProtocol: tcp
        user: "$pg_user"
        password: "${PGPASSWORD:-}"
        maxConns: 20
        maxIdleConns: 20
        maxConnLifetime: 1h
STORE
  done)
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
  frontend:
    rpc: { grpcPort: $port, membershipPort: $((port + 1)), httpPort: $((port + 2)), bindOnLocalHost: true }
  history:
    rpc: { grpcPort: $((port + 3)), membershipPort: $((port + 4)), bindOnLocalHost: true }
  matching:
    rpc: { grpcPort: $((port + 5)), membershipPort: $((port + 6)), bindOnLocalHost: true }
  worker:
    rpc: { grpcPort: $((port + 7)), membershipPort: $((port + 8)), bindOnLocalHost: true }
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "$address"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: "$dir/config/dynamicconfig.yaml"
  pollInterval: 10s
YAML

  nohup "$gobin/server" --root "$dir" --env development --allow-no-auth start > "$dir/server.log" 2>&1 &
  local pid=$!
  echo "$pid" > "$dir/server.pid"
  until "$temporal_cli" operator cluster health --address "$address" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "the Temporal server stopped; its last lines:" >&2
      tail -20 "$dir/server.log" >&2
      exit 1
    fi
    sleep 0.5
  done
  retry 60 "$temporal_cli" operator namespace create --namespace default --retention 72h --address "$address" ||
    "$temporal_cli" operator namespace describe --namespace default --address "$address" >/dev/null
  # The search attributes of src/temporal/search-attributes.ts. A namespace just created
  # takes a few seconds to reach every cache, and so do new attributes: retry, then wait
  # until a workflow that sets them can start.
  retry 60 "$temporal_cli" operator search-attribute create --namespace default --address "$address" \
    --name WebhookId --type Keyword --name AccountId --type Keyword \
    --name ListId --type Keyword --name WebhookStatus --type Keyword
  local probe="search-attribute-probe-$$"
  retry 60 "$temporal_cli" workflow start --namespace default --address "$address" --workflow-id "$probe" \
    --type probe --task-queue probe --search-attribute 'WebhookId="probe"' --search-attribute 'WebhookStatus="active"' \
    --search-attribute 'AccountId="probe"' --search-attribute 'ListId="probe"'
  "$temporal_cli" workflow terminate --namespace default --address "$address" --workflow-id "$probe" >/dev/null
  echo "$address"
}

stop() {
  if [ -f "$dir/server.pid" ]; then
    local pid
    pid=$(cat "$dir/server.pid")
    kill "$pid" 2>/dev/null || true
    # Wait for it to let go of its database connections before they are dropped.
    while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
    rm -f "$dir/server.pid"
  fi
  for db in "$prefix" "${prefix}_visibility"; do
    sql_tool --database "$db" drop-database --defaultdb postgres --force >/dev/null 2>&1 || true
  done
}

case "$command" in
  build) build ;;
  start) start ;;
  stop) stop ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
