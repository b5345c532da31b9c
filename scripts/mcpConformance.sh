#!/usr/bin/env bash
# `npm run test:conformance`: the MCP conformance suite against `swapeazi serve`'s streamable HTTP at /mcp.
#
# Starts the server on 127.0.0.1 and a free port (the OS picks it; MCP_CONFORMANCE_PORT pins one) with an in-memory
# store and nothing of the caller's SWAPEAZI_* or DATABASE_URL settings, waits for /api/v1/health, then runs each
# meaningful server scenario on its own; each must exit 0 (shared/reference/mcp.md section 3). The scenarios are
# server-initialize, ping, tools-list and dns-rebinding-protection, plus logging-set-level and resources-list when
# the server's initialize result declares logging or resources. The others need the reference "everything server"
# fixtures and say nothing about ours. The suite is the pinned devDependency @modelcontextprotocol/conformance
# 0.1.13 (the newest that loads on Node 20), run from node_modules: nothing is downloaded. The server is stopped on
# any exit.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFORMANCE=node_modules/.bin/conformance
START_TIMEOUT_SEC=90
if [ ! -x "$CONFORMANCE" ]; then
  echo "mcpConformance: $CONFORMANCE is missing; run npm ci (it is a devDependency)" >&2
  exit 1
fi

WORK="$(mktemp -d)"
SERVER_LOG="$WORK/server.log"
SERVER_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap stop_server EXIT
trap 'exit 130' INT TERM

server_log_tail() {
  echo "--- server log (last 40 lines) ---" >&2
  tail -n 40 "$SERVER_LOG" >&2 || true
}

# bin/swapeazi.js runs the compiled CLI in the same process, so $! is the server itself.
env -i PATH="$PATH" HOME="${HOME:-/tmp}" TMPDIR="${TMPDIR:-/tmp}" \
  SWAPEAZI_HOST=127.0.0.1 SWAPEAZI_PORT="${MCP_CONFORMANCE_PORT:-0}" SWAPEAZI_DATA_DIR=memory:// SWAPEAZI_LOG_LEVEL=info \
  node bin/swapeazi.js serve >/dev/null 2>"$SERVER_LOG" &
SERVER_PID=$!

# The URL from the server's `listening` log line (pino JSON on stderr), then /api/v1/health answering 200.
URL=""
deadline=$((SECONDS + START_TIMEOUT_SEC))
until [ -n "$URL" ]; do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "mcpConformance: swapeazi serve exited before listening" >&2
    server_log_tail
    exit 1
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "mcpConformance: swapeazi serve did not listen within ${START_TIMEOUT_SEC} s" >&2
    server_log_tail
    exit 1
  fi
  sleep 0.5
  URL="$(node -e '
    for (const line of require("node:fs").readFileSync(process.argv[1], "utf8").split("\n")) {
      try { const entry = JSON.parse(line); if (entry.event === "listening") { process.stdout.write(entry.url); break } } catch {}
    }' "$SERVER_LOG")"
done
until node -e 'fetch(process.argv[1]).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))' "$URL/api/v1/health"; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "mcpConformance: $URL/api/v1/health did not answer 200 within ${START_TIMEOUT_SEC} s" >&2
    server_log_tail
    exit 1
  fi
  sleep 0.5
done
echo "== swapeazi serve at $URL (pid $SERVER_PID); conformance $("$CONFORMANCE" --version)"

# What the server declares decides the optional scenarios, so declaring logging later adds its check by itself.
CAPABILITIES="$(node -e '
  fetch(process.argv[1], {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "mcpConformance", version: "0" } } }),
  })
    .then((r) => r.json())
    .then((body) => process.stdout.write(Object.keys(body.result.capabilities).join(" ")))
    .catch((error) => { process.stderr.write(`initialize failed: ${error}\n`); process.exit(1) })' "$URL/mcp")"
echo "== declared capabilities: $CAPABILITIES"

SCENARIOS=(server-initialize ping tools-list dns-rebinding-protection)
case " $CAPABILITIES " in *" logging "*) SCENARIOS+=(logging-set-level) ;; esac
case " $CAPABILITIES " in *" resources "*) SCENARIOS+=(resources-list) ;; esac

FAILED=()
for scenario in "${SCENARIOS[@]}"; do
  echo "== conformance server --scenario $scenario"
  if ! "$CONFORMANCE" server --url "$URL/mcp" --scenario "$scenario" -o "$WORK/results"; then
    FAILED+=("$scenario")
  fi
done

if [ "${#FAILED[@]}" -gt 0 ]; then
  echo "mcpConformance: failed: ${FAILED[*]}" >&2
  server_log_tail
  exit 1
fi
echo "== MCP conformance: ${#SCENARIOS[@]} scenarios passed (${SCENARIOS[*]})"
