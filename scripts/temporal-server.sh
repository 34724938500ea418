#!/usr/bin/env bash
# Temporal server on Postgres, as production runs it (docker-compose.yml's temporal, temporal-schema jobs),
# for tests, benchmarks and `llmgw dev --temporal server`.
#
#   temporal-server.sh build [--authorize]
#       builds temporal-server and temporal-sql-tool with go install (once per machine: some ten minutes on
#       two cores) and copies the Postgres schema they ship, into ~/.cache/llmgw/temporal-server-v<version>;
#       prints that folder. --authorize builds llmgw's own server instead (deploy/temporal-server: the same
#       server with llmgw's authorizer), into a folder named after its Go source's hash
#   TEMPORAL_POSTGRES_URL=postgres://user:password@host:port/temporal temporal-server.sh start --port P [--authorize]
#       builds if needed, creates the databases <db> and <db>_visibility if missing and brings their
#       schemas up to date (temporal-schema's steps), writes a config to a temporary folder, then runs the
#       server in the foreground (exec: a signal to this process reaches the server). With --authorize,
#       llmgw's server, which takes every call's credential (LLMGW_TEMPORAL_KEY_FILE: the key that signs
#       them, shared with the control plane) and lets an agent reach its own node's task queue only
#   TEMPORAL_POSTGRES_URL=... temporal-server.sh config --port P --dir DIR [--authorize]
#       only writes that config to DIR
#
# The server takes the block of ports P..P+8, on 127.0.0.1: P is the frontend's gRPC (clients' address),
# P+1 its HTTP API, the rest the services' gRPC and membership ports. With --authorize, P..P+11: P+9..P+11
# are the internal frontend's, which the server's own workers call without credentials (it authorizes
# nothing, so it must be reachable from the server's machines only: no agent, no client). The URL comes
# from the environment, not the command line, because any local user can read a command line (ps). The namespace and llmgw's
# search attributes are the caller's to register (src/cli/dev/temporal-postgres-server.ts), as
# temporal-setup does in compose.
set -euo pipefail
version=1.29.1
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/temporal-server-v$version"
scripts_dir="$(cd "$(dirname "$0")" && pwd)"
# A fresh database's shard count is fixed for its lifetime; 4, as the server's own Postgres dev config.
history_shards=4
authorize=''
log() { printf 'temporal-server: %s\n' "$*" >&2; }
fail() { log "$*"; exit 1; }
# shellcheck source=progress.sh
. "$scripts_dir/progress.sh"

built() { [ -x "$cache_dir/temporal-server" ]; }

# With --authorize: llmgw's own server (deploy/temporal-server: the stock one with an authorizer), in a
# folder keyed by its Go source's hash, so that a machine builds each version of it once.
authorizing_source="$scripts_dir/../deploy/temporal-server"
use_authorizing_server() {
  local hash
  hash=$(cd "$authorizing_source" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)
  cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/temporal-server-v$version-llmgw-$hash"
  authorize=1
}

build() {
  built && return 0
  command -v go >/dev/null 2>&1 ||
    fail "building Temporal server v$version needs Go >= 1.25 (https://go.dev/doc/install); install it and rerun"
  mkdir -p "$cache_dir"
  # Built into a folder of its own, then moved in: the server binary, moved last, marks a finished build.
  local staging
  staging=$(mktemp -d "$cache_dir/.build-XXXXXX")
  log "building Temporal server v$version${authorize:+ with the llmgw authorizer} (once per machine: some ten minutes on two cores)"
  # Both commands in one go command: they share the module and most packages.
  if [ -n "$authorize" ]; then
    (cd "$authorizing_source" && with_progress "building Temporal server" go_install_summary \
      env GOFLAGS=-mod=mod go build -x -o "$staging/" . go.temporal.io/server/cmd/tools/sql)
  else
    with_progress "building Temporal server" go_install_summary \
      env GOBIN="$staging" GOFLAGS=-mod=mod go install -x \
      "go.temporal.io/server/cmd/server@v$version" "go.temporal.io/server/cmd/tools/sql@v$version"
  fi || { rm -rf "$staging"; fail "the Go build failed (its output is above)"; }
  [ -x "$staging/server" ] || mv "$staging/temporal-server" "$staging/server"
  local module
  module="$(go env GOMODCACHE)/go.temporal.io/server@v$version"
  mkdir -p "$staging/schema/postgresql"
  cp -R "$module/schema/postgresql/v12" "$staging/schema/postgresql/"
  # The module cache is read-only; the copy must stay removable.
  chmod -R u+w "$staging/schema"
  rm -rf "$cache_dir/schema"
  mv "$staging/schema" "$cache_dir/schema"
  mv "$staging/sql" "$cache_dir/temporal-sql-tool"
  mv "$staging/server" "$cache_dir/temporal-server"
  rm -rf "$staging"
}

