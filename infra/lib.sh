# shellcheck shell=bash
# Kultiva local infrastructure helpers; sourced by infra/run and infra/test.
# ensure_postgres DB resolves DATABASE_URL in this order:
#   a) DATABASE_URL from the environment, used as is (DB created if missing);
#   b) a server on 127.0.0.1:${KULTIVA_DEFAULT_PG_PORT:-5432}: login as postgres
#      (trust auth), else as root create role kultiva/kultiva via the socket;
#   c) a private instance in .local/pg (port 25432+), installed via apt if needed.
# ensure_redis does the same for REDIS_URL: env, 127.0.0.1:${KULTIVA_DEFAULT_REDIS_PORT:-6379},
# then a private redis-server in .local/redis (port 26379+).
# ensure_redis_cluster exports REDIS_CLUSTER_URL (redis+cluster://…): the environment's, else a
# private 3-node Redis Cluster in .local/redis-cluster (ports 27001-27003), for the cluster step.
# ensure_second_postgres DB exports DATABASE_URL_2: the environment's, else a
# second private cluster in .local/pg2 (port 25532+), for the two-server tests.
# ensure_citus DB exports CITUS_DATABASE_URL (a Citus coordinator) and CITUS_WORKERS: the
# environment's, else a private coordinator + 2 workers in .local/citus (ports 25632+), Citus
# built from ../shared/citus when missing; returns 3 (one SKIPPED line) when neither works.
# ensure_mosquitto exports MQTT_URL: the environment's, else a broker answering on
# 127.0.0.1:${KULTIVA_DEFAULT_MQTT_PORT:-1883}, else a private Mosquitto in .local/mosquitto
# (port 21883+, persistence on); Debian's `mosquitto` is installed when missing.
# stop_started_services stops only private instances this shell started.
# Messages go to stderr as "[infra] ...". Functions return non-zero on failure.

# No `set -euo pipefail` here on purpose: this file is sourced, and flipping
# errexit in an interactive caller would close its terminal on the first
# failing command. The scripts that source it set the options themselves;
# every function below checks its own errors and works under -e and -u.

_KULTIVA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)

# Per-shell bookkeeping (deliberately NOT exported: a child script must never
# believe it started the parent's instances).
_KULTIVA_PG_STARTED=0
_KULTIVA_PG2_STARTED=0
_KULTIVA_CITUS_STARTED=""
_KULTIVA_REDIS_STARTED=0
_KULTIVA_REDIS_CLUSTER_STARTED=0
_KULTIVA_MQTT_STARTED=0
_KULTIVA_APT_UPDATED=0
_KV_PSQL=psql
_KV_PG_ISREADY=pg_isready
_KV_LOCKFD=""

_kv_log() { printf '[infra] %s\n' "$*" >&2; }
_kv_die() { _kv_log "ERROR: $*"; return 1; }

kultiva_root() { printf '%s\n' "$_KULTIVA_ROOT"; }

_kv_is_root() { [[ $(id -u) -eq 0 ]]; }

# apt-get install, running `apt-get update` at most once per shell.
_kv_apt_install() {
  if ! _kv_is_root; then
    _kv_die "need to install $* but not root; install it yourself or set the URL variables"
    return 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    _kv_die "need to install $* but apt-get is not available"
    return 1
  fi
  if [[ $_KULTIVA_APT_UPDATED -eq 0 ]]; then
    _kv_log "apt-get update"
    if ! DEBIAN_FRONTEND=noninteractive apt-get update >&2; then
      _kv_die "apt-get update failed"
      return 1
    fi
    _KULTIVA_APT_UPDATED=1
  fi
  _kv_log "apt-get install $*"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >&2; then
    _kv_die "apt-get install $* failed"
    return 1
  fi
}

# True when a TCP socket holds local port PORT in any state. Not only listeners: a client
# connection's TIME_WAIT on the port (60 s after it closed) also makes a server's bind fail
# with "Address already in use", even with SO_REUSEADDR. The /dev/tcp probe covers machines
# without ss.
_kv_port_in_use() {
  local port=$1
  if command -v ss >/dev/null 2>&1 &&
    ss -Htan "sport = :$port" 2>/dev/null | grep -q .; then
    return 0
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    return 0
  fi
  return 1
}

