#!/usr/bin/env bash
# Start the local PostgreSQL and Redis the tests use, if they are installed but stopped, and wait
# (bounded) until both answer. Exits non-zero naming whatever is still unreachable.
#
#   scripts/start_services.sh              # as root on a dev or CI machine
#   SERVICE_WAIT_SECONDS=120 scripts/start_services.sh
#
# Only local servers on 127.0.0.1 are managed; to test against others, set DATABASE_URL / REDIS_URL
# and skip this script (scripts/check_services.py still checks them).
set -euo pipefail

PG_HOST=127.0.0.1
PG_PORT=5432
REDIS_HOST=127.0.0.1
REDIS_PORT=6379
WAIT_SECONDS="${SERVICE_WAIT_SECONDS:-60}"

is_root() { [[ "$(id -u)" -eq 0 ]]; }

tcp_open() { # host port
  timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
}

pg_up() {
  if command -v pg_isready >/dev/null 2>&1; then
    pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2
  else
    tcp_open "$PG_HOST" "$PG_PORT"
  fi
}

redis_up() {
  if command -v redis-cli >/dev/null 2>&1; then
    [[ "$(timeout 3 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null)" == "PONG" ]]
  else
    # shellcheck disable=SC2016 # the inner script expands its own arguments
    timeout 3 bash -c '
      exec 3<>"/dev/tcp/$0/$1" || exit 1
      printf "PING\r\n" >&3
      IFS= read -r reply <&3
      [[ "$reply" == "+PONG"* ]]' "$REDIS_HOST" "$REDIS_PORT" 2>/dev/null
  fi
}

wait_for() { # name check-function
  local name="$1" check="$2" waited=0
  until "$check"; do
    if ((waited >= WAIT_SECONDS)); then
      echo "error: $name did not answer within ${WAIT_SECONDS}s" >&2
      return 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  echo "ok: $name is up"
}

start_postgres() {
  if pg_up; then
    echo "ok: PostgreSQL already answering on $PG_HOST:$PG_PORT"
    return 0
  fi
  if ! command -v pg_ctlcluster >/dev/null 2>&1 || [[ -z "$(ls -A /etc/postgresql 2>/dev/null)" ]]; then
    echo "error: PostgreSQL is not answering on $PG_HOST:$PG_PORT and is not installed here" >&2
    echo "       (apt-get install postgresql, or set DATABASE_URL to a reachable server)" >&2
    return 1
  fi
  local version
  # shellcheck disable=SC2012 # version directories are plain numbers
  version="$(ls /etc/postgresql | sort -V | tail -n 1)"
  if ! is_root; then
    echo "error: PostgreSQL $version is stopped; start it as root:" >&2
    echo "       sudo pg_ctlcluster --skip-systemctl-redirect $version main start" >&2
    return 1
  fi
  echo ">> starting PostgreSQL $version"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true # 'already running' is fine
  wait_for "PostgreSQL on $PG_HOST:$PG_PORT" pg_up
}

start_redis() {
  if redis_up; then
    echo "ok: Redis already answering on $REDIS_HOST:$REDIS_PORT"
    return 0
  fi
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "error: Redis is not answering on $REDIS_HOST:$REDIS_PORT and redis-server is not installed here" >&2
    echo "       (apt-get install redis-server, or set REDIS_URL to a reachable server)" >&2
    return 1
  fi
  if ! is_root; then
    echo "error: Redis is stopped; start it as root (see this script), or run your own:" >&2
    echo "       redis-server --daemonize yes --bind 127.0.0.1 --port $REDIS_PORT --save ''" >&2
    return 1
  fi
  echo ">> starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_for "Redis on $REDIS_HOST:$REDIS_PORT" redis_up
}

status=0
start_postgres || status=1
start_redis || status=1
exit "$status"
