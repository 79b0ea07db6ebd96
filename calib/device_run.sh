#!/usr/bin/env bash
# calib/device_run.sh - the calibration run on the GPU machine.
#
#   OUT=/some/dir calib/device_run.sh [--quick]      (from the repository root)
#
# Writes into $OUT: device.txt (nvidia-smi -q before), device_after.txt
# (clocks after), device_run.log (this script's steps, ldd, build output),
# runner.log (the runner, one line per case), h200.db (the calibration
# store), summary.txt. Uses the runner built on the CI machine
# (./build-kern/calib/runner/llmsim-calib-runner, carried with the tree) when it
# starts here; otherwise builds one (cmake, or nvcc + gcc directly when the
# SQLite/libyaml dev packages are missing). Each class runs in its own
# runner process under `timeout`, and each class is committed on its own,
# so a crash, a hang or the end of the time budget keeps every class
# measured before it. Never touches GPU clocks or settings.
# Budget: LLMSIM_DEVICE_BUDGET_S (default 400 s; --quick 120 s) for the whole script.
set -u

if [ -z "${OUT:-}" ]; then
	echo "device_run.sh: set OUT to the output folder" >&2
	exit 2
fi
mkdir -p "$OUT"
QUICK=""
if [ "${1:-}" = "--quick" ]; then
	QUICK="--quick"
fi
T0=$(date +%s)
if [ -n "$QUICK" ]; then
	TOTAL=${LLMSIM_DEVICE_BUDGET_S:-120}
else
	TOTAL=${LLMSIM_DEVICE_BUDGET_S:-400}
fi
RUNLOG="$OUT/device_run.log"
DB="$OUT/h200.db"
: >"$RUNLOG"

elapsed() { echo $(($(date +%s) - T0)); }
log() { echo "[device_run +$(elapsed)s] $*" | tee -a "$RUNLOG" >&2; }

export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="/usr/local/cuda/bin:$PATH"

# 1. the device as found (read-only queries)
{
	timeout 30 nvidia-smi -q 2>&1
	echo "==== nvidia-smi"
	timeout 30 nvidia-smi 2>&1
} >"$OUT/device.txt" 2>&1 || log "nvidia-smi failed (rc $?)"
log "device: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu --format=csv,noheader 2>&1 | head -1)"

# 2. a runner that starts here
try_bin() {
	local bin=$1
	[ -x "$bin" ] || { log "$bin: not there"; return 1; }
	{ echo "==== ldd $bin"; ldd "$bin" 2>&1; } >>"$RUNLOG"
	if ! "$bin" --list >/dev/null 2>>"$RUNLOG"; then
		log "$bin does not start here (see ldd above)"
		return 1
	fi
	log "using $bin ($("$bin" --list | wc -l) cases listed)"
	BIN=$bin
	return 0
}

build_cmake() {
	command -v cmake >/dev/null || { log "no cmake"; return 1; }
	log "building with cmake into build-dev"
	if ! cmake -S . -B build-dev -DLLMSIM_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >>"$RUNLOG" 2>&1; then
		log "cmake configure failed (missing dev packages?)"
		return 1
	fi
	if ! cmake --build build-dev -j"$(nproc)" --target llmsim-calib-runner >>"$RUNLOG" 2>&1; then
		log "cmake build failed"
		return 1
	fi
	try_bin ./build-dev/calib/runner/llmsim-calib-runner
}

