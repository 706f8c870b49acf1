#!/usr/bin/env bash
# A single-node Apache Kafka 4.1 (KRaft, broker + controller in one process) on loopback, assembled
# from Maven Central jars. State lives in .local/kafka/ (libs, data, server.properties, pid, log;
# all but libs under $RUMMY_STATE_DIR/kafka/ when that is set).
#
#   bash deploy/local/kafka.sh fetch    copy the broker's jars into .local/kafka/libs (once)
#   bash deploy/local/kafka.sh start    fetch, format storage (once), start, wait for a metadata round trip
#   bash deploy/local/kafka.sh stop     stop the broker this checkout started
#   bash deploy/local/kafka.sh status   exit 0 when a broker answers on the port, 3 otherwise
#   bash deploy/local/kafka.sh pid      print the pid of the broker this checkout started (3: none)
#   bash deploy/local/kafka.sh reset    stop, and delete every topic (the data folder); jars stay
#   bash deploy/local/kafka.sh acls [PREFIX]   (secured) make the ACLs of the topic prefix PREFIX
#
# With KAFKA_BOOTSTRAP_SERVERS naming another cluster, start/status only check that it answers.
#
# RUMMY_KAFKA_SECURE=1 (opt-in, issue 32): the client port is a SASL_SSL listener (TLS with the
# `kafka` certificate of `rummy certs`' CA in $RUMMY_CERTS_DIR, default .local/certs; SASL
# SCRAM-SHA-512), the controller port a loopback SSL listener that requires a client certificate
# of that CA; StandardAuthorizer with allow.everyone.if.no.acl.found=false, User:kafka (the
# broker itself) the only super user. Storage is formatted with one SCRAM user per service plus
# `ops` and `kafka` (rummy_platform.eventlog.kafka_acls.SCRAM_USERS), each password generated on
# first use into $STATE/kafka/credentials/<user>.password (0600); after each start the ACLs of
# kafka_acls.GRANTS are made for the topic prefix $RUMMY_TOPIC_PREFIX (default none). A data
# folder formatted without SCRAM users cannot be secured: `reset` it first.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KAFKA_DIR="$STATE/kafka"
LIBS="$ROOT/.local/kafka/libs"  # shared by every state folder of this checkout
DATA="$KAFKA_DIR/data"
PROPS="$KAFKA_DIR/server.properties"
PIDFILE="$KAFKA_DIR/broker.pid"
LOG="$KAFKA_DIR/broker.log"
POM="$LOCAL_DIR/kafka/pom.xml"
READY_TIMEOUT_S="${RUMMY_KAFKA_READY_TIMEOUT:-120}"
SECURE="${RUMMY_KAFKA_SECURE:-0}"
CERTS="${RUMMY_CERTS_DIR:-$ROOT/.local/certs}"
CREDENTIALS="$KAFKA_DIR/credentials"
KEYSTORE="$KAFKA_DIR/keystore.pem"
SECURED_MARK="$DATA/rummy-scram-users"  # written once storage was formatted with SCRAM users
SCRAM="SCRAM-SHA-512"

secure() { [ "$SECURE" = 1 ]; }
security_py() { "$PYTHON" "$LOCAL_DIR/kafka_security.py" "$@"; }
# broker_ready ADDRESS TIMEOUT: a metadata round trip (as the broker's super user when secured).
broker_ready() {
  if secure; then
    security_py ready "$1" --credentials "$CREDENTIALS" --ca "$CERTS/ca.pem" --timeout "$2"
  else
    ready kafka "$1" "$2"
  fi
}

external() { [ -n "${KAFKA_BOOTSTRAP_SERVERS:-}" ] && [ "$KAFKA_BOOTSTRAP_SERVERS" != "$LOCAL_KAFKA_BOOTSTRAP" ]; }

require_java() {
  command -v java >/dev/null || die "Java not found: Kafka 4.1 needs a Java 17+ runtime (Debian: apt-get install -y openjdk-17-jre-headless)"
  local major
  major="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p')"
  [ "${major:-0}" -ge 17 ] || die "Java ${major:-?} found, Kafka 4.1 needs Java 17+ (set PATH or JAVA_HOME to a newer one)"
}

# The jar set is keyed by the pom's content, so editing the pom (e.g. a new Kafka version) refetches.
libs_stamp() { echo "$LIBS/.fetched-$(sha256sum "$POM" | cut -c1-16)"; }

