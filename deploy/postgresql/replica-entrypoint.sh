#!/bin/sh
# The replica's first start (deploy/compose.hosts.yaml, postgres-replica): an empty data directory is filled
# from the primary with pg_basebackup -R (standby.signal and primary_conninfo written) and a replication
# slot made on the primary; then, and on every later start, PostgreSQL runs as a hot standby streaming WAL.
set -eu
PGDATA="${PGDATA:-/var/lib/postgresql/data}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  install -d -o postgres -g postgres -m 0700 "$PGDATA"
  echo "${DB1_ADDRESS}:5432:replication:replicator:${REPLICATION_PASSWORD}" > /var/lib/postgresql/.pgpass
  chown postgres:postgres /var/lib/postgresql/.pgpass && chmod 0600 /var/lib/postgresql/.pgpass
  gosu postgres pg_basebackup -h "$DB1_ADDRESS" -U replicator -D "$PGDATA" -R -X stream -c fast \
    -C -S hall_replica
fi
exec gosu postgres postgres -c hot_standby=on -c archive_mode=off
