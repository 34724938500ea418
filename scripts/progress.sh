# Sourced by the install scripts: runs a long step with a line of progress every 10 s, then how long it
# took, so that a first start that builds or downloads for minutes is never silent.
# The caller defines log() (its own prefix, to stderr).

# LLMGW_PROGRESS_EVERY_S shortens the period for the test of these lines (test/unit/temporal-cli.test.ts).
progress_every_s=${LLMGW_PROGRESS_EVERY_S:-10}

# with_progress WHAT SUMMARY COMMAND...: runs COMMAND with its output kept in a file. Every 10 s it logs
# "WHAT: N s so far; <SUMMARY's line>" (SUMMARY is a function given that file), then "WHAT took ...";
# on failure, the end of that output. Returns COMMAND's exit status.
with_progress() {
  local what=$1 summary=$2 output pid status=0 started=$SECONDS next=$progress_every_s
  shift 2
  output=$(mktemp)
  "$@" >"$output" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if ((SECONDS - started >= next)) && kill -0 "$pid" 2>/dev/null; then
      log "$what: $((SECONDS - started)) s so far; $("$summary" "$output")"
      next=$((next + progress_every_s))
    fi
  done
  wait "$pid" || status=$?
  if [ "$status" = 0 ]; then
    log "$what took $(duration $((SECONDS - started)))"
  else
    log "$what failed after $(duration $((SECONDS - started))); the end of its output:"
    tail -n 20 "$output" >&2
  fi
  rm -f "$output"
  return "$status"
}

duration() {
  if (($1 < 60)); then echo "$1 s"; else echo "$(($1 / 60)) min $(($1 % 60)) s"; fi
}

# What `go install -x` is doing, from its output: downloading modules, or compiling which package.
go_install_summary() {
  local modules packages current
  modules=$(grep -c '\.zip: 200 OK' "$1" || true)
  packages=$(grep -c '/compile -o ' "$1" || true)
  current=$(sed -n 's/.*\/compile -o .* -p \([^ ]*\) .*/\1/p' "$1" | tail -n 1)
  if [ "$packages" = 0 ]; then
    echo "downloading modules ($modules so far)"
  else
    echo "compiling: $packages packages so far, now ${current:-?} ($modules modules downloaded)"
  fi
}
