#!/usr/bin/env bash
# install_readme.sh BUILD SRC - the README's set-up and tour commands, run
# against a `cmake --install` prefix with the source tree out of reach.
#
# 1. `cmake --install BUILD` into a temporary prefix, which is then moved
#    (a relocated prefix must still find its data). It must hold the
#    hardware files, the fitted profile, the calibration dumps and the
#    shell completions.
# 2. The installed binary finds its data in its own prefix; with that data
#    removed, it must not fall back to the source tree (only
#    LLMSIM_SOURCE_DATA=1 may do that).
# 3. Every `llmsim` command of the README's set-up line (the fenced block
#    after "<!-- ci: set-up command -->") and every "$ " line of the tour's
#    console blocks runs, in order, in an empty folder outside the source
#    tree, with no LLMSIM_* variable set: exit 0, except under "### Errors",
#    where each llmsim line must fail (1 or 2) with one "llmsim ..." line
#    first on stderr.
# 4. Installed equals built: the same lines run with the build-tree binary
#    (LLMSIM_SOURCE_DATA=1, another empty folder) print the same output, once
#    the data folder and the working folder are named alike and the tool's
#    own wall time (plan's search line) is masked.
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
fail() {
	echo "install_readme: $*" >&2
	exit 1
}
unset LLMSIM_DATA_DIR LLMSIM_SOURCE_DATA LLMSIM_NO_PROFILE
tmp=$(mktemp -d /tmp/llmsim-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# ---- 1. install, relocate, check what was shipped ----
cmake --install "$build" --prefix "$tmp/stage" >/dev/null
mv "$tmp/stage" "$tmp/prefix"
pre=$tmp/prefix data=$tmp/prefix/share/llmsim
for f in bin/llmsim share/man/man1/llmsim.1 share/llmsim/hw/h200-sxm-141gb.yaml \
	share/llmsim/hw/profiles/h200.yaml share/llmsim/models/llama-3.1-70b.yaml \
	share/llmsim/models/runs/train_published.yaml share/llmsim/calib/data/h200-2026-12-01/runner_counters.tsv \
	share/llmsim/calib/data/multi_gpu/nccl_h200x2.tsv share/llmsim/calib/data/trace_llama.txt.gz \
	share/bash-completion/completions/llmsim share/zsh/site-functions/_llmsim; do
	[ -s "$pre/$f" ] || fail "cmake --install did not ship $f"
done

# ---- 2. the data the installed binary reads ----
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
v=$("$pre/bin/llmsim" --version | sed -n 2p)
[ "$v" = "data: $data (the install tree next to the binary)" ] || fail "installed binary: $v"
mv "$data" "$tmp/hidden"
v=$("$pre/bin/llmsim" --version | sed -n 2p)
case $v in "data: $src"*) fail "without its data the installed binary read the source tree: $v" ;; esac
mv "$tmp/hidden" "$data"

# ---- 3. the README's commands ----
readme=$src/README.md
setup=$(awk '/<!-- ci: set-up command -->/{f=1;next} f&&/^```/{if(b)exit;b=1;next} f&&b' "$readme")
[ -n "$setup" ] || fail "README.md: no set-up command after <!-- ci: set-up command -->"
case $setup in *"cmake --install build"*) ;; *) fail "the set-up command does not install: $setup" ;; esac
# "<section>\t<command>": the set-up line's llmsim parts, then the tour's lines
cmds=$tmp/cmds
printf '%s\n' "$setup" | sed 's/ && /\n/g' | awk '/^llmsim /{print "setup\t" $0}' >"$cmds"
awk '/^### /{sec=$2} /^```console/{c=1;next} c&&/^```/{c=0;next} c&&/^\$ /{sub(/^\$ /,""); print sec "\t" $0}' \
	"$readme" >>"$cmds"
n=$(wc -l <"$cmds")
[ "$n" -ge 20 ] || fail "only $n commands found in README.md"

# run LABEL BINARY-FOLDER: every line in a fresh empty folder; out/LABEL.N
# holds each line's stdout and stderr, out/LABEL.status the statuses
run_all() {
	local label=$1 bindir=$2 i=0 sec cmd st
	mkdir -p "$tmp/run-$label" "$tmp/out"
	: >"$tmp/out/$label.status"
	while IFS=$'\t' read -r sec cmd; do
		i=$((i + 1))
		st=0
		(cd "$tmp/run-$label" && PATH=$bindir:$PATH bash -c "$cmd") \
			>"$tmp/out/$label.$i" 2>"$tmp/out/$label.$i.err" </dev/null || st=$?
		printf '%s\t%s\t%s\n' "$sec" "$st" "$cmd" >>"$tmp/out/$label.status"
	done <"$cmds"
}
run_all installed "$pre/bin"
i=0
while IFS=$'\t' read -r sec st cmd; do
	i=$((i + 1))
	err=$tmp/out/installed.$i.err
	if [ "$sec" = Errors ] && [ "${cmd#llmsim }" != "$cmd" ]; then
		[ "$st" = 1 ] || [ "$st" = 2 ] || fail "'$cmd' exited $st, expected 1 or 2"
		head -n1 "$err" | grep -q '^llmsim ' || fail "'$cmd': stderr does not start with 'llmsim ...': $(head -n1 "$err")"
	elif [ "$st" != 0 ]; then
		fail "'$cmd' exited $st (installed, from $tmp/run-installed): $(tail -n3 "$err")"
	fi
done <"$tmp/out/installed.status"

# ---- 4. installed equals built ----
mkdir "$tmp/buildbin"
ln -s "$build/cli/llmsim" "$tmp/buildbin/llmsim"
LLMSIM_SOURCE_DATA=1 run_all built "$tmp/buildbin"
norm() { # file, data folder, working folder
	# only the data folder's own paths: a path inside the data (a trace's
	# recorded command line) may name the folder it was captured in
	sed -e "s#$2/\(hw\|models\|calib/data\)#<data>/\1#g" -e "s|$3|<cwd>|g" \
		-e 's/ in [0-9.]* [mun]*s ([0-9.]* [KMG]*\/s)/ in <time>/' \
		-e 's/^search: \(.*\) in [0-9.]* [mun]*s/search: \1 in <time>/' \
		-e '/^search: /s/([0-9.]* *[KMG]*\/s)/(<rate>)/g' \
		-e 's/ meet the targets ([0-9.]* [mun]*s)$/ meet the targets (<time>)/' "$1"
}
cmp -s <(cut -f1,2 "$tmp/out/installed.status") <(cut -f1,2 "$tmp/out/built.status") ||
	fail "exit statuses differ between the installed and the built binary:
$(diff <(cut -f2,3 "$tmp/out/installed.status") <(cut -f2,3 "$tmp/out/built.status"))"
for j in $(seq 1 "$n"); do
	for s in "" .err; do
		if ! diff <(norm "$tmp/out/installed.$j$s" "$data" "$tmp/run-installed") \
			<(norm "$tmp/out/built.$j$s" "$src" "$tmp/run-built") >"$tmp/diff"; then
			fail "installed and built print differently for '$(sed -n "${j}p" "$cmds" | cut -f2)':
$(head -n 20 "$tmp/diff")"
		fi
	done
done
echo "install_readme: $n README commands ran against $pre; installed and built agree"
