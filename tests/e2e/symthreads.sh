#!/usr/bin/env bash
# The symbolizer reads the modules of a profile on two threads, each module
# on one of them, and puts what they read in the profile in the locations'
# order: every report must be the same, byte for byte, as when one thread
# reads them all (PROFVIEW_SYMBOLIZE=serial), which also leaves a
# compressed debug file to libdw, whole, where by default only what the
# profile's addresses need of it is decompressed (first and repeat
# reports alike, and with every section streamed through zlib,
# PROFVIEW_INFLATE=zlib, as without libdeflate).  Two programs whose samples
# are in several modules with debug info: sortcmp (its own code under
# glibc's qsort, libc's DWARF from libc6-dbg when installed) and
# plugin-host with the plugin it loads (three modules).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

cd "$WORK" || fail "cannot enter $WORK"
P=$SRCDIR/tests/progs
"$CC" -O2 -g -fomit-frame-pointer -o sortcmp "$P/sortcmp.c" || fail "cannot build sortcmp"
"$CC" -g -O2 -fomit-frame-pointer -fPIC -shared -o plugin.so "$P/plugin.c" || fail "cannot build plugin.so"
"$CC" -g -O2 -o plugin-host "$P/plugin-host.c" -ldl || fail "cannot build plugin-host"
"$COLLECT_TIMER" -q -o sort.raw ./sortcmp sort 0.5 >/dev/null || fail "collect-timer failed on sortcmp"
"$COLLECT_TIMER" -q -o plugin.raw ./plugin-host ./plugin.so 0.5 >/dev/null ||
	fail "collect-timer failed on plugin-host"

for t in sort plugin; do
	for r in "--flat" "--tree" "--folded --addresses" "--tree --noinlines" "--flat --full-names"; do
		# shellcheck disable=SC2086
		"$PROFVIEW" $r "$t.raw" >"$t.two" 2>"$t.two.err" || fail "$t: profview $r failed"
		# shellcheck disable=SC2086
		PROFVIEW_SYMBOLIZE=serial "$PROFVIEW" $r "$t.raw" >"$t.one" 2>"$t.one.err" ||
			fail "$t: profview $r with one thread failed"
		cmp -s "$t.one" "$t.two" ||
			fail "$t: profview $r differs with two threads: $(diff "$t.one" "$t.two" | head -5)"
		cmp -s "$t.one.err" "$t.two.err" || fail "$t: profview $r warns otherwise with two threads"
		# the debug file's copy made anew with every section streamed
		# through zlib, not inflated at once by libdeflate
		# shellcheck disable=SC2086
		PROFVIEW_CACHE=off PROFVIEW_INFLATE=zlib "$PROFVIEW" $r "$t.raw" >"$t.zlib" 2>/dev/null ||
			fail "$t: profview $r with zlib alone failed"
		cmp -s "$t.one" "$t.zlib" ||
			fail "$t: profview $r differs with zlib alone: $(diff "$t.one" "$t.zlib" | head -5)"
	done
	"$PROFVIEW" --pprof -o "$t.two.pb.gz" "$t.raw" 2>/dev/null || fail "$t: profview --pprof failed"
	PROFVIEW_SYMBOLIZE=serial "$PROFVIEW" --pprof -o "$t.one.pb.gz" "$t.raw" 2>/dev/null ||
		fail "$t: profview --pprof with one thread failed"
	cmp -s "$t.one.pb.gz" "$t.two.pb.gz" || fail "$t: the profile.proto differs with two threads"
done
# The reports above name functions of every module the samples are in:
# the program's and libc's (qsort's merge sort calls every comparison), the
# host's and the plugin's (each sample of the plugin is under run_plugin).
"$PROFVIEW" --folded sort.raw >sort.folded || fail "profview --folded failed"
grep -q 'cmp_keys' sort.folded || fail "sortcmp: no cmp_keys"
grep -q 'qsort' sort.folded || fail "sortcmp: no frame of libc's qsort"
"$PROFVIEW" --folded plugin.raw >plugin.folded || fail "profview --folded failed"
grep -q 'run_plugin;plugin_entry' plugin.folded || fail "plugin-host: no run_plugin;plugin_entry"
exit 0
