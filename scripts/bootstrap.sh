#!/usr/bin/env bash
# Sets up what geohook needs on a fresh machine, then runs it:
#   bootstrap.sh start [args]  -> geohook up (what `npm start` runs)
#   bootstrap.sh test  [args]  -> build, type-check, lint and the tap suite (what `npm test` runs)
#   bootstrap.sh bench [args]  -> the benchmark (`npm run bench`)
#   bootstrap.sh faults [args] -> the fault suite (`npm run test:faults`)
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:?usage: bootstrap.sh start|test|bench|faults [args]}"
shift

say() { printf 'geohook: %s\n' "$*" >&2; }

installed=0
install_dependencies() {
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    installed=1
    local started=$SECONDS
    say "installing dependencies (npm ci; about a minute on a fresh clone)"
    local log
    log="$(mktemp)"
    # npm's report goes to stderr: `npm run -s bench -- --json` keeps stdout for its JSON.
    if ! npm ci --no-audit --no-fund --loglevel=error 2>"$log" >&2; then
      # A registry mirror that lacks some other platform's optional packages (msgpackr-extract's) makes
      # the lock file look incomplete to `npm ci`; `npm install` honours the same pinned versions.
      say "npm ci refused the lock file ($( (grep -m1 'Missing' "$log" || grep -m1 'error' "$log") | sed 's/^npm error //')); using npm install"
      npm install --no-audit --no-fund --loglevel=error >&2
    fi
    rm -f "$log"
    say "dependencies installed in $((SECONDS - started)) s"
  fi
}

ensure_redis_server() {
  command -v redis-server >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "redis-server is missing: installing it with apt-get"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    return 0
  fi
  say "redis-server is missing. Install it (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis), or set REDIS_URL to a Redis you run."
  exit 1
}

# The mirror's tests start their own throwaway PostgreSQL cluster with PostGIS (test/helpers/postgres.ts), from
# the distribution's packages: the server (Debian's `postgresql` brings its newest major) and PostGIS for it.
postgis_installed() {
  local control
  for control in /usr/share/postgresql/*/extension/postgis.control; do
    [ -f "$control" ] && [ -x "/usr/lib/postgresql/$(basename "$(dirname "$(dirname "$control")")")/bin/initdb" ] && return 0
  done
  command -v pg_config >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1 && [ -f "$(pg_config --sharedir)/extension/postgis.control" ]
}

ensure_postgis() {
  postgis_installed && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "PostgreSQL with PostGIS is missing (the mirror's tests need it): installing it with apt-get"
    apt-get update -qq
    local major
    major="$(apt-cache depends postgresql 2>/dev/null | sed -nE 's/.*Depends: postgresql-([0-9]+)$/\1/p' | head -n 1)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql "postgresql-${major:-15}-postgis-3" >/dev/null
    return 0
  fi
  say "PostgreSQL with PostGIS is missing (the mirror's tests start their own cluster). Install it (Debian/Ubuntu: sudo apt-get install -y postgresql postgresql-15-postgis-3, the PostGIS package of the PostgreSQL major apt installs; macOS: brew install postgresql postgis)."
  exit 1
}

# The stream routes' tests start their own NATS server (with JetStream) and RabbitMQ node, as the mirror's start
# PostgreSQL: both brokers must be installed (Debian puts them in /usr/sbin).
broker_installed() {
  command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/local/sbin/$1" ]
}

ensure_brokers() {
  local missing=()
  broker_installed nats-server || missing+=(nats-server)
  broker_installed rabbitmq-server || missing+=(rabbitmq-server)
  [ "${#missing[@]}" = 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "${missing[*]} missing (the stream routes' tests start their own): installing with apt-get"
    apt-get update -qq
    # Installing rabbitmq-server starts the package's own node; the tests never use it (their node is private).
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    return 0
  fi
  say "${missing[*]} missing (the stream routes' tests start their own NATS server and RabbitMQ node). Install them (Debian/Ubuntu: sudo apt-get install -y nats-server rabbitmq-server; macOS: brew install nats-server rabbitmq)."
  exit 1
}

# The dashboard's browser test drives Chromium at /usr/bin/chromium; without it that test is skipped, so a
# failed install does not fail the bootstrap.
ensure_chromium() {
  [ -x /usr/bin/chromium ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "chromium is missing: installing it with apt-get (for the dashboard browser test)"
    local log
    log="$(mktemp)"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$log" 2>&1; then
      say "chromium could not be installed ($(tail -n 1 "$log")): the dashboard browser test will be skipped"
    fi
    rm -f "$log"
    return 0
  fi
  say "chromium is missing: the dashboard browser test will be skipped (install it: sudo apt-get install -y chromium)"
}

# dist/.built marks the last build: dist/ is up to date while no source, setting or dependency is newer.
build_needed() {
  [ -f dist/.built ] || return 0
  [ -n "$(find src scripts tsconfig.json package.json package-lock.json -newer dist/.built -print -quit)" ]
}

build() {
  local started=$SECONDS
  say "building dist/ (tsc)"
  rm -rf dist
  npm run --silent build
  touch dist/.built
  say "built in $((SECONDS - started)) s"
}

# The bench's mirror section measures GDAL's ogr2ogr copying the same layer as its peer; without GDAL that figure is
# reported as not measured, so a failed install does not stop the bench.
ensure_gdal() {
  command -v ogr2ogr >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "ogr2ogr is missing: installing gdal-bin with apt-get (the mirror's peer in the bench)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gdal-bin; } >/dev/null 2>&1 ||
      say "gdal-bin could not be installed: the bench reports the mirror's ogr2ogr peer as not measured"
    return 0
  fi
  say "ogr2ogr is missing: the bench reports the mirror's ogr2ogr peer as not measured (install it: sudo apt-get install -y gdal-bin)"
}

# Emits dist/ and the suite's dist-test/ without type-checking (`tsc --noCheck`), the two side by side: what the suite
# runs. The type-check and the lint then run beside the suite (check_in_background): nothing waits for them but the end.
emit_for_tests() {
  local started=$SECONDS dist_pid dist_status=0 test_status=0
  say "compiling dist/ and dist-test/ (tsc --noCheck; the type-check and lint run beside the tests)"
  rm -rf dist dist-test
  { npx tsc --noCheck && npm run --silent build:files && touch dist/.built; } &
  dist_pid=$!
  { npx tsc -p test --noCheck && npm run --silent build:test-files; } || test_status=$?
  wait "$dist_pid" || dist_status=$?
  if [ "$dist_status" -ne 0 ] || [ "$test_status" -ne 0 ]; then
    say "the TypeScript compiler could not emit (listed above)"
    echo "0 passed, 1 failed"
    return 1
  fi
  say "compiled in $((SECONDS - started)) s"
}

# The compiler's type-check of src, test, examples and harness (`tsc -p test --noEmit`), then the lint, into $1; fails
# when either does.
check_in_background() {
  local log="$1" status=0
  {
    if ! npx tsc -p test --noEmit --incremental false; then
      say "the TypeScript compiler failed (listed above)"
      status=1
    fi
    if ! npm run --silent lint; then
      say "lint failed: npm run format fixes the formatting and import order; the rest is listed above"
      status=1
    fi
  } >"$log" 2>&1
  return "$status"
}

# The suite (tap) with the type-check and lint beside it; one closing line for all three.
run_tests() {
  local log status=0 checks_log checks_pid checks_failed=0
  checks_log="$(mktemp)"
  check_in_background "$checks_log" &
  checks_pid=$!
  log="$(mktemp)"
  npx tap "$@" 2>&1 | tee "$log" || status=$?
  wait "$checks_pid" || checks_failed=1
  cat "$checks_log"
  rm -f "$checks_log"
  # CI reads a plain closing line; tap's own summary is `# { total: N, pass: P, fail: F, ... }`.
  local summary pass fail skip
  summary="$(grep -E '^# \{ total: ' "$log" | tail -n 1 || true)"
  rm -f "$log"
  if [ -z "$summary" ]; then
    say "tap printed no summary"
    echo "0 passed, 1 failed"
    return 1
  fi
  pass="$(sed -nE 's/.*pass: ([0-9]+).*/\1/p' <<<"$summary")"
  fail="$(sed -nE 's/.*fail: ([0-9]+).*/\1/p' <<<"$summary")"
  skip="$(sed -nE 's/.*skip: ([0-9]+).*/\1/p' <<<"$summary")"
  # A failed type-check or lint counts as one failure more.
  [ "$checks_failed" = 0 ] || fail=$((${fail:-0} + 1))
  echo "${pass:-0} passed, ${fail:-0} failed${skip:+, $skip skipped}"
  if [ "$status" -eq 0 ] && [ "${fail:-0}" -ne 0 ]; then status=1; fi
  if [ "$status" -ne 0 ] && [ "${fail:-0}" -eq 0 ]; then
    say "tap exited $status with no failing test: coverage is under the thresholds in package.json (tap section)"
  fi
  return "$status"
}

