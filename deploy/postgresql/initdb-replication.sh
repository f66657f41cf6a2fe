#!/bin/sh
# Run once by the postgres image at its first start on db-1 (/docker-entrypoint-initdb.d): the replication role
# db-2's pg_basebackup and streaming use, allowed from the replica's address, and pgBackRest's stanza.
set -eu
psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" \
  -c "CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD '${REPLICATION_PASSWORD}'"
echo "host replication replicator ${DB2_ADDRESS}/32 scram-sha-256" >> "$PGDATA/pg_hba.conf"