# Sets pg_user, pg_password, pg_host, pg_port, pg_database from TEMPORAL_POSTGRES_URL.
parse_postgres_url() {
  local url=${TEMPORAL_POSTGRES_URL:-}
  [ -n "$url" ] || fail "TEMPORAL_POSTGRES_URL is not set: give the Postgres to run on, as postgres://user:password@host:port/temporal"
  local pattern='^postgres(ql)?://(([^:@/]+)(:([^@/]*))?@)?([^:@/?]+)(:([0-9]+))?(/([^/?]*))?$'
  [[ $url =~ $pattern ]] ||
    fail "TEMPORAL_POSTGRES_URL is not a URL of the form postgres://user:password@host:port/database (without ?parameters)"
  pg_user=$(percent_decoded "${BASH_REMATCH[3]}")
  pg_password=$(percent_decoded "${BASH_REMATCH[5]}")
  pg_host=${BASH_REMATCH[6]}
  pg_port=${BASH_REMATCH[8]:-5432}
  pg_database=$(percent_decoded "${BASH_REMATCH[10]:-temporal}")
  [ -n "$pg_database" ] || pg_database=temporal
  [ -n "$pg_user" ] || fail "TEMPORAL_POSTGRES_URL names no user"
}

percent_decoded() { printf '%b' "${1//%/\\x}"; }

# A YAML single-quoted scalar: nothing in it is special but the quote, doubled.
yaml_quoted() { printf "'%s'" "${1//\'/\'\'}"; }

# parse_port VALUE: the block's first port, checked.
parse_port() {
  [[ ${1:-} =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= 65527)) ||
    fail "--port takes the first of 9 free ports (1 to 65527), not '${1:-}'"
  port=$1
}

datastore() {
  cat <<EOF
      sql:
        pluginName: postgres12
        databaseName: $(yaml_quoted "$1")
        connectAddr: $(yaml_quoted "$pg_host:$pg_port")
        connectProtocol: tcp
        user: $(yaml_quoted "$pg_user")
        password: $(yaml_quoted "$pg_password")
        maxConns: $2
        maxIdleConns: $2
        maxConnLifetime: 1h
EOF
}

service() {
  cat <<EOF
  $1:
    rpc:
      grpcPort: $2
      membershipPort: $3
      bindOnIP: 127.0.0.1
EOF
}

# With --authorize: the internal frontend, which the server's own workers call (they find it through
# membership: the config then names no publicClient). Without it, nothing.
internal_frontend() {
  [ -n "$authorize" ] || return 0
  cat <<EOF
  internal-frontend:
    rpc:
      grpcPort: $((port + 9))
      httpPort: $((port + 11))
      membershipPort: $((port + 10))
      bindOnIP: 127.0.0.1
EOF
}

# write_config DIR: DIR/development.yaml (the server's --env) and DIR/dynamicconfig.yaml, readable by
# this user alone (the first holds the password).
write_config() {
  local dir=$1
  mkdir -p "$dir"
  chmod 700 "$dir"
  umask 077
  {
    cat <<EOF
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: $history_shards
  datastores:
    postgres-default:
$(datastore "$pg_database" 20)
    postgres-visibility:
$(datastore "${pg_database}_visibility" 10)
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
  frontend:
    rpc:
      grpcPort: $port
      httpPort: $((port + 1))
      membershipPort: $((port + 2))
      bindOnIP: 127.0.0.1
$(service history $((port + 3)) $((port + 4)))
$(service matching $((port + 5)) $((port + 6)))
$(service worker $((port + 7)) $((port + 8)))
$(internal_frontend)
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
      rpcAddress: 127.0.0.1:$port
      httpAddress: 127.0.0.1:$((port + 1))
dcRedirectionPolicy:
  policy: noop
$([ -n "$authorize" ] || printf 'publicClient:\n  hostPort: 127.0.0.1:%s\n' "$port")
dynamicConfigClient:
  filepath: $(yaml_quoted "$dir/dynamicconfig.yaml")
  pollInterval: 10s
EOF
  } >"$dir/development.yaml"
  {
    # compose's rules first, then what a server started moments ago needs.
    cat "$scripts_dir/../deploy/compose/temporal/dynamicconfig.yaml"
    cat <<EOF

# A namespace and search attributes registered just after start reach every service within a second,
# not ten (each service caches namespaces; the dev server registers them before its services start).
system.namespaceCacheRefreshInterval:
  - value: 1s
    constraints: {}
EOF
  } >"$dir/dynamicconfig.yaml"
}