# Compiles the harness (and what it runs) and runs one of its programs.
run_harness() {
  local program="$1"
  shift
  install_dependencies
  ensure_redis_server
  # The bench's mirror section and the fault suite's mirror row start their own PostgreSQL.
  ensure_postgis
  ensure_brokers
  npx tsc -p harness && node scripts/copy-lua.mjs dist-harness/src
  exec node "dist-harness/harness/$program" "$@"
}

case "$mode" in
  start)
    install_dependencies
    [ -n "${REDIS_URL:-}" ] || ensure_redis_server
    # A second start in the same folder leaves the first one's dist/ alone, unless the sources changed.
    if build_needed; then build; fi
    exec node dist/cli.js up "$@"
    ;;
  test)
    ensure_redis_server
    ensure_postgis
    ensure_brokers
    # apt-get fetches and unpacks Chromium while npm installs and the code is built and checked.
    ensure_chromium &
    chromium_pid=$!
    install_dependencies
    # tap ships its test class built with every plugin; the first run after an install would rebuild it for the
    # plugins package.json names only after it had started every test file with the TypeScript and mock loaders
    # of the others, which slow each file's imports. Built now (beside the compilation), no test file loads them.
    tap_build_pid=""
    if [ "$installed" = 1 ]; then
      npx tap build >/dev/null &
      tap_build_pid=$!
    fi
    emit_for_tests || { wait "$chromium_pid"; exit 1; }
    wait "$chromium_pid"
    if [ -n "$tap_build_pid" ]; then wait "$tap_build_pid"; fi
    run_tests "$@"
    ;;
  bench)
    ensure_gdal
    run_harness bench/run.js "$@"
    ;;
  faults)
    # The fault suite runs `geohook serve` from dist/.
    install_dependencies
    if build_needed; then build; fi
    run_harness faults/run.js "$@"
    ;;
  *)
    say "unknown mode: $mode"
    exit 2
    ;;
esac
