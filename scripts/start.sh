#!/usr/bin/env bash
# npm start: builds, starts the local Kafka broker where Java is installed (scripts/kafka/broker.sh), then
# runs the whole platform in one process (apps/standalone), with logs for people (LOG_FORMAT=pretty unless
# set). Postgres, Kafka and Redis are chosen or switched off by the process itself (README "Running on a
# laptop").
#
#   npm start                  # build, then run
#   npm start -- --no-build    # run the build output as it is (test/e2e/laptop.e2e.spec.ts builds first)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=1
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    *)
      echo "usage: npm start [-- --no-build]" >&2
      exit 2
      ;;
  esac
done

if ((build)); then
  npm run build
fi
bash scripts/kafka/broker.sh start --optional
export LOG_FORMAT="${LOG_FORMAT:-pretty}"
exec node dist/apps/standalone/src/main.js
