#!/usr/bin/env bash
# Bad input and bad use: one clear line, the right exit status, nothing lost.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

# expect STATUS PATTERN CMD...: CMD exits with STATUS and its stderr matches
expect() {
	local want=$1 pattern=$2 got
	shift 2
	set +e
	"$@" >out.txt 2>err.txt
	got=$?
	set -e
	[ "$got" -eq "$want" ] || fail "'$*' exited $got, not $want: $(cat err.txt)"
	grep -Eq -- "$pattern" err.txt || fail "'$*': stderr does not say /$pattern/: $(cat err.txt)"
}

# profview
expect 1 "cannot open 'nonexistent.raw': No such file" "$PROFVIEW" nonexistent.raw
printf 'hello, world\n' >text.txt
expect 1 "'text.txt' is not a profile" "$PROFVIEW" text.txt
: >empty.raw
expect 1 "'empty.raw' is empty" "$PROFVIEW" empty.raw
expect 1 "is a directory" "$PROFVIEW" .
# perf record's perf.data (its magic, then what perf writes): said what it
# is and how to read it, in one line, as a file and as standard input.
{ printf 'PERFILE2'; head -c 4088 /dev/urandom; } >perf.data
expect 1 "^profview: 'perf.data' is a perf.data file: give profview its text, perf script -i perf.data \\| profview -" "$PROFVIEW" perf.data
[ "$(wc -l <err.txt)" -eq 1 ] || fail "perf.data should get one line: $(cat err.txt)"
grep -q 'profile.proto' err.txt && fail "perf.data taken for a pprof profile: $(cat err.txt)"
expect 1 "^profview: 'standard input' is a perf.data file" sh -c '"$1" - <perf.data' sh "$PROFVIEW"
expect 2 "unrecognized option|unknown option" "$PROFVIEW" --no-such-option x
expect 2 "invalid --noisefloor" "$PROFVIEW" --noisefloor=abc x
expect 2 "invalid --tid" "$PROFVIEW" --tid=1,x x
expect 2 "no trace given" "$PROFVIEW"
printf 'main;f 3\n' >f.folded
expect 1 "no sample type 'nosuch' \\(it has: samples\\)" "$PROFVIEW" --flat --sample-index=nosuch f.folded
# The browser says the same, and nothing else.
expect 1 "no sample type 'nosuch'" "$PROFVIEW" --tui --sample-index=nosuch f.folded
[ "$(wc -l <err.txt)" -eq 1 ] || fail "the browser's error is not one line: $(cat err.txt)"
"$PROFVIEW" --help | grep -q -- '--noisefloor' || fail "profview --help"
[ "$(wc -l <err.txt)" -le 2 ] || fail "too much said for a usage error"

# A real trace, then damaged copies of it.
build split
"$COLLECT_TIMER" -q -o good.raw ./split 0.3 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --flat good.raw >good.txt 2>good.err || fail "profview on a good trace"
[ ! -s good.err ] || fail "warnings on a good trace: $(cat good.err)"
size=$(stat -c %s good.raw)
head -c $((size - 13)) good.raw >cut.raw
expect 0 "dropped [0-9]+ bytes" "$PROFVIEW" --flat cut.raw
[ "$(wc -l <err.txt)" -eq 1 ] || fail "a cut trace should get one line: $(cat err.txt)"
grep -q 'hot_work' out.txt || fail "the cut trace lost its samples"
head -c 40 good.raw >header.raw
expect 1 "cut off inside its" "$PROFVIEW" header.raw
# The header says the program's architecture (ELF machine, offset 64): a
# trace of another one is refused, saying what it is.
[ "$(od -An -t u4 -j 64 -N 4 good.raw | tr -d ' ')" = 62 ] || fail "the trace does not say x86-64"
cp good.raw arm.raw
printf '\267\000\000\000' | dd of=arm.raw bs=1 seek=64 conv=notrunc 2>/dev/null
expect 1 "^profview: 'arm.raw': a trace of an aarch64 program \\(ELF machine 183\\): this profview reads x86-64 traces$" "$PROFVIEW" arm.raw
# A trace whose writer died: zeros where the end should be.
head -c $((size / 2)) good.raw >half.raw
head -c 65536 /dev/zero >>half.raw
set +e
"$PROFVIEW" --flat half.raw >out.txt 2>err.txt
set -e
grep -Eq "not finished|dropped" err.txt || fail "an unfinished trace is not reported: $(cat err.txt)"
"$PROFVIEW" -q --flat cut.raw >/dev/null 2>err.txt
[ ! -s err.txt ] || fail "-q still warns: $(cat err.txt)"
"$PROFVIEW" -o report.txt --flat good.raw || fail "-o failed"
cmp -s report.txt good.txt || fail "-o does not write what stdout gets"
expect 1 "cannot write" "$PROFVIEW" -o /nonexistent-dir/x.txt good.raw

