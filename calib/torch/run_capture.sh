#!/usr/bin/env bash
# run_capture.sh - capture the Llama-shaped PyTorch steps (llama_steps.py)
# under libllmsim_inject.so on the GPU machine. Run from the repository root
# with $OUT set; leaves in $OUT:
#   trace_llama.db        the trace (SQLite; `llmsim trace show/compare --db`)
#   trace_llama.txt.gz    the same trace in the text form (`llmsim trace import`)
#   torch_steps.json      phase times (CUDA events, no injection) + overhead_pct
#   run_capture.log       everything that was said
# Steps: find the injection library (build-trace/ or build/, else build it
# here with gcc from calib/inject + calib/trace sources, with SQLite if its
# header is present, else the text form only); time the phases without
# injection; run them again traced with NVTX ranges (LLMSIM_TRACE_NVTX=1),
# and if that run fails, traced without NVTX; then once more traced without
# NVTX to measure the overhead of kernel capture alone.
set -u
: "${OUT:?set OUT to the output folder}"
mkdir -p "$OUT"
LOG="$OUT/run_capture.log"
exec > >(tee -a "$LOG") 2>&1
ROOT=$(pwd)
PY=${PYTHON:-python3}
STEPS="$ROOT/calib/torch/llama_steps.py"
RUN_TIMEOUT=${RUN_TIMEOUT:-170}
say() { echo "run_capture: $*"; }
t0=$(date +%s)

say "start $(date -u +%FT%TZ) in $ROOT"
nvidia-smi -L 2>&1 | head -4 || true

# ---- where CUPTI and CUDA headers are (system toolkit or torch's wheels)
SITE=$($PY -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' \
       2>/dev/null || $PY -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null \
       || echo /nonexistent)
say "python packages: $SITE"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
# The CUPTI library: torch's own first (it matches torch's CUDA), then the
# toolkit's. It is put on LD_LIBRARY_PATH, when needed at all, through a
# private folder holding only it, so torch's other CUDA libraries stay the
# ones it would load anyway.
CUPTI=""
for d in $(ls -d "$SITE"/nvidia/*/lib 2>/dev/null) "$CUDA_HOME/lib64" \
         "$CUDA_HOME/extras/CUPTI/lib64"; do
  f=$(ls "$d"/libcupti.so.[0-9]* 2>/dev/null | head -1)
  if [ -n "$f" ]; then CUPTI=$(readlink -f "$f"); break; fi
done
say "CUPTI: ${CUPTI:-not found}"
CUPTI_DIR=$(mktemp -d)
trap 'rm -rf "$CUPTI_DIR"' EXIT
[ -n "$CUPTI" ] && ln -s "$CUPTI" "$CUPTI_DIR/libcupti.so.13" && ln -s "$CUPTI" "$CUPTI_DIR/libcupti.so"
TRACE_LDPATH=${LD_LIBRARY_PATH:-}   # LD_LIBRARY_PATH of the traced runs

try_load() { # $1 library, $2 LD_LIBRARY_PATH: does it load after torch?
  LD_LIBRARY_PATH=$2 $PY - "$1" <<'EOF' 2>&1
import ctypes, sys
import torch  # noqa: F401  - load torch's CUDA libraries first, as in the real run
ctypes.CDLL(sys.argv[1])
print("loads")
EOF
}
loads() { # as try_load, with the CUPTI folder if needed; sets TRACE_LDPATH
  local r
  r=$(try_load "$1" "${LD_LIBRARY_PATH:-}")
  if [ "${r##*$'\n'}" = loads ]; then TRACE_LDPATH=${LD_LIBRARY_PATH:-}; echo loads; return; fi
  local p="$CUPTI_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  r=$(try_load "$1" "$p")
  if [ "${r##*$'\n'}" = loads ]; then TRACE_LDPATH=$p; echo loads; return; fi
  echo "$r"
}

build_here() { # build the library with gcc into $OUT/inject-build
  local b="$OUT/inject-build" inc="" lib="" def="" extra=""
  mkdir -p "$b"
  for d in "$CUDA_HOME/include" $(ls -d "$SITE"/nvidia/*/include 2>/dev/null); do
    if [ -f "$d/cupti.h" ] || [ -f "$d/cuda.h" ] || [ -d "$d/nvtx3" ]; then
      inc="$inc -isystem $d"
    fi
  done
  [ -n "$CUPTI" ] && lib="$lib -Wl,-rpath,$(dirname "$CUPTI")"
  if echo '#include <sqlite3.h>' | gcc -E - >/dev/null 2>&1; then
    extra="calib/trace/trace_db.c"
    if [ -f /usr/lib/x86_64-linux-gnu/libsqlite3.a ]; then
      lib="$lib /usr/lib/x86_64-linux-gnu/libsqlite3.a -lm -ldl"
    else
      lib="$lib -lsqlite3"
    fi
  else
    def="-DLLMSIM_INJECT_NO_SQLITE"
    say "no sqlite3.h here: the library writes the text form only" >&2
  fi
  say "building: gcc -shared $def $inc ... $lib" >&2
  # shellcheck disable=SC2086
  gcc -std=c11 -O2 -fPIC -shared -fvisibility=hidden -D_GNU_SOURCE -DLLMSIM_VERSION='"0.1.0"' \
    $def -I"$ROOT" $inc -o "$b/libllmsim_inject.so" \
    calib/inject/inject.c calib/inject/inject_nvtx.c calib/trace/trace.c \
    calib/trace/trace_text.c base/err.c $extra -Wl,--exclude-libs,ALL $lib "$CUPTI" -lpthread >&2 \
    && echo "$b/libllmsim_inject.so"
}

