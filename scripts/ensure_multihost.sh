#!/usr/bin/env bash
# Make sure what the multi-host test and bench (tests/e2e/test_multihost.py, bench/multihost.py) run as private
# servers is installed: Debian's PostgreSQL 15 server binaries (initdb, pg_ctl, pg_basebackup), pgBackRest
# (the backups and the point-in-time restore; deploy/README.md says why pgBackRest) and redis-server (which
# runs the Sentinels too, `redis-server CONF --sentinel`), and that the postgres OS user exists (PostgreSQL
# refuses to run as root). Installs with apt-get when root; otherwise says how and fails.
set -euo pipefail

PG_BIN=/usr/lib/postgresql/15/bin

missing=()
[[ -x "$PG_BIN/initdb" && -x "$PG_BIN/pg_basebackup" ]] || missing+=(postgresql-15)
command -v pgbackrest >/dev/null 2>&1 || missing+=(pgbackrest)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)

if ((${#missing[@]})); then
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "error: missing ${missing[*]} (the multi-host test runs private PostgreSQL, pgBackRest and Redis)." >&2
    echo "       Install them as root:  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo ">> installing ${missing[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q "${missing[@]}"
fi

if ! id -u postgres >/dev/null 2>&1; then
  echo "error: no postgres OS user (Debian's postgresql package makes it); the private servers run as it" >&2
  exit 1
fi
command -v runuser >/dev/null 2>&1 || { echo "error: runuser (util-linux) is missing" >&2; exit 1; }
echo "ok: $(pgbackrest version), $("$PG_BIN/postgres" --version), $(redis-server --version | cut -d' ' -f1-3)"
