#!/usr/bin/env bash
# kill-writers.sh [N] [LLMSIM] - kill -9 every writer of llmsim at random
# points, N times each (default 20), and check what the kill left:
#
#   calib import   the store exports as it did before the import, or after
#   trace import   the trace file's last run is the old one or the new one
#   calib export   --out FILE holds the old dump or the new one
#   report         --out DIR is absent or a whole report
#   --trace-out    FILE holds the old timeline or the new one
#
# and that the next run removes the litter: no -journal, -wal or -shm
# beside a store, no FILE.tmp-* or DIR.tmp-* beside a target and no
# llmsim-report-* work folder once the writer ran again. (Reading the old
# or new content in between rolls back a hot journal; a journal killed
# before it was whole is not hot, and the next writer removes it.)
# Each kill lands at a uniformly random time within 1.2 times the writer's
# own run time (measured first), so some land before it starts writing
# and some after it finished; "hit" counts the kills that found it
# running. Prints one line per writer; exits 1 on the first broken
# promise. LLMSIM is the binary (default build/cli/llmsim). CTest runs it
# with N=3 (tests/CMakeLists.txt); `scripts/kill-writers.sh 20` is the
# full run.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-20}
llmsim=${2:-$src/build/cli/llmsim}
case $llmsim in /*) ;; *) llmsim=$PWD/$llmsim ;; esac # the runs happen in a work folder
export LLMSIM_DATA_DIR=${LLMSIM_DATA_DIR:-$src}
work=$(mktemp -d "${TMPDIR:-/tmp}/llmsim-kill-XXXXXX")
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work/tmp # report's work folders, checked for litter
mkdir -p "$TMPDIR"
cd "$work" || exit 2
data=$src/calib/data/h200-2026-12-01
fail() {
	echo "kill-writers: $*" >&2
	exit 1
}

# Milliseconds a command takes.
time_ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

# Run the command in the background, kill -9 it after a random time
# within 1.2 x $1 ms; sets hit=1 when the kill found it running.
kill_at_random() {
	local ms=$1
	shift
	"$@" >/dev/null 2>&1 &
	local pid=$!
	local wait_ms=$((RANDOM * RANDOM % (ms * 12 / 10 + 1)))
	sleep "$(printf '%d.%03d' $((wait_ms / 1000)) $((wait_ms % 1000)))"
	hit=0
	kill -9 "$pid" 2>/dev/null && hit=1
	wait "$pid" 2>/dev/null
}

no_litter() { # no journal beside a store that was read
	for f in "$@"; do
		for t in -journal -wal -shm; do
			[ -e "$f$t" ] && fail "$f$t left after a read"
		done
	done
	return 0
}

no_staging() { # no staging file or folder beside the target
	local x
	for x in "$1".tmp*; do
		[ -e "$x" ] && fail "$x left after the next run"
	done
	return 0
}

report() {
	printf '%-14s %3d kills, %3d hit a running writer, %3d left the old content, %3d the new\n' \
		"$1" "$n" "$2" "$3" "$4"
}

# ---- calib import -----------------------------------------------------
"$llmsim" calib import --db base.db --in "$data/runner_normal.tsv" >/dev/null 2>&1 ||
	fail "calib import of the base store failed"
"$llmsim" calib export --db base.db --out old.tsv >/dev/null 2>&1 || fail "export"
cp base.db ref.db
ms=$(time_ms "$llmsim" calib import --db ref.db --in "$data/runner_counters.tsv")
"$llmsim" calib export --db ref.db --out new.tsv >/dev/null 2>&1 || fail "export"
cmp -s old.tsv new.tsv && fail "the import changed nothing"
hits=0 olds=0 news=0
for ((i = 0; i < n; i++)); do
	rm -f k.db*
	cp base.db k.db
	kill_at_random "$ms" "$llmsim" calib import --db k.db --in "$data/runner_counters.tsv"
	hits=$((hits + hit))
	"$llmsim" calib export --db k.db --out got.tsv 2>err.txt || fail "calib import: $(cat err.txt)"
	if cmp -s got.tsv old.tsv; then olds=$((olds + 1)); elif cmp -s got.tsv new.tsv; then
		news=$((news + 1)); else fail "calib import: the store is neither old nor new"; fi
	# the next writer (it may find the run there already) removes the litter
	"$llmsim" calib import --db k.db --in "$data/runner_counters.tsv" >/dev/null 2>&1
	no_litter k.db
done
report "calib import" $hits $olds $news

# ---- trace import -----------------------------------------------------
"$llmsim" trace import --db tbase.db --in "$src/tests/data/trace/llama_tiny.trace" \
	>/dev/null 2>&1 || fail "trace import of the base file failed"
"$llmsim" trace export --db tbase.db --out told.txt >/dev/null 2>&1 || fail "trace export"
cp tbase.db tref.db
ms=$(time_ms "$llmsim" trace import --db tref.db --in "$src/calib/data/trace_llama.txt.gz")
"$llmsim" trace export --db tref.db --out tnew.txt >/dev/null 2>&1 || fail "trace export"
hits=0 olds=0 news=0
for ((i = 0; i < n; i++)); do
	rm -f t.db*
	cp tbase.db t.db
	kill_at_random "$ms" "$llmsim" trace import --db t.db --in "$src/calib/data/trace_llama.txt.gz"
	hits=$((hits + hit))
	"$llmsim" trace export --db t.db --out tgot.txt 2>err.txt || fail "trace import: $(cat err.txt)"
	if cmp -s tgot.txt told.txt; then olds=$((olds + 1)); elif cmp -s tgot.txt tnew.txt; then
		news=$((news + 1)); else fail "trace import: the file is neither old nor new"; fi
	"$llmsim" trace import --db t.db --in "$src/tests/data/trace/llama_tiny.trace" \
		>/dev/null 2>&1 || fail "trace import after a kill failed"
	no_litter t.db
done
report "trace import" $hits $olds $news

# ---- calib export -------------------------------------------------------
ms=$(time_ms "$llmsim" calib export --db ref.db --out e.tsv)
hits=0 olds=0 news=0
for ((i = 0; i < n; i++)); do
	cp old.tsv e.tsv
	kill_at_random "$ms" "$llmsim" calib export --db ref.db --out e.tsv
	hits=$((hits + hit))
	if cmp -s e.tsv old.tsv; then olds=$((olds + 1)); elif cmp -s e.tsv new.tsv; then
		news=$((news + 1)); else fail "calib export: e.tsv is neither old nor new"; fi
	"$llmsim" calib export --db base.db --out e.tsv >/dev/null 2>&1 || fail "calib export"
	no_staging e.tsv
	no_litter ref.db base.db
done
report "calib export" $hits $olds $news

# ---- report -------------------------------------------------------------
rep=(report --model 8b --gpu h200 --out rep)
ms=$(time_ms "$llmsim" "${rep[@]}")
[ -f rep/index.html ] || fail "report wrote no rep/index.html"
rm -rf rep
hits=0 olds=0 news=0
for ((i = 0; i < n; i++)); do
	kill_at_random "$ms" "$llmsim" "${rep[@]}"
	hits=$((hits + hit))
	if [ ! -e rep ]; then olds=$((olds + 1)); elif [ -f rep/index.html ] &&
		[ -f rep/.llmsim-report ]; then news=$((news + 1)); else
		fail "report: rep is neither absent nor a whole report"; fi
	"$llmsim" "${rep[@]}" --force >/dev/null 2>err.txt || fail "report: $(cat err.txt)"
	no_staging rep
	for x in "$TMPDIR"/llmsim-report-*; do
		[ -e "$x" ] && fail "$x left after the next report"
	done
	rm -rf rep
done
report "report" $hits $olds $news

# ---- --trace-out --------------------------------------------------------
run=(infer --model 8b --gpu h200 --batch 8 --prompt 2048 --output 256 --trace-out tl.json)
"$llmsim" infer --model 8b --gpu h200 --batch 1 --prompt 128 --output 16 --trace-out tl.json \
	>/dev/null 2>&1 || fail "infer --trace-out failed"
cp tl.json tlold.json
ms=$(time_ms "$llmsim" "${run[@]}")
cp tl.json tlnew.json
cmp -s tlold.json tlnew.json && fail "the two timelines are the same"
hits=0 olds=0 news=0
for ((i = 0; i < n; i++)); do
	cp tlold.json tl.json
	kill_at_random "$ms" "$llmsim" "${run[@]}"
	hits=$((hits + hit))
	if cmp -s tl.json tlold.json; then olds=$((olds + 1)); elif cmp -s tl.json tlnew.json; then
		news=$((news + 1)); else fail "--trace-out: tl.json is neither old nor new"; fi
	"$llmsim" "${run[@]}" >/dev/null 2>&1 || fail "infer --trace-out failed"
	no_staging tl.json
done
report "--trace-out" $hits $olds $news
exit 0
