#!/bin/sh
# prometheus (prom/prometheus, on busybox): writes the metrics token from the environment to the file
# the llmgw-api scrape job reads (credentials_file, on a tmpfs), then runs Prometheus without it in its
# environment. A compose secret made from the environment would do this, but Compose v1 (Debian's
# docker-compose) has none, and this file must run on both.
set -eu
: "${LLMGW_METRICS_TOKEN:?set LLMGW_METRICS_TOKEN, the token llmgw-api stores as the metrics token}"
umask 077
printf '%s' "$LLMGW_METRICS_TOKEN" > /run/secrets/metrics-token
unset LLMGW_METRICS_TOKEN
exec /bin/prometheus "$@"