# A trace that names a FIFO as its program: read it as addresses, never block.
mkfifo fifo1
perl -0777 -pe "s{\Q$WORK/split\E}{$WORK/fifo1}g" good.raw >fifo.raw
timeout 20 "$PROFVIEW" --flat fifo.raw >/dev/null 2>err.txt || fail "profview on a trace naming a FIFO: $(cat err.txt)"
grep -q "'$WORK/fifo1': not a regular file" err.txt || fail "no word about the FIFO: $(cat err.txt)"

# collect-timer
expect 127 "not found|No such file" "$COLLECT_TIMER" -q ./no-such-program
cat >static.c <<'PROG'
int main(void) { return 0; }
PROG
if "$CC" -static -o static static.c 2>/dev/null; then
	expect 1 "static" "$COLLECT_TIMER" -q ./static
else
	note "no static libc: static binary check skipped"
fi
cat >status.c <<'PROG'
#include <stdlib.h>
#include <signal.h>
int main(int argc, char **argv) { if (argc > 2) raise(SIGTERM); return atoi(argv[1]); }
PROG
"$CC" -o status status.c
set +e
"$COLLECT_TIMER" -q -o s.raw ./status 7 >/dev/null 2>&1
[ $? -eq 7 ] || fail "collect-timer does not pass on the program's exit status"
"$COLLECT_TIMER" -q -o t.raw ./status 0 kill >/dev/null 2>&1
[ $? -eq 143 ] || fail "a program killed by SIGTERM should give 128+15"
set -e
expect 2 "unrecognized option|unknown option|invalid" "$COLLECT_TIMER" --no-such-option ./split

# A usage error is said alike by every tool: what is wrong, then the line
# that points to --help, and nothing more.
COLLECT_GDB=$(cd "$(dirname "$PROFVIEW")/../collectors/gdb" && pwd)/collect-gdb
usage_said() {
	local tool=$1
	shift
	expect 2 "^$tool: " "$@"
	[ "$(wc -l <err.txt)" -eq 2 ] || fail "'$*': not two lines: $(cat err.txt)"
	[ "$(sed -n 2p err.txt)" = "Try '$tool --help' for more information." ] ||
		fail "'$*': no line pointing to --help: $(cat err.txt)"
}
usage_said profview "$PROFVIEW" --nodecount=x x
grep -qx "profview: invalid --nodecount 'x': expected a whole number >= 0" <(head -1 err.txt) ||
	fail "a bad value is not said as the other tools say it: $(cat err.txt)"
usage_said profview "$PROFVIEW" --no-such-option x
grep -qx "profview: unknown option '--no-such-option'" <(head -1 err.txt) ||
	fail "an unknown option is not said as the other tools say it: $(cat err.txt)"
usage_said profview "$PROFVIEW" -o
usage_said collect-timer "$COLLECT_TIMER" --frequency=0 ./split
usage_said collect-timer "$COLLECT_TIMER" --unwind=nosuch ./split
usage_said collect-timer "$COLLECT_TIMER" -q
usage_said collect-gdb "$COLLECT_GDB" --interval=0 -p 1
usage_said collect-gdb "$COLLECT_GDB" --mode=nosuch -p 1
grep -qx "collect-gdb: invalid mode 'nosuch': expected 'persistent', 'batch' or 'eu-stack'" <(head -1 err.txt) ||
	fail "a bad choice is not said with the choices: $(cat err.txt)"
usage_said collect-gdb "$COLLECT_GDB" --no-such-option

# A small stack limit (it is inherited by the program too): collect-timer
# still runs the program and reports the trace.
st=0
(ulimit -s 1024 && exec "$COLLECT_TIMER" -o small.raw ./status 3) >/dev/null 2>small.err || st=$?
[ "$st" -eq 3 ] || fail "under ulimit -s 1024 collect-timer exited $st: $(cat small.err)"
grep -q "written to 'small.raw'" small.err || fail "under ulimit -s 1024 no summary: $(cat small.err)"
# A comparison of two profiles that each count but do not together: the
# error names both sides, not the base as if it alone were at fault.
printf 'a;b 5000000000000000000\n' >half1.folded
printf 'a;b 5000000000000000000\n' >half2.folded
"$PROFVIEW" --flat half1.folded >/dev/null 2>&1 || fail "a profile of 5e18 samples is refused alone"
st=0
"$PROFVIEW" --flat --diff-base=half1.folded half2.folded >/dev/null 2>cmp.err || st=$?
[ "$st" -ne 0 ] || fail "a comparison whose totals overflow succeeded"
[ "$(wc -l <cmp.err)" -eq 1 ] && grep -q "half1.folded.*half2.folded" cmp.err ||
	fail "the comparison's overflow does not name both sides: $(cat cmp.err)"
exit 0
