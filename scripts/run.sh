#!/usr/bin/env bash
# `make run`: the whole system as processes, under honcho (the Procfile at the root).
#
# Expects REDIS_URL and DATABASE_URL (make run wraps this in `python -m felt_dev.devserver
# --postgres`, which starts private servers for whichever is unset) and the venv's `felt`.
# Migrates the lobby's database, then starts every process in the Procfile (the projector only
# where this checkout has `felt projector`), prints where to open Felt, and stops everything
# on Ctrl-C (honcho sends each process SIGTERM and waits for it).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH"

# Development mode: public development secrets, open admin calls (never expose it).
export FELT_DEV_MODE=1
# The AI workers act for AI seats with a token the table service must know: one per run.
FELT_AI_TOKEN=${FELT_AI_TOKEN:-$(python -c 'import secrets; print(secrets.token_urlsafe(24))')}
export FELT_AI_TOKEN
export FELT_AI_METRICS_PORT=${FELT_AI_METRICS_PORT:-off}
export FELT_PROJECTOR_METRICS_PORT=${FELT_PROJECTOR_METRICS_PORT:-off}
# Behind the gateway every browser reaches the services from the gateway's address; the
# gateway names the client in x-forwarded-for, which the services believe from loopback only.
export FELT_TRUSTED_PROXIES=${FELT_TRUSTED_PROXIES:-127.0.0.1,::1}
export FELT_GATEWAY_ADDR=${FELT_GATEWAY_ADDR:-127.0.0.1:8080}
export FELT_TABLE_ADDR=${FELT_TABLE_ADDR:-127.0.0.1:50051}
export FELT_TABLE_TARGET=${FELT_TABLE_TARGET:-$FELT_TABLE_ADDR}
export FELT_LOBBY_ADDR=${FELT_LOBBY_ADDR:-127.0.0.1:50052}
export FELT_LOBBY_TARGET=${FELT_LOBBY_TARGET:-$FELT_LOBBY_ADDR}
# Each process's output, line by line, as it comes.
export PYTHONUNBUFFERED=1

felt db migrate

processes=(table lobby ai gateway)
if felt projector --help >/dev/null 2>&1; then
  processes+=(projector)
fi

url="http://${FELT_GATEWAY_ADDR}"
cat <<MSG

  Felt is starting: open ${url}
  (gateway ${url}, table service ${FELT_TABLE_ADDR}, lobby ${FELT_LOBBY_ADDR}; Ctrl-C stops it all)

MSG
exec honcho start -f Procfile "${processes[@]}"
