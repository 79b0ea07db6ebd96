#!/bin/sh
# install-deps.sh - install what llmsim needs on Debian/Ubuntu (run as root).
#   scripts/install-deps.sh          build and run dependencies
#   scripts/install-deps.sh --test   also what the test suite uses (Criterion, Chromium)
# The CUDA toolkit is optional (kernels/ and the calibration runner build
# only when /usr/local/cuda or nvcc is present); it is not installed here.
set -eu
pkgs="cmake make gcc pkg-config libyaml-dev libsqlite3-dev sqlite3 gnuplot-nox"
if [ "${1:-}" = "--test" ]; then
	pkgs="$pkgs libcriterion-dev chromium python3"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
echo "install-deps: installed $pkgs"
