#!/usr/bin/env bash
# A real single-node Apache Kafka broker (KRaft: broker + controller in one JVM) for development and CI.
#
#   bash scripts/kafka/broker.sh start     # resolve jars (once), format storage (once), start, wait until ready
#   bash scripts/kafka/broker.sh start --optional   # the same where Java (and, for the first fetch, Maven) are
#                                          # installed; without them one line says so and it exits 0 (npm start)
#   bash scripts/kafka/broker.sh stop      # SIGTERM via the pid file, SIGKILL after KAFKA_STOP_TIMEOUT seconds
#   bash scripts/kafka/broker.sh restart
#   bash scripts/kafka/broker.sh status    # exit 0 when this state dir's broker runs, 3 when not
#
# Clients connect to 127.0.0.1:9092 (PLAINTEXT); the controller listens on 127.0.0.1:9093.
# Each state dir (KAFKA_STATE_DIR) is one broker: its pid file, config, logs and data. A second broker runs
# from the same checkout with a state dir and ports of its own, e.g. for fault tests that stop and kill it:
#   KAFKA_STATE_DIR=/tmp/k2 KAFKA_PORT=19092 KAFKA_CONTROLLER_PORT=19093 bash scripts/kafka/broker.sh start
# The broker version is pinned in scripts/kafka/pom.xml (<kafka.version>); see docs/adr/0004.
#
# Environment (all optional):
#   KAFKA_CACHE_DIR       jar cache (default $HOME/.cache/a2a-platform/kafka-<version>); Maven's ~/.m2 is reused too
#   KAFKA_STATE_DIR       pid file, config, logs (default <repo>/.kafka); stop, restart and status act on the
#                         broker of this state dir only
#   KAFKA_DATA_DIR        KRaft metadata + topic data (default $KAFKA_STATE_DIR/data)
#   KAFKA_PORT            client port (default 9092); KAFKA_CONTROLLER_PORT (default 9093)
#   KAFKA_HEAP_OPTS       JVM heap (default -Xmx512m -Xms512m)
#   KAFKA_START_TIMEOUT   seconds to wait for readiness (default 90); KAFKA_STOP_TIMEOUT (default 30)
#   KAFKA_SMOKE           1 (default): after a fresh start, also run scripts/kafka/smoke.mjs when the Node
#                         client is installed; 0 skips it
#   KAFKA_MVN_ARGS        extra Maven arguments, e.g. -Dmaven.repo.local=/tmp/m2
#   KAFKA_SASL_SSL_PORT   also listen here with SASL_SSL and SCRAM-SHA-512, the listener of a secured cluster
#                         (Strimzi's TLS listener with SCRAM users): its certificate, for 127.0.0.1, is signed by
#                         a CA made with openssl on the first start ($KAFKA_STATE_DIR/tls/ca.crt is what clients
#                         trust), and ACLs are enforced (StandardAuthorizer). The plaintext and controller
#                         listeners stay unauthenticated: their principal, User:ANONYMOUS, is a super user that
#                         creates topics and ACLs. Unset (the default): the broker has no other listener.
#   KAFKA_SCRAM_USERS     with KAFKA_SASL_SSL_PORT: SCRAM-SHA-512 users as space-separated name:password pairs,
#                         stored when the storage is formatted (the first start of a data dir)
# Everything except the jar cache lives under the state dir (<repo>/.kafka/ by default, gitignored).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$SCRIPT_DIR/../.." && pwd)"
POM="$SCRIPT_DIR/pom.xml"

KAFKA_VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM" | head -n 1)"
[[ -n "$KAFKA_VERSION" ]] || {
  echo "kafka: cannot read <kafka.version> from $POM" >&2
  exit 1
}

