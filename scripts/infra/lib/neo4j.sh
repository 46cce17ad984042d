# shellcheck shell=bash
# Neo4j 5.26 (embedded DBMS with Bolt, see scripts/infra/neo4j/Neo4jServer.java), from Maven Central jars.
# The database home is wiped on every start: tests create their own data.

NEO4J_PORT=${ACM_INFRA_NEO4J_PORT:-7687}
NEO4J_HOME=$INFRA_DIR/neo4j
NEO4J_LIB=$NEO4J_HOME/lib
NEO4J_LOG=$NEO4J_HOME/neo4j.log          # stdout/stderr of the JVM; Neo4j's own log: home/logs/debug.log
NEO4J_PID=$NEO4J_HOME/neo4j.pid
NEO4J_MATCH=Neo4jServer

neo4j_env() { echo "ACM_TEST_NEO4J_URI=bolt://127.0.0.1:$NEO4J_PORT"; }

neo4j_install() {
    mkdir -p "$NEO4J_HOME"
    require_java
    mvn_fetch neo4j "$INFRA_SRC/neo4j/pom.xml" "$NEO4J_LIB"
    # `java Neo4jServer.java` would compile the source on every start (~3 s of CPU); compile it once per
    # version of the source instead.
    local src=$INFRA_SRC/neo4j/Neo4jServer.java sum
    sum=$(sha256sum "$src" | cut -d' ' -f1)
    [ "$(cat "$NEO4J_HOME/classes/.sha256" 2>/dev/null)" = "$sum" ] && return 0
    log "neo4j: compiling Neo4jServer.java"
    rm -rf "$NEO4J_HOME/classes"
    javac -nowarn -d "$NEO4J_HOME/classes" -cp "$NEO4J_LIB/*" "$src" || die "neo4j: javac Neo4jServer.java failed"
    echo "$sum" >"$NEO4J_HOME/classes/.sha256"
}

neo4j_healthy() {
    pid_running "$NEO4J_PID" "$NEO4J_MATCH" && port_open 127.0.0.1 "$NEO4J_PORT" &&
        grep -q 'NEO4J READY' "$NEO4J_LOG" 2>/dev/null
}
neo4j_running() { pid_running "$NEO4J_PID" "$NEO4J_MATCH"; }

neo4j_start() {
    require_free_port neo4j "$NEO4J_PORT"
    rm -rf "${NEO4J_HOME:?}/home"
    mkdir -p "$NEO4J_HOME/home"
    log "neo4j: starting on 127.0.0.1:$NEO4J_PORT, log $NEO4J_LOG"
    # The --add-opens flags are the ones Neo4j's own neo4j.conf passes to the JVM.
    start_detached "$NEO4J_PID" "$NEO4J_LOG" java -Xmx768m -Xms256m -XX:+UseG1GC \
        -XX:-OmitStackTraceInFastThrow -Djdk.nio.maxCachedBufferSize=1024 -Dio.netty.tryReflectionSetAccessible=true \
        --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
        --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
        -cp "$NEO4J_HOME/classes:$NEO4J_LIB/*" Neo4jServer "$NEO4J_HOME/home" "$NEO4J_PORT"
}

neo4j_wait() { wait_until neo4j "$NEO4J_LOG" "$NEO4J_PID" "$NEO4J_MATCH" neo4j_healthy; }

neo4j_stop() { stop_pidfile neo4j "$NEO4J_PID" "$NEO4J_MATCH" 60 && rm -f "$NEO4J_PID"; }
