#!/usr/bin/env bash
# fuzz.sh [SECONDS] [TARGET...] - run every libFuzzer target (fuzz/fuzz_*.c;
# TARGET is a name such as "hw" or "trace_db") for SECONDS each (default
# 60; 0 runs none, for MERGE=1 alone), one at a time in one process each,
# and print a table: target, execs, edges (libFuzzer's "cov", the edges of
# the instrumented libraries the target reached), corpus files, crashes.
#
# The fuzz build is its own folder, $BUILD (default build-fuzz), configured
# here on first use with clang (CC, default clang) and -DLLMSIM_FUZZ=ON:
# the libraries themselves are instrumented and checked by ASan and UBSan.
# Each target starts from its committed corpus, fuzz/corpus/NAME/ (and the
# dictionary fuzz/NAME.dict where there is one: SQL words, options); what it
# finds goes to $BUILD/fuzz-work/NAME/new/, and a crash, leak, timeout or
# out-of-memory input to $BUILD/fuzz-work/NAME/crashes/ (the run of that
# target stops there; replay one with $BUILD/fuzz/fuzz_NAME FILE). With
# MERGE=1 the committed corpus becomes its named seeds plus the fewest of
# the inputs found (now and before) that reach every edge they reach
# beyond the seeds (libFuzzer -merge=1): how the corpora were grown.
# Exits 1 when any target crashed.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
shift 2>/dev/null
build=${BUILD:-$src/build-fuzz}
case $build in /*) ;; *) build=$src/$build ;; esac
if [ $# -gt 0 ]; then
	targets=("$@")
else
	targets=()
	for f in "$src"/fuzz/fuzz_*.c; do
		n=${f##*/fuzz_}
		targets+=("${n%.c}")
	done
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
	mkdir -p "$build"
	CC=${CC:-clang} cmake -S "$src" -B "$build" -DLLMSIM_FUZZ=ON -DLLMSIM_TESTS=OFF \
		-DLLMSIM_CUDA=OFF >"$build/fuzz-configure.log" 2>&1 ||
		{ cat "$build/fuzz-configure.log"; exit 2; }
fi
names=()
for t in "${targets[@]}"; do names+=("fuzz_$t"); done
cmake --build "$build" -j"${JOBS:-2}" --target "${names[@]}" >"$build/fuzz-build.log" 2>&1 ||
	{ tail -30 "$build/fuzz-build.log"; exit 2; }

export LLMSIM_DATA_DIR=$src
status=0
rows=()
for t in "${targets[@]}"; do
	work=$build/fuzz-work/$t
	mkdir -p "$work/new" "$work/crashes"
	corpus=$src/fuzz/corpus/$t
	log=$work/fuzz.log
	# new inputs stay small (seeds larger than this are cut to it while
	# fuzzing, and replayed whole by the tests); traces and store dumps
	# need a few kernel lines to reach their checks of a whole run
	case $t in trace | store | store_db) max_len=16384 ;; *) max_len=10240 ;; esac
	dict=()
	[ -f "$src/fuzz/$t.dict" ] && dict=(-dict="$src/fuzz/$t.dict")
	: >"$log"
	[ "$secs" -gt 0 ] && # (libFuzzer reads 0 seconds as no limit)
		"$build/fuzz/fuzz_$t" "$work/new" "$corpus" "${dict[@]}" -max_len=$max_len \
			-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 \
			-print_final_stats=1 -artifact_prefix="$work/crashes/" >"$log" 2>&1
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	crashes=$(find "$work/crashes" -type f | wc -l)
	if [ "${MERGE:-0}" = 1 ] && [ "$crashes" = 0 ]; then
		# the corpus becomes its named seeds plus as few of the found
		# inputs (libFuzzer names them by their SHA-1) as reach every
		# edge and feature the found ones reach beyond the seeds
		rm -rf "$work/min" "$work/found"
		mkdir -p "$work/min" "$work/found"
		for f in "$corpus"/*; do
			if [[ ${f##*/} =~ ^[0-9a-f]{40}$ ]]; then
				cp "$f" "$work/found/"
			else
				cp "$f" "$work/min/"
			fi
		done
		cp "$work/new"/* "$work/found/" 2>/dev/null
		if "$build/fuzz/fuzz_$t" -merge=1 "$work/min" "$work/found" -close_fd_mask=3 \
			>"$work/merge.log" 2>&1; then
			rm -rf "$corpus" && cp -r "$work/min" "$corpus"
		else
			echo "$t: merge failed, see $work/merge.log" >&2
		fi
	fi
	files=$(find "$corpus" -type f | wc -l)
	[ "$crashes" -gt 0 ] && status=1
	rows+=("$(printf '%-12s %12s %8s %8s %8s' "$t" "${execs:-?}" "${cov:-?}" "$files" "$crashes")")
done
printf '%-12s %12s %8s %8s %8s\n' target execs edges corpus crashes
printf '%s\n' "${rows[@]}"
[ $status = 0 ] || echo "crash inputs: $build/fuzz-work/*/crashes/"
exit $status