HOST=127.0.0.1
PORT="${KAFKA_PORT:-9092}"
CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
SASL_SSL_PORT="${KAFKA_SASL_SSL_PORT:-}"
CACHE_DIR="${KAFKA_CACHE_DIR:-${HOME:-$REPO_DIR/.kafka}/.cache/a2a-platform/kafka-$KAFKA_VERSION}"
LIBS_DIR="$CACHE_DIR/libs"
DEFAULT_STATE_DIR="$REPO_DIR/.kafka"
STATE_DIR="${KAFKA_STATE_DIR:-$DEFAULT_STATE_DIR}"
# Absolute, because the pid check matches the broker's command line, which holds this path.
[[ "$STATE_DIR" == /* ]] || STATE_DIR="$PWD/$STATE_DIR"
DATA_DIR="${KAFKA_DATA_DIR:-$STATE_DIR/data}"
LOG_DIR="$STATE_DIR/logs"
PID_FILE="$STATE_DIR/broker.pid"
CONFIG="$STATE_DIR/server.properties"
LOG4J_CONFIG="$STATE_DIR/log4j2.properties"
TLS_DIR="$STATE_DIR/tls"
START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"
HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx512m -Xms512m}"

log() { echo "kafka: $*"; }
die() {
  echo "kafka: $*" >&2
  exit 1
}

# --- small helpers ------------------------------------------------------------------------------------------

port_open() { # host port
  timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
}

# A zombie counts as dead once its last thread is gone: the broker is detached from this shell, and where pid 1
# reaps orphans late or never (some container and microVM inits) a stopped broker stays a zombie, which kill -0
# still reports. While other threads are still exiting, the zombie leader still holds the broker's sockets.
pid_alive() {
  [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null || return 1
  local state threads
  read -r state threads < <(ps -o stat=,nlwp= -p "$1" 2>/dev/null) || true
  [[ "${state:-}" != Z* || "${threads:-1}" != 1 ]]
}

cmdline() { # pid -> its command line, spaces between arguments
  tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null || true
}

# The pid from our pid file, if that process is alive and is the broker started with this state dir's config.
our_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  pid_alive "$pid" || return 1
  [[ "$(cmdline "$pid")" == *"kafka.Kafka $CONFIG"* ]] || return 1
  echo "$pid"
}

# The pid of whatever listens on the client port (needs ss from iproute2; empty when unknown).
listener_pid() {
  command -v ss >/dev/null || return 0
  ss -Hltnp "sport = :$PORT" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1
}

classpath_ok() {
  [[ -f "$LIBS_DIR/.complete" ]] && [[ "$(cat "$LIBS_DIR/.complete")" == "$(pom_digest)" ]]
}

pom_digest() {
  sha256sum "$POM" | cut -d' ' -f1
}

java_cmd() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    echo "$JAVA_HOME/bin/java"
  else
    command -v java || die "java not found (Kafka $KAFKA_VERSION needs Java 17 or newer)"
  fi
}

# Why this machine cannot start a broker (empty when it can): Java is missing, or Maven is missing while the
# jars are not cached yet.
missing_tools() {
  if [[ ! (-n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java") ]] && ! command -v java >/dev/null; then
    echo "java not found"
  elif ! classpath_ok && ! command -v mvn >/dev/null; then
    echo "mvn not found (it fetches the broker jars once)"
  fi
}

# --- start steps --------------------------------------------------------------------------------------------

resolve_classpath() {
  if classpath_ok; then
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found: Maven is needed once to fetch the broker jars into $LIBS_DIR"
  log "fetching Kafka $KAFKA_VERSION jars from Maven Central into $LIBS_DIR (first run only)"
  local started=$SECONDS tmp="$CACHE_DIR/libs.tmp.$$"
  mkdir -p "$CACHE_DIR"
  rm -rf "$tmp"
  # shellcheck disable=SC2086 # KAFKA_MVN_ARGS is a list of words on purpose
  mvn -q -B -Dstyle.color=never -f "$POM" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$tmp" ${KAFKA_MVN_ARGS:-} >"$CACHE_DIR/mvn.log" 2>&1 || {
    cat "$CACHE_DIR/mvn.log" >&2
    rm -rf "$tmp"
    die "Maven could not resolve org.apache.kafka:kafka_2.13:$KAFKA_VERSION (output above, in $CACHE_DIR/mvn.log)"
  }
  ls "$tmp"/kafka_2.13-"$KAFKA_VERSION".jar >/dev/null || die "kafka_2.13-$KAFKA_VERSION.jar missing after Maven ran"
  pom_digest >"$tmp/.complete"
  rm -rf "$LIBS_DIR"
  # Another start racing on the same cache may have won: then keep its copy.
  mv -T "$tmp" "$LIBS_DIR" 2>/dev/null || rm -rf "$tmp"
  log "jars ready ($(find "$LIBS_DIR" -name '*.jar' | wc -l) jars, $((SECONDS - started)) s)"
}

# The SASL_SSL listener's key material, made once per state dir: a CA of its own and a certificate for $HOST
# (IP and DNS names) that it signs, in a PKCS12 keystore whose password is kept next to it.
make_tls() {
  [[ -f "$TLS_DIR/broker.p12" ]] && return 0
  command -v openssl >/dev/null || die "openssl not found (KAFKA_SASL_SSL_PORT needs it for the listener's certificate)"
  local tmp="$TLS_DIR.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  head -c 18 /dev/urandom | base64 | tr -d '+/=\n' >"$tmp/keystore.password"
  {
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=a2a-platform test Kafka CA" \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
      -keyout "$tmp/ca.key" -out "$tmp/ca.crt" &&
      openssl req -newkey rsa:2048 -nodes -subj "/CN=$HOST" -keyout "$tmp/broker.key" -out "$tmp/broker.csr" &&
      printf 'subjectAltName=IP:%s,DNS:localhost\nextendedKeyUsage=serverAuth\n' "$HOST" >"$tmp/broker.ext" &&
      openssl x509 -req -days 30 -in "$tmp/broker.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" \
        -CAcreateserial -extfile "$tmp/broker.ext" -out "$tmp/broker.crt" &&
      openssl pkcs12 -export -name broker -in "$tmp/broker.crt" -inkey "$tmp/broker.key" \
        -certfile "$tmp/ca.crt" -passout "file:$tmp/keystore.password" -out "$tmp/broker.p12"
  } >"$LOG_DIR/tls.log" 2>&1 || {
    cat "$LOG_DIR/tls.log" >&2
    rm -rf "$tmp"
    die "making the SASL_SSL listener's certificate failed"
  }
  rm -rf "$TLS_DIR"
  mv "$tmp" "$TLS_DIR"
  log "SASL_SSL listener: certificate for $HOST signed by the CA $TLS_DIR/ca.crt"
}

write_config() {
  mkdir -p "$STATE_DIR" "$DATA_DIR" "$LOG_DIR"
  local listeners="PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CONTROLLER_PORT"
  local advertised="PLAINTEXT://$HOST:$PORT" protocols="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
  if [[ -n "$SASL_SSL_PORT" ]]; then
    listeners+=",SECURE://$HOST:$SASL_SSL_PORT"
    advertised+=",SECURE://$HOST:$SASL_SSL_PORT"
    protocols+=",SECURE:SASL_SSL"
  fi
  cat >"$CONFIG" <<EOF
# Written by scripts/kafka/broker.sh on every start; edit the script, not this file.
# Single-node KRaft cluster: this process is both broker and controller.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$CONTROLLER_PORT
listeners=$listeners
advertised.listeners=$advertised
listener.security.protocol.map=$protocols
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
log.dirs=$DATA_DIR
auto.create.topics.enable=true
num.partitions=3
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=3
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
delete.topic.enable=true
log.retention.hours=24
log.segment.bytes=67108864
num.network.threads=2
num.io.threads=4
EOF
  if [[ -n "$SASL_SSL_PORT" ]]; then
    make_tls
    cat >>"$CONFIG" <<EOF
# KAFKA_SASL_SSL_PORT: clients of the SECURE listener log in with SCRAM-SHA-512 over TLS and need ACLs; the
# plaintext and controller listeners' anonymous principal (this broker itself, test administration) does not.
listener.name.secure.sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.secure.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.secure.ssl.keystore.type=PKCS12
listener.name.secure.ssl.keystore.location=$TLS_DIR/broker.p12
listener.name.secure.ssl.keystore.password=$(cat "$TLS_DIR/keystore.password")
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:ANONYMOUS
EOF
  fi
  cat >"$LOG4J_CONFIG" <<EOF
# Written by scripts/kafka/broker.sh on every start.
status = warn
appender.file.type = RollingFile
appender.file.name = file
appender.file.fileName = $LOG_DIR/server.log
appender.file.filePattern = $LOG_DIR/server.log.%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 20MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 3
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.request.name = kafka.request.logger
logger.request.level = warn
logger.authorizer.name = kafka.authorizer.logger
logger.authorizer.level = warn
EOF
}

format_storage() {
  if [[ -f "$DATA_DIR/meta.properties" ]]; then
    return 0
  fi
  local java cluster_id=""
  java="$(java_cmd)"
  # A random cluster id in Kafka's form (16 random bytes, URL-safe base64 without padding), not starting
  # with '-' so that no command line mistakes it for an option (what `kafka-storage random-uuid` does).
  while [[ ${#cluster_id} != 22 || "$cluster_id" == -* ]]; do
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  done
  # SCRAM credentials are metadata records: in KRaft they are written with the storage, before the first start.
  local scram=() user
  if [[ -n "$SASL_SSL_PORT" ]]; then
    # shellcheck disable=SC2086 # a list of words on purpose
    for user in ${KAFKA_SCRAM_USERS:-}; do
      [[ "$user" == ?*:?* ]] || die "KAFKA_SCRAM_USERS: '${user%%:*}…' is not name:password"
      scram+=(--add-scram "SCRAM-SHA-512=[name=${user%%:*},password=${user#*:}]")
    done
  fi
  log "formatting KRaft storage in $DATA_DIR (cluster id $cluster_id)"
  "$java" -Xmx256m -Dlog4j2.configurationFile="$LOG4J_CONFIG" -cp "$LIBS_DIR/*" \
    kafka.tools.StorageTool format --config "$CONFIG" --cluster-id "$cluster_id" --ignore-formatted \
    "${scram[@]}" >"$LOG_DIR/format.log" 2>&1 || {
    cat "$LOG_DIR/format.log" >&2
    die "formatting the storage failed"
  }
}

launch() {
  local java
  java="$(java_cmd)"
  # A session of its own, so the broker outlives the shell that started it; the inner shell writes its pid
  # and then becomes the JVM, so the pid file holds the broker's pid.
  # shellcheck disable=SC2016,SC2086 # $$ expands in the inner shell; HEAP_OPTS is a list of words on purpose
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$PID_FILE" \
    "$java" $HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
    -Djava.awt.headless=true -Dkafka.logs.dir="$LOG_DIR" -Dlog4j2.configurationFile="$LOG4J_CONFIG" \
    -cp "$LIBS_DIR/*" kafka.Kafka "$CONFIG" \
    </dev/null >"$LOG_DIR/stdout.log" 2>&1 &
  local _
  for _ in $(seq 1 50); do
    [[ -s "$PID_FILE" ]] && break
    sleep 0.1
  done
}

# Ready = the port accepts connections and the broker answers DescribeCluster + Metadata requests. The probe
# (Ready.java) uses only the public Admin API of the broker's own kafka-clients jar, so it needs no Node modules
# and survives Kafka moving its command-line tools between releases. Compiled once per jar cache.
compile_probe() {
  PROBE_DIR="$CACHE_DIR/probe-$(sha256sum "$SCRIPT_DIR/Ready.java" | cut -c1-12)"
  [[ -f "$PROBE_DIR/Ready.class" ]] && return 0
  local javac
  javac="$(dirname "$(readlink -f "$(java_cmd)")")/javac"
  [[ -x "$javac" ]] || javac="$(command -v javac || true)"
  if [[ -z "$javac" ]]; then
    log "javac not found: readiness is checked by the open port only"
    PROBE_DIR=""
    return 0
  fi
  rm -rf "$PROBE_DIR.tmp"
  mkdir -p "$PROBE_DIR.tmp"
  "$javac" -nowarn -d "$PROBE_DIR.tmp" -cp "$LIBS_DIR/*" "$SCRIPT_DIR/Ready.java" || die "compiling Ready.java failed"
  rm -rf "$PROBE_DIR"
  mv "$PROBE_DIR.tmp" "$PROBE_DIR"
}

metadata_ok() { # seconds
  [[ -n "${PROBE_DIR:-}" ]] || return 0
  "$(java_cmd)" -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dlog4j2.level=off \
    -cp "$PROBE_DIR:$LIBS_DIR/*" Ready "$HOST:$PORT" "$1"
}

show_errors() {
  {
    echo "--- errors in $LOG_DIR/server.log:"
    grep -E '^\[[^]]*\] (ERROR|FATAL)' "$LOG_DIR/server.log" 2>/dev/null | tail -n 15 | cut -c1-400
    echo "--- end of $LOG_DIR/stdout.log:"
    tail -n 15 "$LOG_DIR/stdout.log" 2>/dev/null
  } >&2 || true
}

wait_ready() { # pid
  local pid="$1" deadline=$((SECONDS + START_TIMEOUT))
  while ((SECONDS < deadline)); do
    if ! pid_alive "$pid"; then
      show_errors
      rm -f "$PID_FILE"
      die "the broker exited during start-up (logs: $LOG_DIR)"
    fi
    if port_open "$HOST" "$PORT" && { [[ -z "$SASL_SSL_PORT" ]] || port_open "$HOST" "$SASL_SSL_PORT"; }; then
      local left=$((deadline - SECONDS))
      if metadata_ok $((left < 30 ? (left < 1 ? 1 : left) : 30)) >/dev/null 2>"$LOG_DIR/ready.log"; then
        return 0
      fi
    fi
    sleep 1
  done
  show_errors
  cat "$LOG_DIR/ready.log" >&2 2>/dev/null || true
  die "the broker (pid $pid) was not ready within ${START_TIMEOUT} s (logs: $LOG_DIR); it is still running, 'stop' ends it"
}

smoke() {
  [[ "${KAFKA_SMOKE:-1}" == 1 ]] || return 0
  if [[ ! -d "$REPO_DIR/node_modules/kafkajs" ]] || ! command -v node >/dev/null; then
    log "smoke test skipped (Node client not installed yet: npm ci)"
    return 0
  fi
  KAFKA_BROKERS="$HOST:$PORT" node "$SCRIPT_DIR/smoke.mjs" || die "smoke test failed against $HOST:$PORT"
}

# The Testcontainers fallback (libs/testing/src/kafka.ts) must run the same version as this broker.
check_version_pins() {
  local ts="$REPO_DIR/libs/testing/src/kafka.ts"
  if [[ -f "$ts" ]] && ! grep -q "KAFKA_VERSION = '$KAFKA_VERSION'" "$ts"; then
    log "warning: $ts does not pin KAFKA_VERSION = '$KAFKA_VERSION' like scripts/kafka/pom.xml"
  fi
}

# --- commands -----------------------------------------------------------------------------------------------

cmd_start() { # [--optional]
  local pid started=$SECONDS missing
  if [[ "${1:-}" == --optional ]]; then
    missing="$(missing_tools)"
    if [[ -n "$missing" ]]; then
      log "not started: $missing; the platform runs without Kafka unless a broker answers at KAFKA_BROKERS"
      return 0
    fi
  fi
  check_version_pins
  if pid="$(our_pid)"; then
    if port_open "$HOST" "$PORT"; then
      log "already running: Kafka $KAFKA_VERSION (pid $pid) on $HOST:$PORT"
      return 0
    fi
    log "pid $pid is starting; waiting for it"
    compile_probe
    wait_ready "$pid"
    log "ready on $HOST:$PORT (pid $pid)"
    return 0
  fi
  if port_open "$HOST" "$PORT"; then
    local other
    other="$(listener_pid)"
    if [[ -n "$other" && "$(cmdline "$other")" == *" kafka.Kafka "* ]]; then
      # Only the default broker adopts a foreign one. A caller that asked for a state dir of its own wants a
      # broker that its 'stop' ends, never another one (say this checkout's default broker).
      [[ "$STATE_DIR" == "$DEFAULT_STATE_DIR" ]] ||
        die "$HOST:$PORT is served by another Kafka broker (pid $other:" \
          "$(cmdline "$other" | grep -o 'kafka.Kafka .*')); choose another KAFKA_PORT for $STATE_DIR"
      log "a Kafka broker not started with $CONFIG already serves $HOST:$PORT (pid $other); using it"
      log "('stop' here will not end it: $(cmdline "$other" | grep -o 'kafka.Kafka .*'))"
      return 0
    fi
    die "$HOST:$PORT is taken by another program${other:+ (pid $other: $(cmdline "$other" | cut -c1-120))}"
  fi
  if port_open "$HOST" "$CONTROLLER_PORT"; then
    die "the controller port $HOST:$CONTROLLER_PORT is taken by another program (set KAFKA_CONTROLLER_PORT)"
  fi
  if [[ -n "$SASL_SSL_PORT" ]] && port_open "$HOST" "$SASL_SSL_PORT"; then
    die "the SASL_SSL port $HOST:$SASL_SSL_PORT is taken by another program (set KAFKA_SASL_SSL_PORT)"
  fi
  rm -f "$PID_FILE"
  resolve_classpath
  compile_probe
  write_config
  format_storage
  log "starting Kafka $KAFKA_VERSION on $HOST:$PORT (logs: $LOG_DIR/server.log)"
  launch
  pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  [[ -n "$pid" ]] || die "the broker process did not start (see $LOG_DIR/stdout.log)"
  wait_ready "$pid"
  log "ready on $HOST:$PORT${SASL_SSL_PORT:+ and SASL_SSL $HOST:$SASL_SSL_PORT} (pid $pid, $((SECONDS - started)) s)"
  smoke
}

cmd_stop() {
  local pid
  if ! pid="$(our_pid)"; then
    rm -f "$PID_FILE"
    log "not running (from $STATE_DIR)"
    return 0
  fi
  log "stopping pid $pid (SIGTERM, up to ${STOP_TIMEOUT} s)"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + STOP_TIMEOUT))
  while pid_alive "$pid" && ((SECONDS < deadline)); do
    sleep 0.5
  done
  if pid_alive "$pid"; then
    log "still alive after ${STOP_TIMEOUT} s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while pid_alive "$pid"; do sleep 0.2; done
  fi
  rm -f "$PID_FILE"
  log "stopped"
}

cmd_status() {
  local pid
  if pid="$(our_pid)"; then
    if port_open "$HOST" "$PORT"; then
      log "running: Kafka $KAFKA_VERSION, pid $pid, $HOST:$PORT accepts connections"
    else
      log "running: Kafka $KAFKA_VERSION, pid $pid, $HOST:$PORT not accepting yet"
    fi
    log "config $CONFIG, data $DATA_DIR, logs $LOG_DIR, jars $LIBS_DIR"
    return 0
  fi
  if port_open "$HOST" "$PORT"; then
    log "not started from $STATE_DIR, but something listens on $HOST:$PORT"
    return 3
  fi
  log "not running"
  return 3
}

case "${1:-}" in
  start)
    [[ -z "${2:-}" || "${2:-}" == --optional ]] || {
      echo "usage: $0 start [--optional]" >&2
      exit 2
    }
    cmd_start "${2:-}"
    ;;
  stop) cmd_stop ;;
  restart)
    cmd_stop
    cmd_start
    ;;
  status) cmd_status ;;
  *)
    echo "usage: $0 start [--optional]|stop|restart|status" >&2
    exit 2
    ;;
esac
