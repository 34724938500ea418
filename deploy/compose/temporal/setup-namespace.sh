#!/bin/sh
# temporal-setup job (temporalio/admin-tools), after the server reports healthy:
#   1. create the namespace llmgw uses, unless it exists;
#   2. register the search attributes the reconciler upserts on every pass (llmgw's worker and API
#      register missing ones at start too, where the server allows it; here they exist before either);
#   3. wait until the frontend lists them, so the first upsert from a worker is accepted.
# Re-running is harmless: the server skips search attributes that already exist with that name
# (the CLI refuses only a name that exists with another type).
# The temporal CLI reads TEMPORAL_ADDRESS from the environment.
set -eu

namespace=${TEMPORAL_NAMESPACE:-default}
retention=${TEMPORAL_NAMESPACE_RETENTION:-72h}
attempts=${SETUP_ATTEMPTS:-30}
pause=${SETUP_PAUSE_S:-2}

retry() {
  what=$1
  shift
  n=1
  until "$@"; do
    if [ "$n" -ge "$attempts" ]; then
      echo "temporal-setup: $what failed after $attempts attempts" >&2
      exit 1
    fi
    echo "temporal-setup: $what not done yet (attempt $n/$attempts)"
    n=$((n + 1))
    sleep "$pause"
  done
}

ensure_namespace() {
  temporal operator namespace describe --namespace "$namespace" >/dev/null 2>&1 ||
    temporal operator namespace create --namespace "$namespace" --retention "$retention"
}

register_search_attributes() {
  temporal operator search-attribute create --namespace "$namespace" \
    --name LlmgwModel --type Keyword \
    --name LlmgwOwner --type Keyword \
    --name LlmgwOwnerPath --type Keyword \
    --name LlmgwReplicas --type Int \
    --name LlmgwStatus --type Keyword
}

search_attributes_listed() {
  listed=$(temporal operator search-attribute list --namespace "$namespace") || return 1
  for name in LlmgwModel LlmgwOwner LlmgwOwnerPath LlmgwReplicas LlmgwStatus; do
    echo "$listed" | grep -qw "$name" || return 1
  done
}

retry "namespace $namespace" ensure_namespace
retry "search attributes" register_search_attributes
retry "search attributes listed" search_attributes_listed
echo "temporal-setup: namespace $namespace ready with llmgw's search attributes"
