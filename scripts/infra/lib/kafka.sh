# shellcheck shell=bash
# Kafka 3.9 broker, KRaft combined mode (broker + controller in one JVM), from Maven Central jars.
# The data dir is wiped on every start: tests create their own topics.

KAFKA_PORT=${ACM_INFRA_KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${ACM_INFRA_KAFKA_CONTROLLER_PORT:-9093}
KAFKA_HOME=$INFRA_DIR/kafka
KAFKA_LIB=$KAFKA_HOME/lib
KAFKA_LOG=$KAFKA_HOME/kafka.log
KAFKA_PID=$KAFKA_HOME/kafka.pid
KAFKA_MATCH=kafka.Kafka       # what the server's command line contains
# Any valid cluster id works: the storage is formatted anew on each start.
KAFKA_CLUSTER_ID=MkU3OEVBNTcwNTJENDM2Qk

kafka_env() { echo "ACM_TEST_KAFKA_BOOTSTRAP=127.0.0.1:$KAFKA_PORT"; }

kafka_install() {
    mkdir -p "$KAFKA_HOME"
    require_java
    mvn_fetch kafka "$INFRA_SRC/kafka/pom.xml" "$KAFKA_LIB"
}

# Port answers and this run's log says the broker finished starting.
kafka_healthy() {
    pid_running "$KAFKA_PID" "$KAFKA_MATCH" && port_open 127.0.0.1 "$KAFKA_PORT" &&
        grep -q 'Kafka Server started' "$KAFKA_LOG" 2>/dev/null
}
kafka_running() { pid_running "$KAFKA_PID" "$KAFKA_MATCH"; }

kafka_write_config() {
    cat >"$KAFKA_HOME/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA_HOME/data
auto.create.topics.enable=true
# two partitions so that two consumers of one group both get work
num.partitions=2
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
# the default 50 offsets partitions make the first consumer-group join slow on a small machine
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
EOF
    # Kafka 3.9 logs through log4j 1.x (reload4j); without a config it logs nothing at all.
    cat >"$KAFKA_HOME/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.org.apache.kafka.clients=WARN
EOF
    # for the CLI classes: warnings only, on stderr
    cat >"$KAFKA_HOME/tools-log4j.properties" <<'EOF'
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
}

kafka_start() {
    require_free_port kafka "$KAFKA_PORT"
    require_free_port kafka-controller "$KAFKA_CONTROLLER_PORT"
    rm -rf "${KAFKA_HOME:?}/data"
    kafka_write_config
    local java=(java -Xmx512m -Xms256m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true
        "-Dlog4j.configuration=file:$KAFKA_HOME/log4j.properties" -cp "$KAFKA_LIB/*")
    log "kafka: starting on 127.0.0.1:$KAFKA_PORT (controller :$KAFKA_CONTROLLER_PORT), log $KAFKA_LOG"
    # Formatting the storage takes a JVM start of its own; doing it inside the detached shell lets the
    # other servers start meanwhile. `exec` keeps the pid in the pid file the broker's.
    start_detached "$KAFKA_PID" "$KAFKA_LOG" bash -c '
        "${@:3}" kafka.tools.StorageTool format -t "$1" -c "$2" --ignore-formatted &&
        exec "${@:3}" kafka.Kafka "$2"' kafka "$KAFKA_CLUSTER_ID" "$KAFKA_HOME/server.properties" "${java[@]}"
}

kafka_wait() {
    wait_until kafka "$KAFKA_LOG" "$KAFKA_PID" "$KAFKA_MATCH" kafka_healthy
    # A real metadata round trip through the admin client, once, as the final proof.
    kafka_cli org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$KAFKA_PORT" --list >/dev/null ||
        fail_with_log kafka "$KAFKA_LOG" "broker started but a metadata request (TopicCommand --list) failed"
}

# kafka_cli MAINCLASS ARGS...: run a Kafka CLI class (TopicCommand, ConsoleConsumer, ...) with the jars.
kafka_cli() {
    java -Xmx256m -Dlog4j.configuration=file:"$KAFKA_HOME/tools-log4j.properties" -cp "$KAFKA_LIB/*" "$@"
}

kafka_stop() { stop_pidfile kafka "$KAFKA_PID" "$KAFKA_MATCH" 60 && rm -f "$KAFKA_PID"; }
