# shellcheck shell=bash
# PostgreSQL 15 from Debian's package, in a cluster of our own (not the system's 15/main), run as the
# `postgres` OS user (initdb and postgres refuse to run as root). The data dir is kept between starts.

PG_PORT=${ACM_INFRA_POSTGRES_PORT:-5432}
PG_BIN=/usr/lib/postgresql/15/bin
PG_HOME=$INFRA_DIR/postgres
PG_DATA=$PG_HOME/data
PG_LOG=$PG_HOME/postgres.log
PG_MATCH=$PG_DATA   # in the postmaster's command line: .../bin/postgres -D <data>

postgres_env() { echo "ACM_TEST_POSTGRES_DSN=postgresql://acm@127.0.0.1:$PG_PORT/acm"; }

pg_as_postgres() { runuser -u postgres -- "$@"; }

postgres_install() {
    if [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/pg_ctl" ] || ! command -v psql >/dev/null; then
        log "postgres: installing postgresql 15 (apt)"
        apt_install postgresql
        # Where service starts are allowed, the package starts its own cluster 15/main on our port.
        pg_ctlcluster 15 main stop 2>/dev/null || true
    fi
    mkdir -p "$PG_HOME"
    chown postgres:postgres "$PG_HOME"
    [ -f "$PG_DATA/PG_VERSION" ] && return 0
    log "postgres: initdb $PG_DATA"
    rm -rf "$PG_DATA"
    pg_as_postgres "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$PG_HOME/initdb.log" 2>&1 ||
        fail_with_log postgres "$PG_HOME/initdb.log" "initdb failed"
    # Durability is traded for speed: this cluster only holds test data.
    cat >>"$PG_DATA/postgresql.conf" <<EOF

# --- scripts/infra/lib/postgres.sh ---
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
}

postgres_running() { pid_running "$PG_DATA/postmaster.pid" "$PG_MATCH"; }

postgres_accepting() {
    postgres_running && "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 2
}
# Up for the tests = accepting connections and the acm role and database exist.
postgres_healthy() {
    postgres_accepting &&
        [ "$("$PG_BIN/psql" "postgresql://acm@127.0.0.1:$PG_PORT/acm" -qtAX -c 'select 1' 2>/dev/null)" = 1 ]
}

postgres_start() {
    require_free_port postgres "$PG_PORT"
    # A postmaster.pid left by a killed server naming a pid that is now something else would block start.
    postgres_running || rm -f "$PG_DATA/postmaster.pid"
    log "postgres: starting on 127.0.0.1:$PG_PORT, log $PG_LOG"
    touch "$PG_LOG" && chown postgres:postgres "$PG_LOG"
    # pg_ctl detaches the postmaster itself (it calls setsid); -w waits until it accepts connections.
    # Loopback only, and our own socket dir (/var/run/postgresql may not exist without the system service).
    pg_as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t "$INFRA_TIMEOUT" \
        -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_HOME" start >/dev/null 9>&- ||
        fail_with_log postgres "$PG_LOG" "pg_ctl start failed"
}

postgres_wait() {
    wait_until postgres "$PG_LOG" "" "" postgres_accepting
    # The test role and database (idempotent).
    local psql=("$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -qtAX -v ON_ERROR_STOP=1)
    if [ "$("${psql[@]}" -c "select 1 from pg_roles where rolname = 'acm'")" != 1 ]; then
        "${psql[@]}" -c "create role acm superuser login"
    fi
    if [ "$("${psql[@]}" -c "select 1 from pg_database where datname = 'acm'")" != 1 ]; then
        "${psql[@]}" -c "create database acm owner acm"
    fi
}

# SIGINT is PostgreSQL's "fast" shutdown (roll back sessions, checkpoint, exit); SIGQUIT "immediate".
# Signalling the postmaster's pid (not `pg_ctl stop`) never hits a newer server started meanwhile.
postgres_stop() { stop_pidfile postgres "$PG_DATA/postmaster.pid" "$PG_MATCH" 30 INT QUIT; }
