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

# A local secret made once and kept in .data/<file> (gitignored, readable by this user only): <bytes> random
# bytes in <encoding> (base64url, base64).
local_secret() {
  node -e '
    const [file, bytes, encoding] = process.argv.slice(1);
    const fs = require("node:fs");
    fs.mkdirSync(".data", { recursive: true });
    if (!fs.existsSync(file) || fs.readFileSync(file, "utf8").trim() === "") {
      fs.writeFileSync(file, require("node:crypto").randomBytes(Number(bytes)).toString(encoding), { mode: 0o600 });
    }
    process.stdout.write(fs.readFileSync(file, "utf8").trim());
  ' ".data/$1" "$2" "$3"
}

# The web console's operator face signs in with a platform-admin token. Without ADMIN_BOOTSTRAP_TOKEN, a local
# one is kept in .data/admin-token.
if [[ -z "${ADMIN_BOOTSTRAP_TOKEN:-}" ]]; then
  ADMIN_BOOTSTRAP_TOKEN="$(local_secret admin-token 24 base64url)"
  export ADMIN_BOOTSTRAP_TOKEN
  echo "web console: operators sign in with the token in .data/admin-token; the playground takes a tenant API key (demo-key)"
fi
# Imported A2A agents (docs/upstream.md): their secrets are sealed with UPSTREAM_SECRETS_KEY; without one, a local
# key is kept in .data/upstream-secrets.key. The example A2A server runs beside the platform on 127.0.0.1,
# which the demo tenant may reach (UPSTREAM_ALLOWLIST), and is imported as demo/upstream-example.
if [[ -z "${UPSTREAM_SECRETS_KEY:-}" ]]; then
  UPSTREAM_SECRETS_KEY="$(local_secret upstream-secrets.key 32 base64)"
  export UPSTREAM_SECRETS_KEY
fi
export UPSTREAM_ALLOWLIST="${UPSTREAM_ALLOWLIST:-{\"${DEMO_TENANT:-demo}\":[\"127.0.0.1\"]\}}"
export START_BRIDGE="${START_BRIDGE:-true}"
export START_UPSTREAM_EXAMPLE="${START_UPSTREAM_EXAMPLE:-true}"
exec node dist/apps/standalone/src/main.js
