#!/bin/sh
# temporal-schema job (temporalio/admin-tools): create Temporal's databases on the shared Postgres
# and bring their schemas to the version this image ships. Every step is idempotent:
#   create-database  ignores "database already exists" (postgres plugin)
#   setup-schema     creates the schema_version tables if missing and leaves a newer version alone
#   update-schema    applies only the versioned changes not applied yet
# Connection settings come from SQL_PLUGIN, SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD.
set -eu

: "${SQL_HOST:?SQL_HOST is required}"
: "${SQL_USER:?SQL_USER is required}"
schema_root=${TEMPORAL_SCHEMA_ROOT:-/etc/temporal/schema/postgresql/v12}

migrate() {
  db=$1
  dir=$2
  echo "temporal-schema: database $db (schema $schema_root/$dir)"
  temporal-sql-tool --database "$db" create-database
  temporal-sql-tool --database "$db" setup-schema -v 0.0
  temporal-sql-tool --database "$db" update-schema -d "$schema_root/$dir/versioned"
}

migrate "${TEMPORAL_DB:-temporal}" temporal
migrate "${TEMPORAL_VISIBILITY_DB:-temporal_visibility}" visibility
echo "temporal-schema: done"
