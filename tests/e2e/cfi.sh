#!/usr/bin/env bash
# The collector's own unwinder (--unwind=cfi, the default) against the
# analyzer's unwinding of a stack copy, sample for sample: --unwind=check
# records both for every sample and profview compares them.  On every
# program of the end-to-end tests the two must never differ.  Which
# samples the collector cannot unwind itself (and writes as a copy) is no
# chance either: in these programs, none but the odd sample in the dynamic
# loader's lazy binding, so more than 5% would be a fault.
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
for p in split inlines pltcall leafchain contend churn; do
	"$CC" -g -O2 -o "$p" "$P/$p.c" -lpthread || fail "cannot build $p"
done

# check NAME PROGRAM ARGS...: record both, compare, print "agree total"
check() {
	local name=$1 line samples agree differ unpaired
	shift
	"$COLLECT_TIMER" -q --unwind=check -o "$name.raw" "$@" >/dev/null || fail "$name: collect-timer failed"
	"$PROFVIEW" --flat "$name.raw" >"$name.txt" 2>"$name.err" || fail "$name: profview failed"
	line=$(grep 'unwind check:' "$name.err" | head -1)
	[ -n "$line" ] || fail "$name: profview did not compare: $(cat "$name.err")"
	read -r samples agree differ unpaired < <(echo "$line" |
		sed -n 's/.*check: \([0-9]*\) samples: \([0-9]*\) agree.*, \([0-9]*\) differ,.*), \([0-9]*\) unpaired.*/\1 \2 \3 \4/p')
	note "$name: $samples samples, $agree agree, $differ differ${line#*differ}"
	[ -n "$samples" ] || fail "$name: cannot read '$line'"
	[ "$differ" -eq 0 ] || fail "$name: the collector's stacks differ: $(cat "$name.err")"
	[ "$unpaired" -eq 0 ] || fail "$name: $unpaired check records without their sample"
	# 125 samples a half second, 50 or more on a loaded machine
	[ "$samples" -ge 20 ] || fail "$name: only $samples samples"
	[ $((agree * 100)) -ge $((samples * 95)) ] ||
		fail "$name: the collector unwound only $agree of $samples samples: $line"
}

for m in inline qsort deep; do
	check "O0fp-$m" ./chains-O0fp $m 0.5
	check "O2nofp-$m" ./chains-O2nofp $m 0.5
done
check plugin ./plugin-host ./plugin.so 0.5
check cxx ./cxx 0.5
check jit ./jit 0.5 frames
check split ./split 0.5
check inlines ./inlines 0.5
check pltcall ./pltcall 0.5
check leafchain ./leafchain 0.5
check contend ./contend 0.5
check churn ./churn 300

# JIT code (an anonymous mapping) is walked with its frame pointer: the
# stacks of the code's samples reach main.
"$PROFVIEW" --folded --sample-index=samples jit.raw >jit.folded 2>/dev/null
read -r ok total < <(awk '/\[anon\]/ { t += $NF; if ($0 ~ /;main;\[anon\]/) ok += $NF } END { print ok + 0, t + 0 }' jit.folded)
note "jit: $ok of $total samples in the JIT code reach main"
[ "$total" -ge 20 ] && [ $((ok * 100)) -ge $((total * 95)) ] || fail "jit: $ok of $total reach main"

# The trace of the default mode holds stacks, not stack copies: a small
# fraction of dwarf mode's for the same run (measured: 1/25).
"$COLLECT_TIMER" -q -o size-cfi.raw ./chains-O2nofp qsort 1 >/dev/null || fail "collect-timer failed"
"$COLLECT_TIMER" -q --unwind=dwarf -o size-dwarf.raw ./chains-O2nofp qsort 1 >/dev/null || fail "collect-timer failed"
cfi=$(stat -c %s size-cfi.raw) dwarf=$(stat -c %s size-dwarf.raw)
note "1 s of qsort: cfi trace $cfi bytes, dwarf trace $dwarf bytes"
[ $((cfi * 5)) -le "$dwarf" ] || fail "the cfi trace ($cfi bytes) is not a fifth of the dwarf one ($dwarf)"
exit 0