LIB=""
for c in ${LLMSIM_INJECT_LIB:-} build-trace/calib/inject/libllmsim_inject.so \
         build/calib/inject/libllmsim_inject.so; do
  [ -f "$c" ] || continue
  c=$(readlink -f "$c")
  loads "$c" > "$CUPTI_DIR/r"   # not in $(...): loads sets TRACE_LDPATH
  if [ "$(tail -1 "$CUPTI_DIR/r")" = loads ]; then LIB=$c; break; fi
  say "$c does not load here: $(cat "$CUPTI_DIR/r")"
done
if [ -z "$LIB" ]; then
  c=$(build_here | tail -1)
  if [ -f "$c" ]; then
    loads "$c" > "$CUPTI_DIR/r"
    if [ "$(tail -1 "$CUPTI_DIR/r")" = loads ]; then LIB=$c
    else say "the library built here does not load either: $(cat "$CUPTI_DIR/r")"; fi
  fi
fi
if [ -z "$LIB" ]; then
  say "FAILED: no usable libllmsim_inject.so; timing without injection only"
fi
say "injection library: ${LIB:-none} (traced runs: LD_LIBRARY_PATH=${TRACE_LDPATH:-})"
LDENV=(LLMSIM_UNUSED=1)
[ -n "$TRACE_LDPATH" ] && LDENV=(LD_LIBRARY_PATH="$TRACE_LDPATH")

# --role takes base|traced; the file name says which traced run it was.
run_role() { # file-tag role env...
  local tag=$1 role=$2; shift 2
  say "== $tag: $*"
  local s; s=$(date +%s)
  env "$@" timeout "$RUN_TIMEOUT" $PY "$STEPS" --role "$role" --out "$OUT/times_$tag.json" 2>&1
  local rc=$?
  say "== $tag: exit $rc after $(( $(date +%s) - s )) s"
  return "$rc"
}

run_role base base LLMSIM_UNUSED=1 || say "base run failed"

TRACED_JSON=""
if [ -n "$LIB" ]; then
  rm -f "$OUT/trace_llama.db" "$OUT/trace_llama.txt"
  if run_role traced_nvtx traced "${LDENV[@]}" \
       CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" \
       LLMSIM_TRACE_NVTX=1 LLMSIM_TRACE_DB="$OUT/trace_llama.db" \
       LLMSIM_TRACE_TXT="$OUT/trace_llama.txt" \
     && { [ -s "$OUT/trace_llama.db" ] || [ -s "$OUT/trace_llama.txt" ]; }; then
    TRACED_JSON="$OUT/times_traced_nvtx.json"
  else
    say "traced run with NVTX failed: tracing without NVTX instead"
    rm -f "$OUT/trace_llama.db" "$OUT/trace_llama.txt"
    run_role traced_plain traced "${LDENV[@]}" CUDA_INJECTION64_PATH="$LIB" \
      LLMSIM_TRACE_DB="$OUT/trace_llama.db" LLMSIM_TRACE_TXT="$OUT/trace_llama.txt" \
      && TRACED_JSON="$OUT/times_traced_plain.json"
  fi
  # Kernel capture alone (no NVTX), for the overhead figure, if time allows.
  if [ ! -f "$OUT/times_traced_plain.json" ] && [ $(( $(date +%s) - t0 )) -lt 150 ]; then
    run_role traced_plain traced "${LDENV[@]}" CUDA_INJECTION64_PATH="$LIB" \
      LLMSIM_TRACE_DB="$OUT/trace_plain.db" || true
  fi
fi

if [ -f "$OUT/times_base.json" ]; then
  $PY "$STEPS" --merge --base "$OUT/times_base.json" ${TRACED_JSON:+--traced "$TRACED_JSON"} \
    ${TRACED_JSON:+--traced-plain "$OUT/times_traced_plain.json"} \
    --final "$OUT/torch_steps.json"
fi
[ -f "$OUT/trace_llama.txt" ] && gzip -f "$OUT/trace_llama.txt"
rm -f "$OUT/trace_plain.db"
if command -v sqlite3 >/dev/null && [ -f "$OUT/trace_llama.db" ]; then
  sqlite3 "$OUT/trace_llama.db" "SELECT 'runs', count(*) FROM trace_runs;
    SELECT 'kernels', count(*) FROM trace_kernels; SELECT 'ranges', count(*) FROM trace_ranges;
    SELECT 'kernels in ranges', count(*) FROM trace_kernels WHERE range_id > 0;"
fi
# A first look, if the carried llmsim binary runs here (it needs libyaml).
for b in build-trace/cli/llmsim build/cli/llmsim; do
  [ -x "$b" ] || continue
  db="$OUT/trace_llama.db"
  [ -f "$db" ] || db="$OUT/trace_llama.txt.gz"
  LLMSIM_DATA_DIR="$ROOT" "$b" trace compare --db "$db" --model 8b --gpu h200 --phases-only \
    2>&1 | head -40 || true
  break
done
ls -la "$OUT"
say "done in $(( $(date +%s) - t0 )) s"
[ -f "$OUT/torch_steps.json" ] || { say "FAILED: no torch_steps.json"; exit 1; }
[ -f "$OUT/trace_llama.db" ] || [ -f "$OUT/trace_llama.txt.gz" ] || { say "FAILED: no trace"; exit 1; }
