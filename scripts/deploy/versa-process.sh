#!/usr/bin/env bash
# One process of a Versa deployment on several machines (README, "Several machines"):
#
#   scripts/deploy/versa-process.sh api      serves HTTP on HOST:PORT and enqueues jobs; runs none
#   scripts/deploy/versa-process.sh worker   runs the queue's jobs (generation, auto-annotate, training, …); no HTTP
#
# Every process shares PostgreSQL (DATABASE_URL), Redis (REDIS_URL) and the bucket (BLOB_STORE=s3://…, with S3_* and
# AWS_* as the README lists) and nothing else: DATA_DIR is this machine's scratch space (spooled uploads, unpacked
# imports, training runs), never shared. Settings come from the environment, or from the file VERSA_ENV_FILE names
# (KEY=value lines, e.g. /etc/versa/versa.env). The script checks them and replaces itself with the server, so a
# supervisor (scripts/deploy/versa@.service) sees the server's pid, restarts it, and stops it with SIGTERM (running
# jobs finish or go back to the queue within SHUTDOWN_TIMEOUT_S). It runs dist/server.js when built (`npm run build`),
# the TypeScript sources otherwise (or with VERSA_FROM_SOURCE=1).
set -euo pipefail

role=${1:-}
case "$role" in
  api | worker) ;;
  *) echo "usage: $0 api|worker" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../.."
if [ -n "${VERSA_ENV_FILE:-}" ]; then
  set -a
  # shellcheck disable=SC1090
  . "$VERSA_ENV_FILE"
  set +a
fi
for name in DATABASE_URL REDIS_URL BLOB_STORE; do
  if [ -z "${!name:-}" ]; then
    echo "versa-process: $name is not set: processes on several machines share PostgreSQL, Redis and a bucket" >&2
    exit 2
  fi
done
case "$BLOB_STORE" in
  s3://*) ;;
  *) echo "versa-process: BLOB_STORE must be s3://bucket/prefix: a local folder is one machine's" >&2; exit 2 ;;
esac
export VERSA_ROLE=$role
export DATA_DIR=${DATA_DIR:-/var/lib/versa}

if [ -f dist/server.js ] && [ "${VERSA_FROM_SOURCE:-0}" != 1 ]; then
  exec node --max-semi-space-size=32 dist/server.js
fi
exec node --max-semi-space-size=32 --import tsx src/server.ts