fetch() {
  local stamp; stamp="$(libs_stamp)"
  if [ -f "$stamp" ]; then say "kafka: jars present in ${LIBS#"$ROOT"/}"; return; fi
  require_java
  command -v mvn >/dev/null || die "Maven not found: the broker's jars come from Maven Central through mvn (Debian: apt-get install -y maven)"
  say "kafka: fetching the broker's jars from Maven Central (mvn dependency:copy-dependencies)"
  local tmp="$KAFKA_DIR/libs.tmp"
  rm -rf "$tmp"; mkdir -p "$KAFKA_DIR"
  # -B and style.color=never turn Maven's colours off, yet Maven 3.8's jansi still writes a reset
  # (ESC[0m) before its messages unless jansi.noreset; plain_text strips whatever escape is left.
  MAVEN_OPTS="-Djansi.noreset=true ${MAVEN_OPTS:-}" \
    mvn -B -q -Dstyle.color=never -f "$POM" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" 2>&1 \
    | plain_text || die "mvn could not fetch the Kafka jars (see its output above)"
  rm -rf "$LIBS"; mkdir -p "$(dirname "$LIBS")"; mv "$tmp" "$LIBS"; touch "$stamp"
  say "kafka: $(ls "$LIBS"/*.jar | wc -l) jars in ${LIBS#"$ROOT"/}"
}

listener_config() {
  if ! secure; then
    cat <<PROPS
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
PROPS
    return
  fi
  local broker_password; broker_password="$(head -n 1 "$CREDENTIALS/kafka.password")"
  cat <<PROPS
# Secured (RUMMY_KAFKA_SECURE=1): clients and the broker itself over SASL_SSL (SCRAM), the
# controller over SSL with a client certificate of the CA (principal: its common name).
listeners=SASL_SSL://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=SASL_SSL://127.0.0.1:$KAFKA_PORT
inter.broker.listener.name=SASL_SSL
listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:SSL
sasl.enabled.mechanisms=$SCRAM
sasl.mechanism.inter.broker.protocol=$SCRAM
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="kafka" password="$broker_password";
ssl.keystore.type=PEM
ssl.keystore.location=$KEYSTORE
ssl.truststore.type=PEM
ssl.truststore.location=$CERTS/ca.pem
listener.name.controller.ssl.client.auth=required
ssl.principal.mapping.rules=RULE:^CN=([^,]+)\$/\$1/,DEFAULT
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:kafka
PROPS
}

write_config() {
  mkdir -p "$DATA"
  # umask 077: when secured the file holds the broker's own SCRAM password.
  (umask 077; cat > "$PROPS") <<PROPS
# Written by deploy/local/kafka.sh on every start; edit the script, not this file.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
controller.listener.names=CONTROLLER
$(listener_config)
log.dirs=$DATA

# One node: every internal topic has one replica, or consumer groups and transactions hang.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
default.replication.factor=1
min.insync.replicas=1
num.partitions=1

# Topics are created explicitly by the services, with their partition counts and retention.
auto.create.topics.enable=false
group.initial.rebalance.delay.ms=0
log.cleaner.dedupe.buffer.size=16777216
PROPS
}

