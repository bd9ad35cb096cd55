#!/usr/bin/env bash
# A throwaway S3 server for the tests: Ceph's radosgw on a one-node cluster (one monitor, one OSD on memstore, no mgr)
# whose state lives in RAM and in a scratch folder under /tmp, recreated by every start. Needs Debian's ceph-mon,
# ceph-osd, radosgw and ceph-common (.ci/run installs them). The facts and traps behind each setting: issue 27.
#
#   scripts/s3-test-server.sh start        starts one; prints the environment to use (`eval "$(… start)"`)
#   scripts/s3-test-server.sh stop DIR     stops the one whose scratch folder is DIR (S3_TEST_SERVER_DIR)
#   scripts/s3-test-server.sh run CMD …    starts one, runs CMD with its environment, stops it; exits with CMD's status
set -euo pipefail
shopt -s inherit_errexit

log() { echo "s3-test-server: $*" >&2; }

free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
  log "no free port found"; return 1
}

# Waits up to $1 tenths of a second for the command after it to succeed.
wait_for() {
  local tries=$1; shift
  for _ in $(seq "$tries"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}

stop() {
  local dir=$1
  [ -d "$dir/run" ] || { log "$dir is not a test server's folder"; return 1; }
  # SIGKILL: SIGTERM makes memstore dump its RAM to disk (seconds per daemon), and nothing is kept anyway. The daemons
  # fork and are re-parented, so they are found by their pid files only.
  for pidfile in "$dir"/run/*.pid; do
    [ -f "$pidfile" ] && kill -KILL "$(cat "$pidfile")" 2>/dev/null || true
  done
  rm -rf "$dir"
}

start() {
  for tool in monmaptool ceph-mon ceph-osd ceph radosgw radosgw-admin uuidgen curl; do
    command -v "$tool" >/dev/null || { log "$tool is missing (apt-get install ceph-mon ceph-osd radosgw ceph-common uuid-runtime curl)"; return 1; }
  done
  local dir mon_port rgw_port fsid osd_uuid osd_id
  dir=$(mktemp -d /tmp/versa-s3.XXXXXX)
  mkdir -p "$dir"/{run,log,mon,osd,rgw}
  # A failed start shows the daemons' logs and leaves nothing running.
  trap 'log "could not start; its logs:"; tail -n 20 "$dir"/log/* >&2 || true; stop "$dir" 2>/dev/null || true' ERR
  mon_port=$(free_port)
  rgw_port=$(free_port)
  fsid=$(uuidgen)
  export CEPH_CONF="$dir/ceph.conf"
  cat >"$CEPH_CONF" <<EOF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$mon_port
mon initial members = a
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr2 = false
auth cluster required = none
auth service required = none
auth client required = none
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
pid file = $dir/run/\$name.pid
mon cluster log to file = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
mon data avail warn = 1
mon data avail crit = 0
osd objectstore = memstore
memstore page set = false
osd data = $dir/osd
mon data = $dir/mon
# With auth off, updating the crush map at boot makes the OSD die ("wrong fsid"): it is added by hand below.
osd crush update on start = false
osd class update on start = false
paxos propose interval = 0.05
paxos min wait = 0.01

[client.rgw]
# Without tcp_nodelay every GET with a body waits ~45 ms.
rgw frontends = beast endpoint=127.0.0.1:$rgw_port tcp_nodelay=1
rgw data = $dir/rgw
rgw thread pool size = 64
# Deleted data is collected at once (the default keeps it in RAM for two hours).
rgw gc obj min wait = 0
rgw gc processor period = 5
EOF
  monmaptool --create --fsid "$fsid" --addv a "[v1:127.0.0.1:$mon_port]" "$dir/monmap" >/dev/null
  ceph-mon --mkfs -i a --monmap "$dir/monmap" >/dev/null
  ceph-mon -i a 2>>"$dir/log/start.log"
  osd_uuid=$(uuidgen)
  # Every ceph call has a timeout: commands a mgr would serve hang forever here.
  osd_id=$(timeout 30 ceph osd new "$osd_uuid")
  ceph-osd -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" >/dev/null 2>&1
  timeout 30 ceph osd crush add "osd.$osd_id" 1 root=default >/dev/null 2>&1
  ceph-osd -i "$osd_id" 2>>"$dir/log/start.log"
  wait_for 300 sh -c "timeout 5 ceph osd dump | grep -q '^osd.$osd_id up'" || { log "the OSD did not come up"; false; }
  # radosgw's pools made up front (in one ceph process): left to radosgw, start-up takes seconds longer.
  {
    for pool in .rgw.root default.rgw.log default.rgw.control default.rgw.meta default.rgw.buckets.index default.rgw.buckets.data default.rgw.buckets.non-ec; do
      echo "osd pool create $pool 8"
      echo "osd pool application enable $pool rgw"
    done
  } | timeout 60 ceph >/dev/null 2>&1
  radosgw -n client.rgw 2>>"$dir/log/start.log"
  wait_for 300 curl -sf "http://127.0.0.1:$rgw_port/" || { log "radosgw did not answer"; false; }
  local key secret
  key=$(head -c 10 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F)
  secret=$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
  timeout 30 radosgw-admin user create --uid versa-test --display-name versa-test --access-key "$key" --secret-key "$secret" >/dev/null
  trap - ERR
  cat <<EOF
export S3_TEST_SERVER_DIR=$dir
export S3_ENDPOINT=http://127.0.0.1:$rgw_port
export S3_REGION=us-east-1
export S3_FORCE_PATH_STYLE=1
export S3_CHECKSUMS=WHEN_REQUIRED
export AWS_ACCESS_KEY_ID=$key
export AWS_SECRET_ACCESS_KEY=$secret
EOF
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:?usage: $0 stop DIR}" ;;
  run)
    shift
    [ $# -gt 0 ] || { echo "usage: $0 run CMD ..." >&2; exit 2; }
    env_lines=$(start)
    eval "$env_lines"
    trap 'stop "$S3_TEST_SERVER_DIR"' EXIT
    log "S3 at $S3_ENDPOINT (folder $S3_TEST_SERVER_DIR)"
    status=0
    "$@" || status=$?
    exit "$status"
    ;;
  *) echo "usage: $0 start | stop DIR | run CMD ..." >&2; exit 2 ;;
esac