# True when pid $1 exists and is not a zombie (in containers whose PID 1 is
# slow to reap, a crashed daemon lingers as a zombie that `kill -0` accepts).
_kv_pid_live() {
  local pid=$1 stat
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 0
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

# Prints the first free TCP port at or above $1.
_kv_free_port() {
  local port=$1 last=$(($1 + 200))
  while [[ $port -le $last ]]; do
    if ! _kv_port_in_use "$port"; then
      printf '%s\n' "$port"
      return 0
    fi
    port=$((port + 1))
  done
  _kv_die "no free TCP port in $1..$last"
}

# ---------------------------------------------------------------- PostgreSQL

# psql that never prompts for a password and ignores ~/.psqlrc.
_kv_psql() {
  local url=$1
  shift
  PGCONNECT_TIMEOUT=${PGCONNECT_TIMEOUT:-5} PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" "$_KV_PSQL" -X -w -q -v ON_ERROR_STOP=1 -d "$url" "$@"
}

# Directory holding initdb/pg_ctl: the requested major version if given and
# installed, else the highest /usr/lib/postgresql/*/bin, else whatever is on PATH.
_kv_pg_bindir() {
  local want=${1:-} d best="" found
  if [[ -n $want && -x /usr/lib/postgresql/$want/bin/initdb ]]; then
    printf '%s\n' "/usr/lib/postgresql/$want/bin"
    return 0
  fi
  best=$(for d in /usr/lib/postgresql/*/bin; do
    if [[ -x $d/initdb && -x $d/pg_ctl ]]; then printf '%s\n' "$d"; fi
  done | sort -V | tail -n 1)
  if [[ -z $best ]] && found=$(command -v initdb 2>/dev/null); then
    d=$(dirname "$(readlink -f "$found")")
    if [[ -x $d/pg_ctl ]]; then best=$d; fi
  fi
  [[ -n $best ]] || return 1
  printf '%s\n' "$best"
}

# Makes psql and pg_isready available (client package, or a server bindir).
_kv_need_pg_client() {
  local bindir
  if command -v psql >/dev/null 2>&1 && command -v pg_isready >/dev/null 2>&1; then
    _KV_PSQL=psql _KV_PG_ISREADY=pg_isready
    return 0
  fi
  if bindir=$(_kv_pg_bindir) && [[ -x $bindir/psql && -x $bindir/pg_isready ]]; then
    _KV_PSQL=$bindir/psql _KV_PG_ISREADY=$bindir/pg_isready
    return 0
  fi
  _kv_apt_install postgresql-client || return 1
  _KV_PSQL=psql _KV_PG_ISREADY=pg_isready
}

# Only plain identifiers: they are spliced into SQL and URLs.
_kv_valid_dbname() { [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; }

# Creates database $2 through admin connection $1 unless it exists.
_kv_pg_create_db() {
  local admin=$1 db=$2 exists err
  if ! exists=$(_kv_psql "$admin" -tA -c "select 1 from pg_database where datname = '$db'" 2>&1); then
    _kv_log "cannot query databases: $exists"
    return 1
  fi
  [[ $exists == 1 ]] && return 0
  _kv_log "creating database $db"
  if ! err=$(_kv_psql "$admin" -c "create database \"$db\"" 2>&1 >/dev/null); then
    # A concurrent run may have created it in the meantime.
    exists=$(_kv_psql "$admin" -tA -c "select 1 from pg_database where datname = '$db'" 2>/dev/null) || true
    if [[ $exists != 1 ]]; then
      _kv_log "cannot create database $db: $(printf '%s' "$err" | tr -s '\n\t ' '   ')"
      return 1
    fi
  fi
}

# (a) DATABASE_URL given by the environment.
_kv_pg_from_env() {
  local err base db query
  if err=$(_kv_psql "$DATABASE_URL" -c 'select 1' 2>&1 >/dev/null); then
    return 0
  fi
  # Best effort: the server answers but the database is missing -> create it
  # through the `postgres` database of the same server, same credentials.
  if [[ $err == *"database \""*"\" does not exist"* &&
    $DATABASE_URL =~ ^(postgres(ql)?://[^/?]*)(/([^?]*))?(\?.*)?$ ]]; then
    base=${BASH_REMATCH[1]} db=${BASH_REMATCH[4]} query=${BASH_REMATCH[5]}
    if _kv_valid_dbname "$db" && _kv_pg_create_db "$base/postgres$query" "$db" &&
      _kv_psql "$DATABASE_URL" -c 'select 1' >/dev/null 2>&1; then
      return 0
    fi
  fi
  err=$(printf '%s' "$err" | tr -s '\n\t ' '   ')
  _kv_die "DATABASE_URL is set but does not answer: $err"
}

# (b) A server on the default port; prints the base URL (no database) on success.
_kv_pg_default_port() {
  local port=$1 db=$2 base
  "$_KV_PG_ISREADY" -q -h 127.0.0.1 -p "$port" -t 3 >/dev/null 2>&1 || return 1
  base="postgres://postgres@127.0.0.1:$port"
  if ! _kv_psql "$base/postgres" -c 'select 1' >/dev/null 2>&1; then
    base=""
    if _kv_is_root && command -v runuser >/dev/null 2>&1 && id postgres >/dev/null 2>&1; then
      _kv_log "postgres login on 127.0.0.1:$port refused; ensuring role kultiva via the local socket"
      # Idempotent: creates the role, or resets its flags/password.
      if (cd / && runuser -u postgres -- "$_KV_PSQL" -X -q -p "$port" -v ON_ERROR_STOP=1 -c \
        "DO \$\$ BEGIN
           IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'kultiva') THEN
             CREATE ROLE kultiva LOGIN CREATEDB PASSWORD 'kultiva';
           ELSE
             ALTER ROLE kultiva LOGIN CREATEDB PASSWORD 'kultiva';
           END IF;
         END \$\$;") >/dev/null 2>&1 &&
        _kv_psql "postgres://kultiva:kultiva@127.0.0.1:$port/postgres" -c 'select 1' >/dev/null 2>&1; then
        base="postgres://kultiva:kultiva@127.0.0.1:$port"
      fi
    fi
    [[ -n $base ]] || return 1
  fi
  _kv_pg_create_db "$base/postgres" "$db" || return 1
  printf '%s\n' "$base"
}

# Runs a command as the user owning the private cluster (postgres when root:
# initdb and pg_ctl refuse to run as root).
_kv_pg_as() {
  if _kv_is_root; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# Root only: the postgres OS user must exist and reach $1 (adds o+x where missing).
_kv_pg_prepare_user() {
  local target=$1 path="" part
  if ! id postgres >/dev/null 2>&1; then
    _kv_log "creating system user postgres"
    useradd --system --user-group --no-create-home --shell /usr/sbin/nologin postgres || return 1
  fi
  local -a parts
  IFS=/ read -r -a parts <<<"${target#/}"
  for part in "${parts[@]}"; do
    path+="/$part"
    [[ -d $path ]] || break
    if ! runuser -u postgres -- test -x "$path" 2>/dev/null; then
      _kv_log "making $path traversable (o+x) for the postgres user"
      chmod o+x "$path" || return 1
    fi
  done
}

# Runs "$@" holding an exclusive lock on file $1, so that concurrent
# infra/run + infra/test do not both initdb/start. The lock fd is in
# _KV_LOCKFD; daemons must be started with it closed ({_KV_LOCKFD}>&-),
# otherwise they would inherit the lock and hold it forever.
_kv_with_lock() {
  local lockfile=$1 rc=0
  shift
  exec {_KV_LOCKFD}>"$lockfile" || return 1
  if ! flock -w 300 "$_KV_LOCKFD"; then
    exec {_KV_LOCKFD}>&-
    _kv_die "timed out waiting for $lockfile"
    return 1
  fi
  "$@" || rc=$?
  exec {_KV_LOCKFD}>&-
  return "$rc"
}

# (c) The private instance in .local/pg (or .local/$1, first port $2: the second
# cluster of the two-server tests); prints "PORT STARTED" (STARTED=1 when this
# call started it, 0 when it reused a running one).
# $3: extra server options (`-c name=value …`; the Citus nodes' shared_preload_libraries).
_kv_pg_private() {
  local pgdir=$_KULTIVA_ROOT/.local/${1:-pg} first_port=${2:-25432}
  mkdir -p "$pgdir" || return 1
  _kv_with_lock "$pgdir/.lock" _kv_pg_private_locked "$pgdir" "$pgdir/data" \
    "$pgdir/postgres.log" "$pgdir/socket" "$first_port" "${3:-}"
}

_kv_pg_private_locked() {
  local pgdir=$1 data=$2 log=$3 sock=$4 first_port=$5 extra=${6:-} bindir ver="" port pid lockf

  if [[ -f $data/PG_VERSION ]]; then ver=$(<"$data/PG_VERSION"); fi
  if ! bindir=$(_kv_pg_bindir "$ver"); then
    _kv_log "no initdb found; installing postgresql"
    _kv_apt_install postgresql || return 1
    bindir=$(_kv_pg_bindir "$ver") || { _kv_die "initdb still not found after installing postgresql"; return 1; }
  fi
  if [[ -n $ver && $bindir != "/usr/lib/postgresql/$ver/bin" && ! -x /usr/lib/postgresql/$ver/bin/initdb ]]; then
    _kv_log "warning: $data was created by PostgreSQL $ver, using binaries from $bindir"
  fi
  _kv_need_pg_client || return 1

  # Unix socket paths are limited to ~107 bytes and pg_ctl -o goes through a
  # shell: use a short private /tmp directory when the repo path is unsuitable.
  if [[ ${#sock} -gt 80 || ! $sock =~ ^[A-Za-z0-9/._-]+$ ]]; then
    sock=/tmp/kultiva-pg-$(printf '%s' "$pgdir" | cksum | cut -d' ' -f1)
  fi

  if _kv_is_root; then
    _kv_pg_prepare_user "$pgdir" || return 1
  fi
  mkdir -p "$sock" || return 1
  chmod 700 "$sock" || return 1
  if _kv_is_root; then
    chown postgres: "$pgdir" "$sock" || return 1
  fi

  # A postmaster.pid whose process is gone (crash, kill -9, reboot) would
  # make the next start fail; a live one means "reuse".
  if [[ -f $data/postmaster.pid ]]; then
    pid=$(head -n 1 "$data/postmaster.pid")
    if ! _kv_pid_live "$pid"; then
      _kv_log "removing stale $data/postmaster.pid (pid ${pid:-?} is gone)"
      rm -f "$data/postmaster.pid"
      # Same for its socket lock files (postgres only clears them itself
      # when the recorded pid does not exist at all, not for zombies).
      for lockf in "$sock"/.s.PGSQL.*.lock; do
        [[ -f $lockf ]] || continue
        pid=$(head -n 1 "$lockf")
        if ! _kv_pid_live "$pid"; then rm -f "$lockf" "${lockf%.lock}"; fi
      done
    fi
  fi

  # Already running (from an earlier call or another shell)? Reuse it.
  if [[ -f $data/postmaster.pid ]] && _kv_pg_as "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    port=$(sed -n 4p "$data/postmaster.pid")
    if [[ $port =~ ^[0-9]+$ ]] && "$_KV_PG_ISREADY" -q -h 127.0.0.1 -p "$port" -t 5 >/dev/null 2>&1; then
      printf '%s\n' "$port" >"$pgdir/port"
      _kv_log "reusing private PostgreSQL on 127.0.0.1:$port ($data)"
      printf '%s 0\n' "$port"
      return 0
    fi
    _kv_die "private PostgreSQL in $data runs but does not answer on 127.0.0.1:${port:-?}; see $log"
    return 1
  fi

  if [[ ! -f $data/PG_VERSION ]]; then
    rm -rf "$data"
    _kv_log "initdb $data ($bindir)"
    if ! _kv_pg_as "$bindir/initdb" -D "$data" -A trust -U postgres --encoding=UTF8 \
      --locale=C.UTF-8 >"$pgdir/initdb.log" 2>&1; then
      _kv_log "locale C.UTF-8 unavailable; retrying initdb with --no-locale"
      rm -rf "$data"
      if ! _kv_pg_as "$bindir/initdb" -D "$data" -A trust -U postgres --encoding=UTF8 \
        --no-locale >"$pgdir/initdb.log" 2>&1; then
        tail -n 20 "$pgdir/initdb.log" >&2
        _kv_die "initdb failed (log: $pgdir/initdb.log)"
        return 1
      fi
    fi
  fi

  # Keep the previous port when it is still free, so URLs stay stable.
  port=""
  if [[ -f $pgdir/port ]]; then port=$(<"$pgdir/port"); fi
  if ! [[ $port =~ ^[0-9]+$ ]] || _kv_port_in_use "$port"; then
    port=$(_kv_free_port "$first_port") || return 1
  fi

  _kv_log "starting private PostgreSQL on 127.0.0.1:$port (log: $log)"
  if _kv_is_root && [[ ! -e $log ]]; then
    touch "$log" && chown postgres: "$log"
  fi
  # fsync=off: throwaway local dev/test data, speed matters more than crash safety.
  # max_locks_per_transaction/max_connections: room for many parallel test databases/schemas.
  if ! _kv_pg_as "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 60 \
    -o "-p $port -k $sock -c listen_addresses=127.0.0.1 -c max_connections=200 -c max_locks_per_transaction=512 -c fsync=off $extra" \
    start >/dev/null 2>&1 {_KV_LOCKFD}>&-; then
    tail -n 20 "$log" >&2
    _kv_die "private PostgreSQL failed to start (log: $log)"
    return 1
  fi
  printf '%s\n' "$port" >"$pgdir/port"
  # State file: which shell started it; stop_started_services checks it.
  printf '%s\n' "$$" >"$pgdir/started-by"
  printf '%s 1\n' "$port"
}

# ensure_postgres DBNAME: exports DATABASE_URL pointing at an existing DBNAME.
ensure_postgres() {
  local db=${1:-} port base pgport out started
  if [[ -z $db ]] || ! _kv_valid_dbname "$db"; then
    _kv_die "usage: ensure_postgres DBNAME (letters, digits, underscore)"
    return 1
  fi

  if [[ -n ${DATABASE_URL:-} ]]; then
    _kv_need_pg_client || return 1
    _kv_pg_from_env || return 1
    export DATABASE_URL
    _kv_log "PostgreSQL: using DATABASE_URL from the environment"
    return 0
  fi

  # (b) the cheap listener probe first, so no client is installed for nothing.
  pgport=${KULTIVA_DEFAULT_PG_PORT:-5432}
  if _kv_port_in_use "$pgport"; then
    _kv_need_pg_client || return 1
    if base=$(_kv_pg_default_port "$pgport" "$db"); then
      export DATABASE_URL="$base/$db"
      _kv_log "PostgreSQL: using the server on 127.0.0.1:$pgport (database $db)"
      return 0
    fi
    _kv_log "server on 127.0.0.1:$pgport not usable; falling back to a private instance"
  fi

  # (c) runs in a subshell ($(...)); $$ there is still this shell's pid.
  if ! out=$(_kv_pg_private); then
    _kv_die "could not provide PostgreSQL (set DATABASE_URL to use an existing server)"
    return 1
  fi
  read -r port started <<<"$out"
  if [[ $started == 1 ]]; then _KULTIVA_PG_STARTED=1; fi
  _kv_need_pg_client || return 1
  _kv_pg_create_db "postgres://postgres@127.0.0.1:$port/postgres" "$db" || return 1
  export DATABASE_URL="postgres://postgres@127.0.0.1:$port/$db"
  _kv_log "PostgreSQL: private instance on 127.0.0.1:$port (database $db)"
}

# ensure_second_postgres DBNAME: exports DATABASE_URL_2, a database on a second
# PostgreSQL server (the two-server tests: moving a garden between placements).
# DATABASE_URL_2 from the environment is used as is; otherwise a private cluster
# in .local/pg2 (port 25532+) is started (initdb on first use), always a server
# of its own, never the one of DATABASE_URL. stop_started_services stops it.
ensure_second_postgres() {
  local db=${1:-} out port started
  if [[ -z $db ]] || ! _kv_valid_dbname "$db"; then
    _kv_die "usage: ensure_second_postgres DBNAME (letters, digits, underscore)"
    return 1
  fi
  _kv_need_pg_client || return 1
  if [[ -n ${DATABASE_URL_2:-} ]]; then
    if ! _kv_psql "$DATABASE_URL_2" -c 'select 1' >/dev/null 2>&1; then
      _kv_die "DATABASE_URL_2 is set but does not answer"
      return 1
    fi
    export DATABASE_URL_2
    _kv_log "second PostgreSQL: using DATABASE_URL_2 from the environment"
    return 0
  fi
  if ! out=$(_kv_pg_private pg2 25532); then
    _kv_die "could not start the second PostgreSQL (set DATABASE_URL_2 to use an existing server)"
    return 1
  fi
  read -r port started <<<"$out"
  if [[ $started == 1 ]]; then _KULTIVA_PG2_STARTED=1; fi
  _kv_pg_create_db "postgres://postgres@127.0.0.1:$port/postgres" "$db" || return 1
  export DATABASE_URL_2="postgres://postgres@127.0.0.1:$port/$db"
  _kv_log "second PostgreSQL: private instance on 127.0.0.1:$port (database $db)"
}

# ---------------------------------------------------------------- Citus

# True when the Citus extension is installed for the PostgreSQL whose binaries are in $1.
_kv_citus_installed() {
  local libdir
  libdir=$("$1/pg_config" --pkglibdir 2>/dev/null) ||
    libdir=$(pg_config --pkglibdir 2>/dev/null) || return 1
  [[ -f $libdir/citus.so ]]
}

# ensure_citus DBNAME: a Citus cluster for the Citus stage of infra/test (README "Citus").
# CITUS_DATABASE_URL from the environment is used as is (a coordinator whose database has the
# extension and its workers added). Otherwise three private clusters on loopback under
# .local/citus/{coordinator,worker1,worker2} (ports from 25632; wal_level=logical for
# citus_schema_move), each with the extension in DBNAME, which starts empty every call (all
# three dropped and made again), the workers added to the coordinator. When Citus is not
# installed it is built from ../shared/citus (build script and source, root only); when that is
# not possible either, prints one SKIPPED line and returns 3.
# Exports CITUS_DATABASE_URL (the coordinator) and CITUS_WORKERS ("host:port host:port").
ensure_citus() {
  local db=${1:-} bindir src="" node out port started admin ports=() i
  if [[ -z $db ]] || ! _kv_valid_dbname "$db"; then
    _kv_die "usage: ensure_citus DBNAME (letters, digits, underscore)"
    return 1
  fi
  _kv_need_pg_client || return 1
  if [[ -n ${CITUS_DATABASE_URL:-} ]]; then
    if ! _kv_psql "$CITUS_DATABASE_URL" -tA -c "select extversion from pg_extension where extname = 'citus'" | grep -q .; then
      _kv_die "CITUS_DATABASE_URL is set but has no citus extension"
      return 1
    fi
    CITUS_WORKERS=$(_kv_psql "$CITUS_DATABASE_URL" -tA -c \
      "select string_agg(nodename || ':' || nodeport, ' ' order by nodeport) from pg_dist_node where groupid <> 0")
    export CITUS_DATABASE_URL CITUS_WORKERS
    _kv_log "Citus: using CITUS_DATABASE_URL from the environment (workers: $CITUS_WORKERS)"
    return 0
  fi
  if ! bindir=$(_kv_pg_bindir); then
    _kv_log "SKIPPED Citus: no PostgreSQL server binaries (set CITUS_DATABASE_URL)"
    return 3
  fi
  if ! _kv_citus_installed "$bindir"; then
    for i in "${KULTIVA_CITUS_SRC:-}" "$_KULTIVA_ROOT/../shared/citus" /work/shared/citus; do
      if [[ -n $i && -x $i/build ]]; then src=$i; break; fi
    done
    if [[ -z $src ]] || ! _kv_is_root; then
      _kv_log "SKIPPED Citus: not installed for $bindir and not buildable here (no ../shared/citus/build, or not root); set CITUS_DATABASE_URL"
      return 3
    fi
    mkdir -p "$_KULTIVA_ROOT/.local/citus" || return 1
    _kv_log "building Citus from $src (a few minutes; log: .local/citus/build.log)"
    if ! "$src/build" >"$_KULTIVA_ROOT/.local/citus/build.log" 2>&1 || ! _kv_citus_installed "$bindir"; then
      tail -n 20 "$_KULTIVA_ROOT/.local/citus/build.log" >&2
      _kv_log "SKIPPED Citus: the build from $src failed (log: .local/citus/build.log)"
      return 3
    fi
  fi
  # Workers first (the coordinator's metadata names them); ports kept between runs.
  for node in worker1 worker2 coordinator; do
    if ! out=$(_kv_pg_private "citus/$node" 25632 \
      "-c shared_preload_libraries=citus -c wal_level=logical -c max_wal_senders=20 -c max_replication_slots=20 -c citus.max_background_task_executors_per_node=2"); then
      _kv_die "could not start the Citus node $node (log: .local/citus/$node/postgres.log)"
      return 1
    fi
    read -r port started <<<"$out"
    if [[ $started == 1 ]]; then _KULTIVA_CITUS_STARTED+=" $node"; fi
    ports+=("$port")
    admin="postgres://postgres@127.0.0.1:$port/postgres"
    # Every run starts empty: the workers' copies of the last run's gardens go with the
    # coordinator's metadata. (citus_schema_move leaves replication slots only while it runs.)
    _kv_psql "$admin" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >&2 || return 1
    _kv_psql "$admin" -c "CREATE DATABASE \"$db\"" >&2 || return 1
    _kv_psql "postgres://postgres@127.0.0.1:$port/$db" -c "CREATE EXTENSION citus" >&2 || return 1
  done
  CITUS_DATABASE_URL="postgres://postgres@127.0.0.1:${ports[2]}/$db"
  if ! _kv_psql "$CITUS_DATABASE_URL" -c "SELECT citus_set_coordinator_host('127.0.0.1', ${ports[2]})" \
    -c "SELECT citus_add_node('127.0.0.1', ${ports[0]})" \
    -c "SELECT citus_add_node('127.0.0.1', ${ports[1]})" >/dev/null; then
    _kv_die "could not add the Citus workers to the coordinator"
    return 1
  fi
  CITUS_WORKERS="127.0.0.1:${ports[0]} 127.0.0.1:${ports[1]}"
  export CITUS_DATABASE_URL CITUS_WORKERS
  _kv_log "Citus: coordinator 127.0.0.1:${ports[2]}, workers $CITUS_WORKERS (database $db)"
}

# ---------------------------------------------------------------- Redis

_kv_redis_ping() { [[ $(redis-cli "$@" ping 2>/dev/null) == PONG ]]; }

# True when pid $1 is a live redis-server process.
_kv_redis_pid_alive() {
  local pid=$1
  _kv_pid_live "$pid" &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q redis-server
}

# (c) The private redis-server in .local/redis; prints "PORT STARTED".
_kv_redis_private() {
  local rdir=$_KULTIVA_ROOT/.local/redis
  mkdir -p "$rdir" || return 1
  _kv_with_lock "$rdir/.lock" _kv_redis_private_locked "$rdir"
}

_kv_redis_private_locked() {
  local rdir=$1 pid="" port="" i
  local pidfile=$rdir/redis.pid log=$rdir/redis.log

  if [[ -f $pidfile ]]; then pid=$(<"$pidfile"); fi
  if [[ -f $rdir/port ]]; then port=$(<"$rdir/port"); fi
  if _kv_redis_pid_alive "$pid"; then
    if [[ $port =~ ^[0-9]+$ ]] && _kv_redis_ping -h 127.0.0.1 -p "$port"; then
      _kv_log "reusing private Redis on 127.0.0.1:$port (pid $pid)"
      printf '%s 0\n' "$port"
      return 0
    fi
    _kv_die "private Redis (pid $pid) runs but does not answer on 127.0.0.1:${port:-?}; see $log"
    return 1
  fi
  rm -f "$pidfile"

  if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    _kv_log "redis-server not found; installing it"
    _kv_apt_install redis-server redis-tools || return 1
  fi

  if ! [[ $port =~ ^[0-9]+$ ]] || _kv_port_in_use "$port"; then
    port=$(_kv_free_port 26379) || return 1
  fi
  _kv_log "starting private Redis on 127.0.0.1:$port (log: $log)"
  # No persistence: cache/rate-limit data only, starts empty every time.
  if ! redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize yes --pidfile "$pidfile" --dir "$rdir" --logfile "$log" >/dev/null 2>&1 {_KV_LOCKFD}>&-; then
    _kv_die "redis-server failed to start (log: $log)"
    return 1
  fi
  # --daemonize returns before the listener is up.
  for ((i = 0; i < 100; i++)); do
    if _kv_redis_ping -h 127.0.0.1 -p "$port"; then
      printf '%s\n' "$port" >"$rdir/port"
      printf '%s\n' "$$" >"$rdir/started-by"
      printf '%s 1\n' "$port"
      return 0
    fi
    sleep 0.1
  done
  tail -n 20 "$log" >&2 2>/dev/null || true
  _kv_die "private Redis did not answer on 127.0.0.1:$port (log: $log)"
}

# ensure_redis: exports REDIS_URL pointing at a Redis that answers PING.
ensure_redis() {
  local port rport out started
  if ! command -v redis-cli >/dev/null 2>&1; then
    _kv_apt_install redis-tools || return 1
  fi

  if [[ -n ${REDIS_URL:-} ]]; then
    if ! _kv_redis_ping -u "$REDIS_URL"; then
      _kv_die "REDIS_URL is set but does not answer PING"
      return 1
    fi
    export REDIS_URL
    _kv_log "Redis: using REDIS_URL from the environment"
    return 0
  fi

  rport=${KULTIVA_DEFAULT_REDIS_PORT:-6379}
  if _kv_redis_ping -h 127.0.0.1 -p "$rport"; then
    export REDIS_URL="redis://127.0.0.1:$rport/"
    _kv_log "Redis: using the server on 127.0.0.1:$rport"
    return 0
  fi

  if ! out=$(_kv_redis_private); then
    _kv_die "could not provide Redis (set REDIS_URL to use an existing server)"
    return 1
  fi
  read -r port started <<<"$out"
  if [[ $started == 1 ]]; then _KULTIVA_REDIS_STARTED=1; fi
  export REDIS_URL="redis://127.0.0.1:$port/"
  _kv_log "Redis: private instance on 127.0.0.1:$port"
}

# ---------------------------------------------------------------- Mosquitto (MQTT)

# True when something accepts TCP connections on 127.0.0.1:$1.
_kv_tcp_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

_kv_mqtt_private() {
  local mdir=$_KULTIVA_ROOT/.local/mosquitto
  mkdir -p "$mdir/data" || return 1
  _kv_with_lock "$mdir/.lock" _kv_mqtt_private_locked "$mdir"
}

_kv_mqtt_private_locked() {
  local mdir=$1 pid="" port="" i
  local pidfile=$mdir/mosquitto.pid log=$mdir/mosquitto.log conf=$mdir/mosquitto.conf

  if [[ -f $pidfile ]]; then pid=$(<"$pidfile"); fi
  if [[ -f $mdir/port ]]; then port=$(<"$mdir/port"); fi
  if _kv_pid_live "$pid"; then
    if [[ $port =~ ^[0-9]+$ ]] && _kv_tcp_answers "$port"; then
      _kv_log "reusing private Mosquitto on 127.0.0.1:$port (pid $pid)"
      printf '%s 0\n' "$port"
      return 0
    fi
    _kv_die "private Mosquitto (pid $pid) runs but does not answer on 127.0.0.1:${port:-?}; see $log"
    return 1
  fi
  rm -f "$pidfile"
  if ! [[ $port =~ ^[0-9]+$ ]] || _kv_port_in_use "$port"; then
    port=$(_kv_free_port 21883) || return 1
  fi
  # Loopback only, anonymous (tests), persistence on: the reconnect tests rely on a broker
  # that keeps sessions and queued QoS 1 messages.
  # `user`: started as root, mosquitto would switch to its own user, which cannot write here.
  cat >"$conf" <<CONF || return 1
user $(id -un)
listener $port 127.0.0.1
allow_anonymous true
persistence true
persistence_location $mdir/data/
pid_file $pidfile
log_dest file $log
CONF
  _kv_log "starting private Mosquitto on 127.0.0.1:$port (log: $log)"
  if ! mosquitto -c "$conf" -d >/dev/null 2>&1 {_KV_LOCKFD}>&-; then
    _kv_die "mosquitto failed to start (log: $log)"
    return 1
  fi
  for ((i = 0; i < 100; i++)); do
    if _kv_tcp_answers "$port"; then
      printf '%s\n' "$port" >"$mdir/port"
      printf '%s\n' "$$" >"$mdir/started-by"
      printf '%s 1\n' "$port"
      return 0
    fi
    sleep 0.1
  done
  tail -n 20 "$log" >&2 2>/dev/null || true
  _kv_die "private Mosquitto did not answer on 127.0.0.1:$port (log: $log)"
}

# ensure_mosquitto: exports MQTT_URL pointing at an MQTT broker. The binary is installed even
# when a broker answers: the reconnect test starts a private one of its own.
ensure_mosquitto() {
  local mport out port started
  if ! command -v mosquitto >/dev/null 2>&1 || ! command -v mosquitto_pub >/dev/null 2>&1; then
    _kv_log "mosquitto not found; installing it"
    _kv_apt_install mosquitto mosquitto-clients || return 1
  fi
  if [[ -n ${MQTT_URL:-} ]]; then
    export MQTT_URL
    _kv_log "MQTT: using MQTT_URL from the environment"
    return 0
  fi
  mport=${KULTIVA_DEFAULT_MQTT_PORT:-1883}
  if _kv_tcp_answers "$mport"; then
    export MQTT_URL="mqtt://127.0.0.1:$mport"
    _kv_log "MQTT: using the broker on 127.0.0.1:$mport"
    return 0
  fi
  if ! out=$(_kv_mqtt_private); then
    _kv_die "could not provide an MQTT broker (set MQTT_URL to use an existing one)"
    return 1
  fi
  read -r port started <<<"$out"
  if [[ $started == 1 ]]; then _KULTIVA_MQTT_STARTED=1; fi
  export MQTT_URL="mqtt://127.0.0.1:$port"
  _kv_log "MQTT: private Mosquitto on 127.0.0.1:$port"
}

# ---------------------------------------------------------------- Redis Cluster

# Every private service port sits below Linux's ephemeral range (32768-60999 by default):
# there, any outgoing connection may take the port first (connect() prefers even ports), and
# a server then fails to bind it until that connection's TIME_WAIT ends.
_KV_CLUSTER_PORTS=(27001 27002 27003)

# True when every node answers and node 1 reports cluster_state:ok.
_kv_redis_cluster_ok() {
  local port
  for port in "${_KV_CLUSTER_PORTS[@]}"; do
    _kv_redis_ping -h 127.0.0.1 -p "$port" || return 1
  done
  redis-cli -h 127.0.0.1 -p "${_KV_CLUSTER_PORTS[0]}" cluster info 2>/dev/null |
    tr -d '\r' | grep -qx 'cluster_state:ok'
}

# The private cluster in .local/redis-cluster; prints "STARTED" (1 when this call started it,
# 0 when it reused a running one).
_kv_redis_cluster_private() {
  local cdir=$_KULTIVA_ROOT/.local/redis-cluster
  mkdir -p "$cdir" || return 1
  _kv_with_lock "$cdir/.lock" _kv_redis_cluster_private_locked "$cdir"
}

_kv_redis_cluster_private_locked() {
  local cdir=$1 port ndir pid alive=0 i nodes=()

  for port in "${_KV_CLUSTER_PORTS[@]}"; do
    pid=$(cat "$cdir/$port/redis.pid" 2>/dev/null || true)
    if _kv_redis_pid_alive "$pid"; then alive=$((alive + 1)); fi
  done
  if [[ $alive -eq ${#_KV_CLUSTER_PORTS[@]} ]] && _kv_redis_cluster_ok; then
    _kv_log "reusing private Redis Cluster on 127.0.0.1:${_KV_CLUSTER_PORTS[*]}"
    printf '0\n'
    return 0
  fi
  if [[ $alive -gt 0 ]]; then
    # A half-started or broken cluster of an earlier run: stop its nodes (ours: pid files in
    # our directory), start afresh.
    _kv_log "private Redis Cluster is incomplete or not ok; restarting it"
    _kv_redis_cluster_stop "$cdir"
  fi

  if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    _kv_log "redis-server not found; installing it"
    _kv_apt_install redis-server redis-tools || return 1
  fi
  # Each node also listens on a cluster bus port; Redis's default (port + 10000) would be in
  # the ephemeral range, so the bus of node 2700N is 1700N.
  for port in "${_KV_CLUSTER_PORTS[@]}"; do
    if _kv_port_in_use "$port" || _kv_port_in_use $((port - 10000)); then
      _kv_die "port $port or $((port - 10000)) is taken by another process (the private Redis Cluster uses ${_KV_CLUSTER_PORTS[*]} and their bus ports; set REDIS_CLUSTER_URL to use an existing cluster)"
      return 1
    fi
  done
  for port in "${_KV_CLUSTER_PORTS[@]}"; do
    ndir=$cdir/$port
    # A fresh cluster every start: old node tables would name nodes that no longer exist.
    rm -rf "$ndir"
    mkdir -p "$ndir" || return 1
    if ! redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
      --cluster-port $((port - 10000)) \
      --cluster-config-file "$ndir/nodes.conf" --cluster-node-timeout 5000 \
      --save '' --appendonly no --daemonize yes --pidfile "$ndir/redis.pid" \
      --dir "$ndir" --logfile "$ndir/redis.log" >/dev/null 2>&1 {_KV_LOCKFD}>&-; then
      _kv_die "redis-server (cluster node $port) failed to start (log: $ndir/redis.log)"
      _kv_redis_cluster_stop "$cdir"
      return 1
    fi
    nodes+=("127.0.0.1:$port")
  done
  # --daemonize returns before the listener is up, and a node that cannot bind exits then.
  for port in "${_KV_CLUSTER_PORTS[@]}"; do
    for ((i = 0; i < 100; i++)); do
      _kv_redis_ping -h 127.0.0.1 -p "$port" && break
      sleep 0.1
    done
    if ! _kv_redis_ping -h 127.0.0.1 -p "$port"; then
      tail -n 5 "$cdir/$port/redis.log" >&2 2>/dev/null || true
      _kv_die "Redis Cluster node $port did not answer in 10 s (log: $cdir/$port/redis.log)"
      _kv_redis_cluster_stop "$cdir"
      return 1
    fi
  done
  _kv_log "creating the private Redis Cluster on ${nodes[*]} (3 masters, no replicas)"
  if ! redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes \
    >"$cdir/create.log" 2>&1; then
    tail -n 20 "$cdir/create.log" >&2 2>/dev/null || true
    _kv_die "redis-cli --cluster create failed (log: $cdir/create.log)"
    _kv_redis_cluster_stop "$cdir"
    return 1
  fi
  for ((i = 0; i < 300; i++)); do
    if _kv_redis_cluster_ok; then
      printf '%s\n' "$$" >"$cdir/started-by"
      printf '1\n'
      return 0
    fi
    sleep 0.1
  done
  _kv_die "the private Redis Cluster did not reach cluster_state:ok in 30 s (logs: $cdir/*/redis.log)"
  _kv_redis_cluster_stop "$cdir"
  return 1
}

# Stops the nodes whose pid files are in $1 (only our own daemons).
_kv_redis_cluster_stop() {
  local cdir=$1 port pid i
  for port in "${_KV_CLUSTER_PORTS[@]}"; do
    pid=$(cat "$cdir/$port/redis.pid" 2>/dev/null || true)
    if _kv_redis_pid_alive "$pid"; then
      kill "$pid" 2>/dev/null || true
      for ((i = 0; i < 100; i++)); do
        _kv_pid_live "$pid" || break
        sleep 0.1
      done
      _kv_pid_live "$pid" && _kv_log "warning: Redis Cluster node pid $pid still running after 10s"
    fi
    rm -f "$cdir/$port/redis.pid"
  done
  return 0
}

# ensure_redis_cluster: exports REDIS_CLUSTER_URL naming a Redis Cluster whose state is ok.
# REDIS_CLUSTER_URL from the environment is used as is; otherwise the private 3-node cluster
# in .local/redis-cluster (127.0.0.1:27001-27003) is started, or reused when it runs.
# stop_started_services stops it when this shell started it.
ensure_redis_cluster() {
  local out
  if ! command -v redis-cli >/dev/null 2>&1; then
    _kv_apt_install redis-tools || return 1
  fi
  if [[ -n ${REDIS_CLUSTER_URL:-} ]]; then
    export REDIS_CLUSTER_URL
    _kv_log "Redis Cluster: using REDIS_CLUSTER_URL from the environment"
    return 0
  fi
  if ! out=$(_kv_redis_cluster_private); then
    _kv_die "could not provide a Redis Cluster (set REDIS_CLUSTER_URL to use an existing one)"
    return 1
  fi
  if [[ $out == 1 ]]; then _KULTIVA_REDIS_CLUSTER_STARTED=1; fi
  export REDIS_CLUSTER_URL="redis+cluster://127.0.0.1:27001,127.0.0.1:27002,127.0.0.1:27003"
  _kv_log "Redis Cluster: private 3-node cluster on 127.0.0.1:27001-27003"
}

# ---------------------------------------------------------------- teardown

# Stops only the private instances started by this shell (meant for
# `trap stop_started_services EXIT`). Never fails, never calls exit, so the
# caller's exit status is preserved.
# Stops the private cluster in directory $1 if its started-by file names this shell.
_kv_pg_stop_private() {
  local pgdir=$1 bindir ver=""
  [[ $(cat "$pgdir/started-by" 2>/dev/null) == "$$" ]] || return 0
  if [[ -f $pgdir/data/PG_VERSION ]]; then ver=$(<"$pgdir/data/PG_VERSION"); fi
  if bindir=$(_kv_pg_bindir "$ver"); then
    _kv_log "stopping private PostgreSQL ($pgdir/data)"
    _kv_pg_as "$bindir/pg_ctl" -D "$pgdir/data" -m fast -w stop >/dev/null 2>&1 ||
      _kv_log "warning: pg_ctl stop failed (log: $pgdir/postgres.log)"
  fi
  rm -f "$pgdir/started-by"
}

stop_started_services() {
  local rdir=$_KULTIVA_ROOT/.local/redis
  local pid i

  if [[ $_KULTIVA_PG_STARTED -eq 1 ]]; then
    _kv_pg_stop_private "$_KULTIVA_ROOT/.local/pg"
    _KULTIVA_PG_STARTED=0
  fi
  if [[ $_KULTIVA_PG2_STARTED -eq 1 ]]; then
    _kv_pg_stop_private "$_KULTIVA_ROOT/.local/pg2"
    _KULTIVA_PG2_STARTED=0
  fi
  for i in $_KULTIVA_CITUS_STARTED; do
    _kv_pg_stop_private "$_KULTIVA_ROOT/.local/citus/$i"
  done
  _KULTIVA_CITUS_STARTED=""

  if [[ $_KULTIVA_REDIS_CLUSTER_STARTED -eq 1 &&
    $(cat "$_KULTIVA_ROOT/.local/redis-cluster/started-by" 2>/dev/null) == "$$" ]]; then
    _kv_log "stopping the private Redis Cluster"
    _kv_redis_cluster_stop "$_KULTIVA_ROOT/.local/redis-cluster"
    rm -f "$_KULTIVA_ROOT/.local/redis-cluster/started-by"
    _KULTIVA_REDIS_CLUSTER_STARTED=0
  fi
  if [[ $_KULTIVA_MQTT_STARTED -eq 1 &&
    $(cat "$_KULTIVA_ROOT/.local/mosquitto/started-by" 2>/dev/null) == "$$" ]]; then
    pid=$(cat "$_KULTIVA_ROOT/.local/mosquitto/mosquitto.pid" 2>/dev/null || true)
    if _kv_pid_live "$pid"; then
      _kv_log "stopping private Mosquitto (pid $pid)"
      kill "$pid" 2>/dev/null || true
    fi
    rm -f "$_KULTIVA_ROOT/.local/mosquitto/started-by"
    _KULTIVA_MQTT_STARTED=0
  fi
  if [[ $_KULTIVA_REDIS_STARTED -eq 1 && $(cat "$rdir/started-by" 2>/dev/null) == "$$" ]]; then
    pid=$(cat "$rdir/redis.pid" 2>/dev/null || true)
    if _kv_redis_pid_alive "$pid"; then
      _kv_log "stopping private Redis (pid $pid)"
      kill "$pid" 2>/dev/null || true
      for ((i = 0; i < 100; i++)); do
        _kv_pid_live "$pid" || break
        sleep 0.1
      done
      if _kv_pid_live "$pid"; then
        _kv_log "warning: Redis pid $pid still running after 10s"
      fi
    fi
    rm -f "$rdir/started-by"
    _KULTIVA_REDIS_STARTED=0
  fi
  return 0
}

# ---------------------------------------------------------------- secrets/tools

# Exports JWT_SECRET_KEY (and prints it, for `$(ensure_dev_secret)`): the
# environment's value, else the persistent local one in .local/dev-secret.
ensure_dev_secret() {
  local file=$_KULTIVA_ROOT/.local/dev-secret key
  if [[ -z ${JWT_SECRET_KEY:-} ]]; then
    if [[ ! -s $file ]]; then
      mkdir -p "$_KULTIVA_ROOT/.local" || return 1
      _kv_log "creating development JWT secret in $file"
      key=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n') || return 1
      (umask 077 && printf '%s\n' "$key" >"$file") || return 1
    fi
    chmod 600 "$file" || return 1
    JWT_SECRET_KEY=$(<"$file")
    if [[ -z $JWT_SECRET_KEY ]]; then
      _kv_die "$file is empty"
      return 1
    fi
  fi
  export JWT_SECRET_KEY
  printf '%s\n' "$JWT_SECRET_KEY"
}

# cargo + rustfmt + clippy must work; exports KULTIVA_TEST_RUNNER=nextest|cargo-test.
# cargo on PATH and a C compiler to link with (installed when missing).
ensure_cargo() {
  if ! command -v cargo >/dev/null 2>&1; then
    _kv_die "cargo not found: install Rust (https://rustup.rs) and make sure ~/.cargo/bin is on PATH"
    return 1
  fi
  # Rust links through the system C compiler, and a few crates build C code.
  if ! command -v cc >/dev/null 2>&1; then
    _kv_log "no C compiler (cc) found; installing gcc"
    _kv_apt_install gcc libc6-dev || return 1
  fi
}

ensure_rust_tools() {
  ensure_cargo || return 1
  if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    if command -v rustup >/dev/null 2>&1; then
      _kv_log "adding rustfmt and clippy components"
      rustup component add rustfmt clippy >&2 || true
    fi
    if ! cargo fmt --version >/dev/null 2>&1; then
      _kv_die "cargo fmt does not work (rustup component add rustfmt)"
      return 1
    fi
    if ! cargo clippy --version >/dev/null 2>&1; then
      _kv_die "cargo clippy does not work (rustup component add clippy)"
      return 1
    fi
  fi
  if cargo nextest --version >/dev/null 2>&1; then
    export KULTIVA_TEST_RUNNER=nextest
  else
    export KULTIVA_TEST_RUNNER=cargo-test
  fi
  _kv_log "rust: $(cargo --version 2>/dev/null), test runner: $KULTIVA_TEST_RUNNER"
}

# ---------------------------------------------------------------- Python test tools

# ensure_test_venv: the Python venv of the test tools (schemathesis, the aiosmtpd mail sink) in
# .local/venv, installed from the pinned tests/requirements.txt and reinstalled whenever that
# file changes. Exports KULTIVA_TEST_VENV (the Rust mail tests find the sink's Python there).
ensure_test_venv() {
  local venv=$_KULTIVA_ROOT/.local/venv req=$_KULTIVA_ROOT/tests/requirements.txt
  if [[ ! -x $venv/bin/python ]] || ! cmp -s "$req" "$venv/.kultiva-requirements"; then
    if ! command -v python3 >/dev/null 2>&1; then
      _kv_apt_install python3 python3-venv || return 1
    fi
    _kv_log "installing the Python test tools (tests/requirements.txt) into $venv"
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
      # Debian splits venv support out of python3.
      _kv_apt_install python3-venv || return 1
      if ! python3 -m venv "$venv" >&2; then
        _kv_die "python3 -m venv $venv failed"
        return 1
      fi
    fi
    if ! "$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >&2; then
      _kv_die "pip install -r $req failed"
      return 1
    fi
    cp "$req" "$venv/.kultiva-requirements" || return 1
  fi
  export KULTIVA_TEST_VENV=$venv
}

# ensure_wrk: the HTTP load generator of loadtest/hotpath, from Debian's packages when missing.
ensure_wrk() {
  command -v wrk >/dev/null 2>&1 && return 0
  _kv_apt_install wrk || return 1
  command -v wrk >/dev/null 2>&1 || _kv_die "wrk is not on PATH after apt-get install wrk"
}

# ensure_chromium: Debian's Chromium for the browser tests (tests/browser/run), installed with
# apt when missing. Exports KULTIVA_CHROMIUM (its path). Playwright drives it; its own browser
# download is never used (it fetches from outside the package registries).
ensure_chromium() {
  local bin
  bin=$(command -v chromium || command -v chromium-browser || true)
  if [[ -z $bin ]]; then
    _kv_apt_install chromium || return 1
    bin=$(command -v chromium || true)
  fi
  if [[ -z $bin ]]; then
    _kv_die "chromium is not on PATH after apt-get install chromium"
    return 1
  fi
  export KULTIVA_CHROMIUM=$bin
}

# The OpenID provider of the sign-in tests (tests/oidc/provider.mjs): the npm package
# oidc-provider, pinned, in .local/npm-oidc (its own prefix: the MCP conformance suite's
# .local/npm stays as tests/mcp/run installs it). Runs on the system Node (20 or later; npm is
# installed from Debian when missing). Exports KULTIVA_TEST_OIDC_MODULES for the tests.
OIDC_PROVIDER_VERSION=9.13.3
ensure_oidc_provider() {
  local root prefix manifest got=""
  root=$(kultiva_root)
  prefix="$root/.local/npm-oidc"
  manifest="$prefix/node_modules/oidc-provider/package.json"
  if [[ -f $manifest ]]; then
    got=$(node -p 'require(process.argv[1]).version' "$manifest" 2>/dev/null || true)
  fi
  if [[ $got != "$OIDC_PROVIDER_VERSION" ]]; then
    if ! command -v npm >/dev/null 2>&1; then
      _kv_apt_install npm || return 1
    fi
    _kv_log "installing oidc-provider@$OIDC_PROVIDER_VERSION into $prefix"
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --save-exact --loglevel=error \
      "oidc-provider@$OIDC_PROVIDER_VERSION" >&2 || return 1
  fi
  export KULTIVA_TEST_OIDC_MODULES="$prefix/node_modules"
}

# axe-core (npm, pinned) for the accessibility checks of the web pages (tests/browser/web_test.py),
# installed into .local/npm-axe; KULTIVA_TEST_AXE names its browser bundle.
AXE_CORE_VERSION=4.14.1
ensure_axe_core() {
  local root prefix manifest got=""
  root=$(kultiva_root)
  prefix="$root/.local/npm-axe"
  manifest="$prefix/node_modules/axe-core/package.json"
  if [[ -f $manifest ]]; then
    got=$(node -p 'require(process.argv[1]).version' "$manifest" 2>/dev/null || true)
  fi
  if [[ $got != "$AXE_CORE_VERSION" ]]; then
    if ! command -v npm >/dev/null 2>&1; then
      _kv_apt_install npm || return 1
    fi
    _kv_log "installing axe-core@$AXE_CORE_VERSION into $prefix"
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --save-exact --loglevel=error \
      "axe-core@$AXE_CORE_VERSION" >&2 || return 1
  fi
  export KULTIVA_TEST_AXE="$prefix/node_modules/axe-core/axe.min.js"
}
