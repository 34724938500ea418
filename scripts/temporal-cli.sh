#!/usr/bin/env bash
# Finds or installs the Temporal CLI (it carries the dev server and the Web UI) and prints its path.
# Order: $TEMPORAL_CLI, `temporal` on PATH, the copy installed here before, `go install` (Go >= 1.25),
# the official release archive (machines with internet), else a message saying how to install it.
# The copy lives outside the clone (~/.cache/llmgw) so CI, fresh clones and later runs reuse it.
set -euo pipefail
version=1.5.1
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/temporal-v$version"
cached="$cache_dir/temporal"
log() { printf 'temporal-cli: %s\n' "$*" >&2; }
# shellcheck source=progress.sh
. "$(dirname "$0")/progress.sh"

if [ -n "${TEMPORAL_CLI:-}" ]; then
  [ -x "$TEMPORAL_CLI" ] || { log "TEMPORAL_CLI=$TEMPORAL_CLI is not an executable file"; exit 1; }
  echo "$TEMPORAL_CLI"; exit 0
fi
if command -v temporal >/dev/null 2>&1; then command -v temporal; exit 0; fi
if [ -x "$cached" ]; then echo "$cached"; exit 0; fi

mkdir -p "$cache_dir"
if command -v go >/dev/null 2>&1; then
  # v1.5.1 is the newest tag whose go.mod has no `replace` directive, so `go install` can build it.
  log "building Temporal CLI v$version with go install (once per machine, a few minutes)..."
  if with_progress "building the Temporal CLI" go_install_summary \
    env GOBIN="$cache_dir" GOFLAGS=-mod=mod go install -x "github.com/temporalio/cli/cmd/temporal@v$version"; then
    echo "$cached"; exit 0
  fi
  log "go install failed; trying the release archive"
fi
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) platform=linux_amd64 ;;
  Linux/aarch64) platform=linux_arm64 ;;
  Darwin/x86_64) platform=darwin_amd64 ;;
  Darwin/arm64) platform=darwin_arm64 ;;
  *) platform="" ;;
esac
if [ -n "$platform" ] && command -v curl >/dev/null 2>&1; then
  url="https://github.com/temporalio/cli/releases/download/v$version/temporal_cli_${version}_${platform}.tar.gz"
  log "downloading $url"
  if curl -fsSL --max-time 120 "$url" | tar -xz -C "$cache_dir" temporal 2>/dev/null && [ -x "$cached" ]; then
    echo "$cached"; exit 0
  fi
fi
log "could not install the Temporal CLI: install it (https://docs.temporal.io/cli#install) and put 'temporal' on PATH, or set TEMPORAL_CLI=/path/to/temporal, or install Go >= 1.25 and rerun"
exit 1
