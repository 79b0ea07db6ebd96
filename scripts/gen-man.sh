#!/bin/sh
# gen-man.sh LLMSIM OUT - write the llmsim(1) man page from the binary's own
# help texts, so the page always covers every subcommand as built.
set -eu
bin=$1 out=$2
tmp=$out.tmp.$$
trap 'rm -f "$tmp"' EXIT
esc() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/"; }
{
	echo '.TH LLMSIM 1 "" "llmsim '"$("$bin" --version | awk 'NR==1{print $2}')"'" "User Commands"'
	echo '.SH NAME'
	echo 'llmsim \- GPU performance simulator and roofline analyzer for large language models'
	echo '.SH SYNOPSIS'
	echo '.B llmsim'
	echo '.I command'
	echo '[options]'
	echo '.SH DESCRIPTION'
	echo '.nf'
	"$bin" --help | esc
	echo '.fi'
	echo '.SH CONVENTIONS'
	echo 'Every command keeps these (the README, section Conventions, says more).'
	echo '.TP'
	echo '.B --json'
	echo 'one JSON document on stdout, SI units; integers print as integers, other numbers as the shortest form that reads back exactly. A failure prints {"error": {"message": ..., "file": ..., "line": ...}} instead (file and line null when the message names no path:line) and keeps its exit status. A key ending in a unit (_s, _bytes, _hz, _pct, _per_s, _flops, _frac) holds numbers; a latency distribution is an object {mean, p50, p90, p99, max} under the latency key plus _dist (ttft_s_dist).'
	echo '.TP'
	echo '.B --wide'
	echo 'tables show every column; by default they leave out detail columns to fit 100 characters and say how many. A column holds one unit; counts use K, M, G, T and bytes KB, MB, GB, TB.'
	echo '.TP'
	echo '.B defaults'
	echo '--workload train (plan, report, roofline); prompt 1024 and output 256 tokens; --top 5; --gpus is every GPU of the run; --weight-dtype and --kv-dtype name data types.'
	echo '.SH EXIT STATUS'
	echo '0 success; 2 a usage or range error (unknown option, malformed value, number out of bounds); 1 a configuration that is invalid or does not fit (a file that does not load, an unknown name, a layout the model cannot take, a sequence beyond its context, memory that does not fit). trace capture and calib run exit with the program they run.'
	echo '.SH ENVIRONMENT'
	echo '.TP'
	echo '.B LLMSIM_DATA_DIR'
	echo 'folder holding hw/, models/ and calib/data/ (default: the install tree next to the binary, then the install prefix; llmsim --version names the one in use)'
	echo '.TP'
	echo '.B LLMSIM_SOURCE_DATA'
	echo 'set to 1 to read the source tree the binary was built from, before the install prefix (the install tree next to the binary still comes first)'
	echo '.TP'
	echo '.B LLMSIM_NO_PROFILE'
	echo 'set to 1 to ignore calibration profiles (hw/profiles/NAME.yaml)'
	echo '.SH COMMANDS'
	for c in $("$bin" --help | awk '/^commands:/{f=1;next} f&&/^  [a-z]/{print $1}'); do
		echo '.SS '"$c"
		echo '.nf'
		"$bin" "$c" --help 2>&1 | esc || true
		for v in $("$bin" "$c" --help 2>&1 | awk '/^(verbs|subcommands|kinds):/{f=1;next} f&&/^  [a-z]/{print $1} f&&/^$/{f=0}'); do
			echo
			"$bin" "$c" "$v" --help 2>&1 | esc || true
		done
		echo '.fi'
	done
} >"$tmp"
mv "$tmp" "$out"
trap - EXIT