format_once() {
  if [ -f "$DATA/meta.properties" ]; then
    if secure && [ ! -f "$SECURED_MARK" ]; then
      die "${DATA#"$ROOT"/} was formatted without SCRAM users: 'bash deploy/local/kafka.sh reset' (deletes every topic), then start with RUMMY_KAFKA_SECURE=1"
    fi
    return
  fi
  local cluster_id scram=() file
  cluster_id="$(java -cp "$LIBS/*" kafka.tools.StorageTool random-uuid)"
  if secure; then
    # The passwords go on this short-lived tool's command line (StorageTool reads them nowhere
    # else), never on the broker's.
    for file in "$CREDENTIALS"/*.password; do
      scram+=(--add-scram "$SCRAM=[name=$(basename "$file" .password),password=$(head -n 1 "$file")]")
    done
  fi
  say "kafka: formatting ${DATA#"$ROOT"/} (cluster id $cluster_id${scram:+, $(( ${#scram[@]} / 2 )) SCRAM users})"
  java -cp "$LIBS/*" kafka.tools.StorageTool format --cluster-id "$cluster_id" \
    --config "$PROPS" --ignore-formatted "${scram[@]}" >/dev/null
  if secure; then touch "$SECURED_MARK"; fi
}

# prepare_security: the CA and broker certificate, the PEM keystore, every user's password file.
prepare_security() {
  secure || return 0
  security_py prepare --certs "$CERTS" --credentials "$CREDENTIALS" --keystore "$KEYSTORE"
}

# make_acls PREFIX: the grants of rummy_platform.eventlog.kafka_acls for the topic prefix.
make_acls() {
  secure || die "acls: the broker is not secured (RUMMY_KAFKA_SECURE=1)"
  security_py acls "$LOCAL_KAFKA_BOOTSTRAP" --credentials "$CREDENTIALS" --ca "$CERTS/ca.pem" \
    --prefix "${1:-}"
}

our_pid() { [ -f "$PIDFILE" ] && pid_alive "$(cat "$PIDFILE")" && cat "$PIDFILE"; }

start() {
  if external; then
    say "kafka: KAFKA_BOOTSTRAP_SERVERS=$KAFKA_BOOTSTRAP_SERVERS names another cluster; only checking it"
    ready kafka "$KAFKA_BOOTSTRAP_SERVERS" 30 || die "no Kafka broker answers at $KAFKA_BOOTSTRAP_SERVERS"
    return
  fi
  local pid
  if pid="$(our_pid)"; then
    say "kafka: already running (pid $pid)"
    broker_ready "$LOCAL_KAFKA_BOOTSTRAP" "$READY_TIMEOUT_S" || die "kafka pid $pid does not answer; see $LOG"
    return
  fi
  if port_open "$KAFKA_PORT"; then
    if broker_ready "$LOCAL_KAFKA_BOOTSTRAP" 10; then
      say "kafka: a broker not started from this checkout already answers on $LOCAL_KAFKA_BOOTSTRAP; reusing it"
      return
    fi
    die "port $KAFKA_PORT is taken by something that is not a Kafka broker"
  fi
  port_open "$KAFKA_CONTROLLER_PORT" && die "controller port $KAFKA_CONTROLLER_PORT is already taken"
  require_venv
  fetch
  require_java
  prepare_security
  write_config
  format_once
  [ -f "$LOG" ] && mv -f "$LOG" "$LOG.1"
  say "kafka: starting on $LOCAL_KAFKA_BOOTSTRAP (controller 127.0.0.1:$KAFKA_CONTROLLER_PORT), log ${LOG#"$ROOT"/}"
  # The broker keeps a file open per partition segment, and every test run adds topics of its own
  # prefix: a developer's broker that had gathered ~20,000 partitions stopped with "Too many open
  # files" at this machine's limit of 20,000. Raise the soft limit as far as the hard limit lets
  # (in this sandbox both are 20,000, so nothing changes here); 'reset' clears gathered topics.
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
  # setsid: the broker outlives the shell (or test session) that started it; stop it with 'stop'.
  setsid java -Xms256m -Xmx1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExplicitGCInvokesConcurrent \
    -Djava.awt.headless=true -Dlog4j2.configurationFile="$LOCAL_DIR/kafka/log4j2.xml" \
    -cp "$LIBS/*" kafka.Kafka "$PROPS" </dev/null >"$LOG" 2>&1 9>&- &
  pid=$!
  echo "$pid" > "$PIDFILE"
  local t0=$SECONDS
  # The client port opens once the broker is unfenced: poll it cheaply (and notice an early exit),
  # then confirm with a real metadata round trip.
  while pid_alive "$pid" && ! port_open "$KAFKA_PORT" && [ $((SECONDS - t0)) -lt "$READY_TIMEOUT_S" ]; do
    sleep 0.2
  done
  if ! pid_alive "$pid" || ! broker_ready "$LOCAL_KAFKA_BOOTSTRAP" "$READY_TIMEOUT_S"; then
    pid_alive "$pid" || say "kafka: the broker exited; last lines of ${LOG#"$ROOT"/}:"
    tail -n 30 "$LOG" >&2
    die "kafka did not become ready in ${READY_TIMEOUT_S}s"
  fi
  say "kafka: ready after $((SECONDS - t0))s (pid $pid)"
  if secure; then make_acls "${RUMMY_TOPIC_PREFIX:-}"; fi
}

stop() {
  local pid
  if ! pid="$(our_pid)"; then
    rm -f "$PIDFILE"
    if port_open "$KAFKA_PORT"; then
      say "kafka: the broker on $LOCAL_KAFKA_BOOTSTRAP was not started from this checkout; leaving it running"
    else
      say "kafka: not running"
    fi
    return
  fi
  say "kafka: stopping pid $pid"
  kill -TERM "$pid"
  for _ in $(seq 1 60); do pid_alive "$pid" || break; sleep 0.5; done
  if pid_alive "$pid"; then say "kafka: still running after 30s, killing"; kill -KILL "$pid"; fi
  rm -f "$PIDFILE"
  say "kafka: stopped"
}

status() {
  local address="$LOCAL_KAFKA_BOOTSTRAP" pid
  external && address="$KAFKA_BOOTSTRAP_SERVERS"
  if broker_ready "$address" 0 >/dev/null 2>&1; then
    if pid="$(our_pid)"; then say "kafka: up at $address (pid $pid)"; else say "kafka: up at $address (not started from this checkout)"; fi
  else
    say "kafka: down ($address does not answer)"; return 3
  fi
}

case "${1:-}" in
  start|stop|fetch|reset|acls) lock kafka ;;
esac
case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  pid) our_pid || exit 3 ;;
  reset) stop; rm -rf "$DATA"; say "kafka: data deleted (formatted again on the next start)" ;;
  acls) make_acls "${2:-}" ;;
  *) die "usage: $0 {fetch|start|stop|status|pid|reset|acls [PREFIX]}" ;;
esac
