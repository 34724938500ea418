#!/bin/sh
# Runs once, when the postgres service starts on an empty data volume (docker-entrypoint-initdb.d).
# Creates the two login roles and llmgw's database:
#   llmgw     owns the database llmgw (llmgw applies its own migrations at start-up)
#   temporal  may create databases: temporal-schema creates temporal and temporal_visibility as it,
#             so this role owns Temporal's databases
# Passwords come from LLMGW_DB_PASSWORD and TEMPORAL_DB_PASSWORD (see docker-compose.yml).
# No `set -e` here: the image may source this file instead of executing it; psql stops on the
# first error by itself (ON_ERROR_STOP) and a failed init leaves the container unhealthy.
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v llmgw_password="$LLMGW_DB_PASSWORD" \
  -v temporal_password="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE llmgw LOGIN PASSWORD :'llmgw_password';
CREATE DATABASE llmgw OWNER llmgw;
CREATE ROLE temporal LOGIN CREATEDB PASSWORD :'temporal_password';
SQL
