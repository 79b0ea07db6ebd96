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
	echo '.SH ENVIRONMENT'
	echo '.TP'
	echo '.B LLMSIM_DATA_DIR'
	echo 'folder holding hw/, models/ and calib/data/ (default: the install tree next to the binary, then the install prefix; llmsim --version names the one in use)'
	echo '.TP'
	echo '.B LLMSIM_SOURCE_DATA'
	echo 'set to 1 to fall back to the source tree the binary was built from when no installed data is found'
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
