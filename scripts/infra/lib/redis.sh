# shellcheck shell=bash
# Redis from Debian's redis-server package; no persistence (tests own their keys).

REDIS_PORT=${ACM_INFRA_REDIS_PORT:-6379}
REDIS_HOME=$INFRA_DIR/redis
REDIS_LOG=$REDIS_HOME/redis.log
REDIS_PID=$REDIS_HOME/redis.pid
REDIS_MATCH=redis-server

redis_env() { echo "ACM_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0"; }

redis_install() {
    mkdir -p "$REDIS_HOME"
    command -v redis-server >/dev/null && command -v redis-cli >/dev/null && return 0
    log "redis: installing redis-server (apt)"
    apt_install redis-server
}

redis_healthy() {
    pid_running "$REDIS_PID" "$REDIS_MATCH" &&
        [ "$(timeout 2 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]
}
redis_running() { pid_running "$REDIS_PID" "$REDIS_MATCH"; }

redis_start() {
    require_free_port redis "$REDIS_PORT"
    log "redis: starting on 127.0.0.1:$REDIS_PORT, log $REDIS_LOG"
    # --daemonize makes redis detach and write its own pid file; setsid keeps it out of our session.
    setsid redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
        --dir "$REDIS_HOME" --pidfile "$REDIS_PID" --logfile "$REDIS_LOG" </dev/null 9>&-
}

redis_wait() { wait_until redis "$REDIS_LOG" "" "" redis_healthy; }

redis_stop() { stop_pidfile redis "$REDIS_PID" "$REDIS_MATCH" 30 && rm -f "$REDIS_PID"; }
