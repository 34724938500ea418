#!/usr/bin/env bash
# A real Kubernetes control plane for the Kubernetes driver's tests and benchmark
# (test/support/kubernetes.ts starts it on loopback; kwok stands in for the kubelets).
#
#   kubernetes.sh build
#       builds kube-apiserver, kube-scheduler, kube-controller-manager (v1.34.4), etcd (3.6.4, the version
#       that Kubernetes release pins) and kwok (v0.8.0) with Go, once per machine, into
#       ~/.cache/llmgw/kubernetes-v1.34.4 (12 to 16 min on two busy cores; 1 GB of modules, 3.4 GB of Go
#       build cache, 343 MB of binaries), with kwok's Stage objects beside them; prints that folder.
#       A second run finds the folder and returns at once.
#   kubernetes.sh dir
#       prints that folder, built or not.
#
# Why not `go install k8s.io/kubernetes/cmd/kube-apiserver@v1.34.4`: k8s.io/kubernetes's go.mod replaces its
# staging modules (k8s.io/api, k8s.io/client-go, ...) with folders of its own repository, and go install
# refuses a module with replace directives. A module made here requires k8s.io/kubernetes and replaces each
# of those staging modules by its published v0.34.4, which is the same source.
set -euo pipefail
k8s_version=1.34.4
kwok_version=v0.8.0
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/kubernetes-v$k8s_version"
scripts_dir="$(cd "$(dirname "$0")" && pwd)"
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
log() { printf 'kubernetes: %s\n' "$*" >&2; }
fail() { log "$*"; exit 1; }
# shellcheck source=progress.sh
. "$scripts_dir/progress.sh"

# The stage file is written last: its presence marks a finished build.
built() { [ -f "$cache_dir/kwok-stages.yaml" ]; }

# The module that builds the control plane, in folder $1: go.mod requiring k8s.io/kubernetes with its
# staging modules replaced by their published versions, a file importing the three commands so that
# `go mod tidy` keeps what they need, and etcd's main (etcd has no installable command at a version that
# shares Kubernetes's dependencies; its server package's Main is what the etcd binary runs).
write_module() {
  local dir=$1 upstream_gomod
  upstream_gomod=$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@v$k8s_version" |
    sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -f "$upstream_gomod" ] || fail "could not download k8s.io/kubernetes@v$k8s_version's go.mod from the Go module proxy"
  {
    printf 'module llmgw.local/kubernetes-test-binaries\n\ngo 1.24.0\n\n'
    printf 'require k8s.io/kubernetes v%s\n\nreplace (\n' "$k8s_version"
    # Lines like "	k8s.io/api => ./staging/src/k8s.io/api": staging module version v0.<minor>.<patch>.
    sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$upstream_gomod" |
      while read -r module; do printf '\t%s => %s v0.%s\n' "$module" "$module" "${k8s_version#*.}"; done
    printf ')\n'
  } >"$dir/go.mod"
  cat >"$dir/commands.go" <<'EOF'
//go:build commands

// Keeps the commands' packages in go.mod when `go mod tidy` runs; never built.
package commands

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
EOF
  mkdir -p "$dir/etcd"
  cat >"$dir/etcd/main.go" <<'EOF'
// etcd's server, as its own binary runs it.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
}

# kwok (v0.5 and later) moves fake nodes and pods through their lives only by the Stage objects in its
# --config: a node made Ready and kept so with a lease, a pod bound to it made Ready, and a deleted pod
# removed. These are the ones kwokctl uses by default, from kwok's module.
write_stages() {
  local out=$1 stages first=1 file
  stages="$(go env GOMODCACHE)/sigs.k8s.io/kwok@$kwok_version/kustomize/stage"
  : >"$out"
  for file in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    [ -f "$stages/$file" ] || fail "kwok's module has no $file"
    [ "$first" = 1 ] || echo '---' >>"$out"
    first=0
    cat "$stages/$file" >>"$out"
  done
}

build() {
  if built; then
    echo "$cache_dir"
    return 0
  fi
  command -v go >/dev/null 2>&1 ||
    fail "building Kubernetes v$k8s_version needs Go >= 1.26 (kwok $kwok_version's go.mod asks for it; https://go.dev/doc/install); install it and rerun"
  command -v openssl >/dev/null 2>&1 || log "note: the tests also need openssl (for the API server's certificates)"
  mkdir -p "$cache_dir"
  local minor ldflags version_package=k8s.io/component-base/version
  # Globals, not locals: the EXIT trap runs after build() has returned.
  staging=$(mktemp -d "$cache_dir/.build-XXXXXX")
  source=$(mktemp -d "${TMPDIR:-/tmp}/llmgw-kubernetes-build-XXXXXX")
  trap 'rm -rf "$staging" "$source"' EXIT
  log "building Kubernetes v$k8s_version, etcd and kwok $kwok_version (once per machine: 12 to 16 min on two cores)"
  write_module "$source"
  # nice: the build takes every core it is given for a quarter of an hour, on machines shared with tests.
  (cd "$source" && with_progress "resolving modules" last_line_summary nice -n 10 go mod tidy) ||
    fail "go mod tidy failed (its output is above)"
  minor=${k8s_version#*.}
  minor=${minor%%.*}
  # Without these, the binaries say they are v0.0.0-master, and kube-apiserver's version skew checks and
  # client-go's user agent say so too.
  ldflags="-s -w -X $version_package.gitVersion=v$k8s_version -X $version_package.gitMajor=1"
  ldflags+=" -X $version_package.gitMinor=$minor -X $version_package.gitTreeState=clean"
  ldflags+=" -X $version_package.buildDate=1970-01-01T00:00:00Z -X k8s.io/client-go/pkg/version.gitVersion=v$k8s_version"
  (cd "$source" && with_progress "building the control plane" go_install_summary \
    env CGO_ENABLED=0 nice -n 10 go build -x -trimpath -ldflags="$ldflags" -o "$staging/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler ./etcd) || fail "the Go build failed (its output is above)"
  (cd "$source" && with_progress "building kwok" go_install_summary \
    env CGO_ENABLED=0 GOBIN="$staging" nice -n 10 go install -x -trimpath -ldflags='-s -w' \
    "sigs.k8s.io/kwok/cmd/kwok@$kwok_version") || fail "building kwok failed (its output is above)"
  write_stages "$staging/kwok-stages.yaml"
  local binary
  for binary in "${binaries[@]}"; do
    [ -x "$staging/$binary" ] || fail "the build made no $binary"
    mv "$staging/$binary" "$cache_dir/$binary"
  done
  mv "$staging/kwok-stages.yaml" "$cache_dir/kwok-stages.yaml"
  log "built into $cache_dir ($(du -sh "$cache_dir" | cut -f1))"
  echo "$cache_dir"
}

last_line_summary() { tail -n 1 "$1" | cut -c1-100; }

case "${1:-}" in
build) build ;;
dir) echo "$cache_dir" ;;
*) fail "usage: kubernetes.sh build | dir" ;;
esac
