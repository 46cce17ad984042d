# shellcheck shell=bash
# Shared helpers for scripts/infra/*.sh (sourced, not executed).
# Everything the servers need at run time (jars, data, logs, pid files) lives under $INFRA_DIR, outside the
# repo, so a fresh clone reuses what an earlier run downloaded.

INFRA_DIR=${ACM_INFRA_DIR:-/var/tmp/acm-infra}
INFRA_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)   # scripts/infra in the repo
INFRA_TIMEOUT=${ACM_INFRA_TIMEOUT:-180}                      # seconds to wait for each server
# Ports default to the standard ones; ACM_INFRA_{KAFKA,KAFKA_CONTROLLER,NEO4J,POSTGRES,REDIS}_PORT override
# them (with another ACM_INFRA_DIR this runs a second, separate set of servers).
ALL_SERVERS=(kafka neo4j postgres redis)     # start order: the slow JVMs first
# shellcheck disable=SC2034  # used by up.sh
READY_ORDER=(redis postgres kafka neo4j)     # wait order: quickest first, so reported times are honest
# shellcheck disable=SC2034
ENV_ORDER=(kafka postgres neo4j redis)

log() { echo "[infra] $*"; }
die() { echo "[infra] ERROR: $*" >&2; exit 1; }

# Seconds since $1 (an $EPOCHREALTIME value), one decimal.
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1fs", b - a }'; }

# Select servers from the arguments (default: all), rejecting unknown names.
parse_servers() {
    SERVERS=("$@")
    [ ${#SERVERS[@]} -gt 0 ] || SERVERS=("${ALL_SERVERS[@]}")
    local s
    for s in "${SERVERS[@]}"; do
        [[ " ${ALL_SERVERS[*]} " == *" $s "* ]] || die "unknown server '$s' (known: ${ALL_SERVERS[*]})"
    done
}

load_servers() {
    local s
    for s in "${ALL_SERVERS[@]}"; do
        # shellcheck source=/dev/null
        . "$INFRA_SRC/lib/$s.sh"
    done
}

# Serialise concurrent up/down calls (two test runs starting at once must not start two brokers).
# The lock is fd 9: every server launch must close it (9>&-), or the server would hold the lock forever.
take_lock() {
    mkdir -p "$INFRA_DIR"
    chmod 755 "$INFRA_DIR"   # the postgres user must be able to reach its data dir below
    exec 9>"$INFRA_DIR/up.lock"
    flock -w 600 9 || die "could not lock $INFRA_DIR/up.lock"
}

port_open() { timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }

# Fail clearly when a port we need is held by something that is not our server.
require_free_port() {
    local name=$1 port=$2
    if port_open 127.0.0.1 "$port"; then
        echo "[infra] ERROR: $name: port 127.0.0.1:$port is already in use by another process:" >&2
        ss -ltnp "sport = :$port" >&2 2>/dev/null || true
        exit 1
    fi
}

# pid_running PIDFILE PATTERN: the pid in PIDFILE is alive AND its command line matches PATTERN
# (a pid file left over from a killed session may name a pid that now belongs to something else).
pid_running() {
    local pid
    [ -s "$1" ] || return 1
    pid=$(head -n1 "$1")
    [[ $pid =~ ^[0-9]+$ ]] && [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$2"
}

# start_detached PIDFILE LOGFILE CMD...: run CMD in its own session, surviving the calling shell.
# (setsid does not fork here, because a background job of a script is not a process-group leader,
# so $! is the server's own pid.)
start_detached() {
    local pidfile=$1 logfile=$2
    shift 2
    setsid nohup "$@" >"$logfile" 2>&1 </dev/null 9>&- &
    echo $! >"$pidfile"
}

# stop_pidfile NAME PIDFILE PATTERN [GRACE_SECONDS [STOP_SIGNAL [KILL_SIGNAL]]]:
# send STOP_SIGNAL (TERM), wait up to GRACE_SECONDS, then KILL_SIGNAL (KILL). Always the same pid.
stop_pidfile() {
    local name=$1 pidfile=$2 pattern=$3 grace=${4:-30} stop_sig=${5:-TERM} kill_sig=${6:-KILL} pid i
    if ! pid_running "$pidfile" "$pattern"; then
        log "$name: not running"
        return 0
    fi
    pid=$(head -n1 "$pidfile")
    log "$name: stopping (pid $pid)"
    kill -"$stop_sig" "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "$name: still running after ${grace}s, sending SIG$kill_sig"
        kill -"$kill_sig" "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    fi
    log "$name: stopped"
}

# wait_until NAME LOGFILE PIDFILE PATTERN CHECK...: poll CHECK until it succeeds, the process dies, or the
# timeout passes; on failure show the end of the log.
wait_until() {
    local name=$1 logfile=$2 pidfile=$3 pattern=$4
    shift 4
    local deadline=$((SECONDS + INFRA_TIMEOUT))
    until "$@"; do
        if [ -n "$pidfile" ] && ! pid_running "$pidfile" "$pattern"; then
            fail_with_log "$name" "$logfile" "the process exited before it was ready"
        fi
        if ((SECONDS >= deadline)); then
            fail_with_log "$name" "$logfile" "not ready after ${INFRA_TIMEOUT}s"
        fi
        sleep 0.5
    done
}

fail_with_log() {
    {
        echo "[infra] ERROR: $1: $3; last 40 lines of $2:"
        tail -n 40 "$2" 2>/dev/null | sed 's/^/    /'
    } >&2
    exit 1
}

APT_UPDATED=
apt_install() {
    if [ -z "$APT_UPDATED" ]; then
        log "apt-get update"
        apt-get update -qq
        APT_UPDATED=1
    fi
    log "apt-get install $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

require_java() {
    command -v java >/dev/null && command -v javac >/dev/null && command -v mvn >/dev/null && return 0
    apt_install openjdk-17-jdk-headless maven
}

# mvn_fetch NAME POM LIBDIR: collect the POM's runtime jars into LIBDIR, unless LIBDIR already holds the
# jars for this exact POM (checked by its hash). Jars land in a temp dir first so an interrupted download
# never leaves a half-filled LIBDIR behind.
mvn_fetch() {
    local name=$1 pom=$2 lib=$3 sum t0
    sum=$(sha256sum "$pom" | cut -d' ' -f1)
    [ "$(cat "$lib/.pom.sha256" 2>/dev/null)" = "$sum" ] && return 0
    require_java
    log "$name: downloading jars (Maven Central) into $lib"
    t0=$EPOCHREALTIME
    rm -rf "$lib.tmp"
    mkdir -p "$lib.tmp"
    mvn -B -q -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$lib.tmp" >"$lib.tmp/mvn.log" 2>&1 ||
        fail_with_log "$name" "$lib.tmp/mvn.log" "mvn dependency:copy-dependencies failed"
    echo "$sum" >"$lib.tmp/.pom.sha256"
    rm -rf "$lib"
    mv "$lib.tmp" "$lib"
    log "$name: $(ls "$lib"/*.jar | wc -l) jars in $(elapsed "$t0")"
}
