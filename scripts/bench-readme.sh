#!/bin/sh
# bench-readme.sh - the README's speed figures, from bench/'s programs.
#
#   scripts/bench-readme.sh [BUILD_DIR] [--write]
#
# Runs llmsim-bench-plan and llmsim-bench-serve (5000 requests, 5 runs;
# then 10^6 requests, one run) of BUILD_DIR (default build-rel: a Release
# build, cmake -DCMAKE_BUILD_TYPE=Release) and prints their output under a
# note of the machine (CPU, cores, load average, date, commit). With
# --write it replaces the block between the README's "bench:begin" and
# "bench:end" markers with it (a text block: the README's console blocks
# are commands the install test runs). The rates are per core: the benchmarks
# time their thread's CPU time (the wall time stands beside).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=build-rel
write=0
for a in "$@"; do
	case $a in
	--write) write=1 ;;
	*) build=$a ;;
	esac
done
case $build in /*) ;; *) build=$root/$build ;; esac
export LLMSIM_DATA_DIR=${LLMSIM_DATA_DIR:-$root}
for b in llmsim-bench-plan llmsim-bench-serve; do
	[ -x "$build/bench/$b" ] || { echo "bench-readme.sh: no $build/bench/$b (build it first)" >&2; exit 2; }
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
block=$(mktemp)
{
	echo "Measured $(date -u +%Y-%m-%d) at $(git -C "$root" rev-parse --short HEAD) on $cpu, $(nproc) cores,"
	echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (other work running), by scripts/bench-readme.sh:"
	echo
	echo '```text'
	echo '$ llmsim-bench-plan'
	"$build/bench/llmsim-bench-plan"
	echo '$ llmsim-bench-serve 5000 5'
	"$build/bench/llmsim-bench-serve" 5000 5
	echo '$ llmsim-bench-serve 1000000 1'
	"$build/bench/llmsim-bench-serve" 1000000 1
	echo '```'
} >"$block"

if [ $write = 0 ]; then
	cat "$block"
	rm -f "$block"
	exit 0
fi
readme=$root/README.md
grep -q '<!-- bench:begin -->' "$readme" || { echo "bench-readme.sh: no bench:begin marker in README.md" >&2; exit 1; }
awk -v f="$block" '
	/<!-- bench:begin -->/ { print; while ((getline l < f) > 0) print l; skip = 1; next }
	/<!-- bench:end -->/ { skip = 0 }
	!skip' "$readme" >"$readme.tmp"
mv "$readme.tmp" "$readme"
rm -f "$block"
echo "bench-readme.sh: README.md updated"