# setup_schema DATABASE FOLDER: temporal-schema's steps (deploy/compose/temporal/setup-schema.sh), each
# idempotent: create the database if missing, version tables, then the versions not applied yet.
setup_schema() {
  local database=$1 folder=$2
  log "schema of database $database ($folder)"
  sql_tool --database "$database" create-database --defaultdb postgres
  sql_tool --database "$database" setup-schema -v 0.0
  sql_tool --database "$database" update-schema -d "$cache_dir/schema/postgresql/v12/$folder/versioned"
}

# Runs temporal-sql-tool with the connection in its environment (the password off the command line);
# its chatter shows only when it fails.
sql_tool() {
  local output
  if ! output=$(SQL_PLUGIN=postgres12 SQL_HOST=$pg_host SQL_PORT=$pg_port SQL_USER=$pg_user \
    SQL_PASSWORD=$pg_password "$cache_dir/temporal-sql-tool" "$@" 2>&1); then
    printf '%s\n' "$output" | tail -n 20 >&2
    fail "temporal-sql-tool $* failed (its output is above)"
  fi
}

# parse_options ARGS...: --port P, --authorize, and --dir DIR where allowed ($dir_allowed).
parse_options() {
  port='' dir=''
  while (($#)); do
    case $1 in
      --port) parse_port "${2:-}"; shift 2 ;;
      --authorize) use_authorizing_server; shift ;;
      --dir) [ -n "$dir_allowed" ] && [ -n "${2:-}" ] || fail "--dir DIR belongs to 'config'"; dir=$2; shift 2 ;;
      *) fail "unknown option '$1' (usage: temporal-server.sh build [--authorize] | start --port P [--authorize] | config --port P --dir DIR [--authorize])" ;;
    esac
  done
  [ -n "$port" ] || fail "--port P is required (the first of 9 free ports)"
  [ -z "$authorize" ] || ((port <= 65524)) || fail "--port with --authorize takes the first of 12 free ports (1 to 65524), not '$port'"
}

command=${1:-}
shift || true
case $command in
  build)
    case ${1:-} in
      '') ;;
      --authorize) use_authorizing_server ;;
      *) fail "unknown option '$1' (usage: temporal-server.sh build [--authorize])" ;;
    esac
    build
    echo "$cache_dir"
    ;;
  config)
    dir_allowed=1 parse_options "$@"
    [ -n "$dir" ] || fail "config needs --dir DIR"
    parse_postgres_url
    write_config "$dir"
    ;;
  start)
    dir_allowed='' parse_options "$@"
    parse_postgres_url
    if [ -n "$authorize" ]; then
      [ -r "${LLMGW_TEMPORAL_KEY_FILE:-}" ] ||
        fail "--authorize needs LLMGW_TEMPORAL_KEY_FILE: a readable file holding the key that signs llmgw's Temporal credentials"
    fi
    build
    setup_schema "$pg_database" temporal
    setup_schema "${pg_database}_visibility" visibility
    dir=$(mktemp -d "${TMPDIR:-/tmp}/llmgw-temporal-server-XXXXXX")
    write_config "$dir"
    # The config folder goes when the server does (exec keeps this process's id), however it ends.
    (while kill -0 $$ 2>/dev/null; do sleep 2; done; rm -rf "$dir") </dev/null >/dev/null 2>&1 &
    unset TEMPORAL_POSTGRES_URL
    if [ -n "$authorize" ]; then
      exec "$cache_dir/temporal-server" --root "$dir" --config . --env development --key-file "$LLMGW_TEMPORAL_KEY_FILE"
    fi
    exec "$cache_dir/temporal-server" --root "$dir" --config . --env development --allow-no-auth start
    ;;
  *)
    fail "usage: temporal-server.sh build [--authorize] | start --port P [--authorize] | config --port P --dir DIR [--authorize] (TEMPORAL_POSTGRES_URL in the environment)"
    ;;
esac
