#!/usr/bin/env bash
# DWARF-mode samples are unwound with tables made of .eh_frame where they
# can be, and with libdwfl where they cannot: the two must give the same
# frames, sample for sample.  Every sample of real traces is unwound both
# ways (unwindcmp) on programs with and without frame pointers, through
# libc, inlined calls, deep recursion, a dlopen'ed plugin, C++, JIT code
# (libdwfl alone) and signal handlers on and off a sigaltstack; and the
# reports are the same with the tables and with libdwfl alone
# (PROFVIEW_UNWIND=libdwfl).  How many samples each way took is noted.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

P=$SRCDIR/tests/progs
"$CC" -g -O0 -fno-omit-frame-pointer -o chains-O0fp "$P/chains.c" || fail "cannot build chains"
"$CC" -g -O2 -fomit-frame-pointer -o chains-O2nofp "$P/chains.c" || fail "cannot build chains"
"$CC" -g -O2 -fomit-frame-pointer -fPIC -shared -o plugin.so "$P/plugin.c" || fail "cannot build plugin.so"
"$CC" -g -O2 -o plugin-host "$P/plugin-host.c" -ldl || fail "cannot build plugin-host"
"$CXX" -g -O2 -o cxx "$P/cxxnames.cc" || fail "cannot build cxxnames"
"$CC" -g -O2 -fno-omit-frame-pointer -o jit "$P/jit.c" || fail "cannot build jit"
"$CC" -g -O2 -pthread -o rstress "$P/regs-stress.c" -ldl || fail "cannot build regs-stress"
for p in inlines pltcall leafchain; do
	"$CC" -g -O2 -o "$p" "$P/$p.c" -lpthread || fail "cannot build $p"
done

# record NAME PROGRAM ARGS...: a DWARF-mode trace NAME.raw
record() {
	local name=$1
	shift
	"$COLLECT_TIMER" -q --unwind=dwarf -F 2000 -o "$name.raw" "$@" >/dev/null || fail "$name: collect-timer failed"
}

for m in inline qsort deep; do
	record "O0fp-$m" ./chains-O0fp $m 0.4
	record "O2nofp-$m" ./chains-O2nofp $m 0.4
done
record plugin ./plugin-host ./plugin.so 0.4
record cxx ./cxx 0.4
record jit ./jit 0.4 frames
record inlines ./inlines 0.4
record pltcall ./pltcall 0.4
record leafchain ./leafchain 0.4
record rs-deep ./rstress deep 0.4
record rs-signals ./rstress signals 0.4
record rs-small ./rstress small 0.4

walked=0
for t in *.raw; do
	"$UNWINDCMP" "$t" >"$t.cmp" 2>"$t.diff" || fail "$t: the tables and libdwfl differ: $(cat "$t.cmp" "$t.diff")"
	note "$(cat "$t.cmp")"
	w=$(sed -n 's/.* samples, \([0-9]*\) walked.*/\1/p' "$t.cmp")
	walked=$((walked + w))
	PROFVIEW_UNWIND=libdwfl "$PROFVIEW" --folded --addresses "$t" >"$t.slow" 2>"$t.slow.err" ||
		fail "$t: profview with libdwfl alone failed"
	"$PROFVIEW" --folded --addresses "$t" >"$t.fast" 2>"$t.fast.err" || fail "$t: profview failed"
	cmp -s "$t.slow" "$t.fast" || fail "$t: the stacks differ with the tables: $(diff "$t.slow" "$t.fast" | head -5)"
	cmp -s "$t.slow.err" "$t.fast.err" || fail "$t: the warnings differ with the tables"
	"$PROFVIEW" --flat "$t" >"$t.flat" 2>/dev/null || fail "$t: profview --flat failed"
	PROFVIEW_UNWIND=libdwfl "$PROFVIEW" --flat "$t" 2>/dev/null | cmp -s - "$t.flat" ||
		fail "$t: the flat report differs with the tables"
done
# The tables must do the bulk, or they are not used at all.
[ "$walked" -ge 1000 ] || fail "only $walked samples were walked with the tables"
exit 0