build_manual() {
	local d=build-manual kit=./build-kern/calib/runner/devkit
	log "building with nvcc + gcc into $d"
	rm -rf "$d" && mkdir -p "$d/cshim" && : >"$d/cshim/string"
	local sqlinc="" sqllib="-lsqlite3"
	if ! echo '#include <sqlite3.h>' | gcc -E - >/dev/null 2>&1 || ! ldconfig -p | grep -q 'libsqlite3\.so '; then
		if [ -f "$kit/sqlite3.h" ] && [ -f "$kit/libsqlite3.a" ]; then
			sqlinc="-I$kit"
			sqllib="$kit/libsqlite3.a"
		else
			log "no SQLite headers here and no carried kit: cannot build"
			return 1
		fi
	fi
	local pids=() f
	for f in kernels/*.cu; do
		nvcc -arch=sm_90 -O3 -I. -c "$f" -o "$d/$(basename "$f").o" >>"$RUNLOG" 2>&1 &
		pids+=($!)
	done
	for f in calib/runner/*.c calib/store.c base/err.c; do
		gcc -std=c11 -O2 -D_GNU_SOURCE -DLLMSIM_VERSION='"0.1.0"' -DLLMSIM_GIT_REV='"device"' \
			-I. -I"$d/cshim" $sqlinc -isystem /usr/local/cuda/include \
			-c "$f" -o "$d/$(echo "$f" | tr / _).o" >>"$RUNLOG" 2>&1 &
		pids+=($!)
	done
	local ok=1 p
	for p in "${pids[@]}"; do wait "$p" || ok=0; done
	[ $ok = 1 ] || { log "compilation failed"; return 1; }
	if ! g++ -o "$d/llmsim-calib-runner" "$d"/*.o $sqllib -L/usr/local/cuda/lib64 -lcupti \
		-Wl,--no-as-needed -lnvperf_host -Wl,--as-needed -lcublas -lcublasLt -lcudart_static \
		-ldl -lrt -lpthread -lm -Wl,-rpath,/usr/local/cuda/lib64 >>"$RUNLOG" 2>&1; then
		log "link failed"
		return 1
	fi
	try_bin "$d/llmsim-calib-runner"
}

BIN=""
# LLMSIM_FORCE_BUILD=cmake|manual tests a fallback on a machine where the carried binary works
case "${LLMSIM_FORCE_BUILD:-}" in
cmake) build_cmake ;;
manual) build_manual ;;
*) try_bin ./build-kern/calib/runner/llmsim-calib-runner || build_cmake || build_manual ;;
esac
if [ -z "$BIN" ]; then
	log "no runner: giving up"
	echo "no runner could be started or built; see device_run.log" >"$OUT/summary.txt"
	exit 1
fi
"$BIN" --list $QUICK >"$OUT/cases.txt" 2>&1

# 3. the runner: one process per class, each with its share of the time
# left (a crash or a hang costs one class at most).
RESERVE=15
: >"$OUT/runner.log"
run_runner() { # budget_s args...
	local b=$1
	shift
	timeout -s TERM -k 10 "$b" "$BIN" --db "$DB" --budget-s $((b - 3)) --verbose "$@" \
		>>"$OUT/runner.log" 2>&1
	local rc=$?
	log "runner $*: exit $rc$([ $rc = 124 ] && echo ' (timed out)')"
	# 0: done; 4: stopped by its budget; 124: timed out. 3: a case broke the
	# CUDA context (that class is committed up to it): resume after it.
	# Anything else (a crash, an init failure): once more without hardware
	# counters, the least proven part. Either only while time is left.
	local left=$((TOTAL - $(elapsed) - RESERVE))
	[ "$left" -lt "$b" ] && b=$left
	[ "$b" -ge 8 ] || return 0
	case $rc in
	0 | 4 | 124) ;;
	3)
		local resume
		resume=$(grep -o 'resume with --only [a-z]* --skip [0-9]*' "$OUT/runner.log" | tail -1)
		resume=${resume#resume with }
		if [ -n "$resume" ] && [ "$RESUMES" -lt 4 ]; then
			RESUMES=$((RESUMES + 1))
			log "resuming: $resume"
			# shellcheck disable=SC2086
			run_runner "$b" $resume $QUICK
		fi
		;;
	*)
		case " $* " in *" --no-counters "*) return 0 ;; esac
		log "runner $*: again without counters, up to ${b}s"
		run_runner "$b" "$@" --no-counters
		;;
	esac
}
RESUMES=0
if [ -n "$QUICK" ]; then
	PLAN="launch:10 hbm:14 smem:10 elementwise:14 gemm:20 attention:14 decode:14"
else
	PLAN="launch:20 hbm:40 smem:15 elementwise:55 gemm:120 attention:60 decode:45"
fi
for entry in $PLAN; do
	cls=${entry%%:*}
	b=${entry##*:}
	left=$((TOTAL - $(elapsed) - RESERVE))
	[ "$b" -gt "$left" ] && b=$left
	if [ "$b" -lt 8 ]; then
		log "class $cls: skipped, no time left"
		continue
	fi
	log "class $cls: up to ${b}s"
	# shellcheck disable=SC2086
	run_runner "$b" --only "$cls" $QUICK
done

# 4. the clocks after the load, and a summary
timeout 20 nvidia-smi -q -d CLOCK,PERFORMANCE,TEMPERATURE,POWER >"$OUT/device_after.txt" 2>&1
{
	echo "calibration run: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(elapsed) s, runner $BIN $QUICK"
	grep -m1 '^llmsim-calib-runner: .*SMs' "$OUT/runner.log"
	grep -m1 'hardware counters unavailable' "$OUT/runner.log"
	grep -m1 'no CUDA GPU found\|CUDA init:' "$OUT/runner.log"
	echo "---- per class"
	grep '^class ' "$OUT/runner.log"
	echo "---- failures ($(grep -c 'failed:' "$OUT/runner.log") cases)"
	grep 'failed:\|broken\|dropped' "$OUT/runner.log" | head -40
	echo "---- store"
	if [ ! -f "$DB" ]; then
		echo "no database written"
	elif command -v sqlite3 >/dev/null; then
		sqlite3 "$DB" "SELECT op_class, split, COUNT(*) FROM cases GROUP BY 1, 2;" 2>&1
	elif command -v python3 >/dev/null; then
		python3 - "$DB" <<'PY' 2>&1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("SELECT op_class, split, COUNT(*) FROM cases GROUP BY 1, 2"):
    print("|".join(str(x) for x in row))
PY
	fi
	echo "---- device_run steps"
	grep '^\[device_run' "$RUNLOG"
} >"$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
