#!/bin/sh
# install-deps.sh - install what llmsim needs on Debian/Ubuntu (run as root).
#   scripts/install-deps.sh          build and run dependencies
#   scripts/install-deps.sh --test   also what the test suite uses
#   scripts/install-deps.sh --list   print the packages and why, install nothing
# It prints each package and what it is for before installing. The CUDA
# toolkit is optional (kernels/ and the calibration runner build only when
# /usr/local/cuda or nvcc is present); it is not installed here.
set -eu
test=0 list=0
for a in "$@"; do
	case $a in
	--test) test=1 ;;
	--list) list=1 ;;
	*)
		echo "install-deps: unknown option '$a' (expected --test or --list)" >&2
		exit 2
		;;
	esac
done
# package<TAB>what llmsim uses it for
build="cmake	the build (CMake 3.25 or later)
make	the build
gcc	the C11 compiler
pkg-config	finds libyaml and Criterion
libyaml-dev	reads hw/ and models/ (YAML)
libsqlite3-dev	the calibration and trace store
sqlite3	inspecting a store by hand
zlib1g-dev	reads .gz inputs (traces, calibration dumps) without a shell
gnuplot-nox	the report's plots (llmsim report)"
tests="libcriterion-dev	the test framework
chromium	renders the HTML report in a test (skipped when absent)
python3	checks that --json output parses"
all=$build
[ "$test" = 1 ] && all="$all
$tests"
echo "install-deps: $( [ "$list" = 1 ] && echo "would install" || echo "installing")" \
	"$( [ "$test" = 1 ] && echo "build, run and test" || echo "build and run")" "dependencies:"
printf '%s\n' "$all" | awk -F '\t' '{printf "  %-18s %s\n", $1, $2}'
[ "$list" = 1 ] && exit 0
pkgs=$(printf '%s\n' "$all" | cut -f1 | tr '\n' ' ')
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: apt-get update"
apt-get update -qq
echo "install-deps: apt-get install $pkgs"
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
echo "install-deps: done"
