#!/usr/bin/env bash
# A run of several processes is named by the program collect-timer
# launched, whatever has the samples; a process that ran other programs is
# one process; collect-timer's summary and profview's header count the same
# processes; -v lists every process (collect-heap's too), the short summary each one once; the
# call graph splits by process as the tree does.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

# burn SECONDS [PROGRAM ARGS...]: CPU work, then its pid and its parent's
# on stdout, or run PROGRAM (exec) in its place.
cat >burn.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned long sink;
int main(int argc, char **argv)
{
	double want = argc > 1 ? atof(argv[1]) : 0.2;
	struct timespec t;
	do {
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i * i;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while (t.tv_sec + t.tv_nsec / 1e9 < want);
	if (argc > 2) {
		execv(argv[2], argv + 2);
		return 127;
	}
	printf("burn %d %d\n", (int)getpid(), (int)getppid());
	return 0;
}
EOF
"$CC" -O1 -g -o burn burn.c || fail "cannot build burn.c"
sh_path=$(readlink -f "$(command -v sh)")

# header_count FILE: "N K": the processes and those with samples of the header
header_count() {
	sed -n '2s/.*, \([0-9]*\) processes (\([0-9]*\) with samples).*/\1 \2/p' "$1"
}
# summary_count FILE: the same of collect-timer's summary
summary_count() {
	sed -n 's/^collect-timer: \([0-9]*\) processes, \([0-9]*\) with samples.*/\1 \2/p' "$1"
}

# A pipeline: the shell launched has (almost) no samples, its two children
# all of them; the run is the shell's, and has three processes.
"$COLLECT_TIMER" -o pipe.raw sh -c './burn 0.3 | ./burn 0.3 >>pipe.out' >pipe.out 2>pipe.err ||
	fail "the pipeline failed under collect-timer: $(cat pipe.err)"
shpid=$(awk '{ print $3 }' pipe.out | sort -u)
[ "$(echo "$shpid" | wc -l)" = 1 ] || fail "the two burns have different parents: $(cat pipe.out)"
"$PROFVIEW" --flat pipe.raw >pipe.txt 2>/dev/null || fail "profview on pipe.raw"
grep -q "^program: $sh_path (pid $shpid)," pipe.txt || fail "pipeline: not named by the shell $shpid: $(head -2 pipe.txt)"
set -- $(summary_count pipe.err)
[ "${1:-}" = 3 ] || fail "pipeline: collect-timer counts ${1:-no} processes, not 3: $(cat pipe.err)"
[ "$(header_count pipe.txt)" = "$1 $2" ] ||
	fail "pipeline: profview says '$(header_count pipe.txt)', collect-timer '$1 $2'"

# The call graph split by process: a node of each process, over its own
# nodes of the functions both run (main, once a process).
"$PROFVIEW" --svg -o pipe.svg pipe.raw 2>/dev/null || fail "profview --svg on pipe.raw"
"$PROFVIEW" --svg --processes -o pipe-procs.svg pipe.raw 2>/dev/null || fail "profview --svg --processes on pipe.raw"
labels() { grep -c ">$1</text>" "$2"; }
[ "$(labels main pipe.svg)" = 1 ] || fail "--svg: main is not one node"
[ "$(labels main pipe-procs.svg)" = 2 ] || fail "--svg --processes: main is not a node in each of the two processes"
for pid in $(awk '{ print $2 }' pipe.out); do
	# (", first dash" too when the shell's image before its exec got a sample)
	[ "$(labels "\[process $pid &quot;burn&quot;\(, first [^]]*\)\?\]" pipe-procs.svg)" = 1 ] ||
		fail "--svg --processes: no node of process $pid"
done

# A script that runs a child and then execs the program: its process is one,
# named by the program, with the shell it was first; the run is named by it.
printf '#!/bin/sh\nd=$(basename /x/y)\nexec ./burn 0.4\n' >wrap.sh
chmod +x wrap.sh
"$COLLECT_TIMER" -o wrap.raw ./wrap.sh >wrap.out 2>wrap.err || fail "wrap.sh failed: $(cat wrap.err)"
bpid=$(awk '{ print $2 }' wrap.out)
"$PROFVIEW" --processes --maxdepth=1 wrap.raw >wrap.txt 2>/dev/null || fail "profview --processes on wrap.raw"
grep -q "^program: $WORK/burn (pid $bpid, first $(basename "$sh_path"))," wrap.txt ||
	fail "exec: the run is not named by burn, pid $bpid, first the shell: $(head -1 wrap.txt)"
[ "$(grep -c "\[process $bpid " wrap.txt)" = 1 ] || fail "exec: pid $bpid is not one node: $(cat wrap.txt)"
grep -q "\[process $bpid \"burn\", first $(basename "$sh_path")\]" wrap.txt ||
	fail "exec: pid $bpid is not named burn, first the shell: $(cat wrap.txt)"
set -- $(summary_count wrap.err)
[ "${1:-}" = 2 ] || fail "exec: collect-timer counts ${1:-no} processes, not 2: $(cat wrap.err)"
"$PROFVIEW" --flat wrap.raw >wrapf.txt 2>/dev/null || fail "profview --flat on wrap.raw"
got=$(header_count wrapf.txt)
[ "$got" = "$1 $2" ] || fail "exec: profview says '$got', collect-timer '$1 $2'"
grep -q "^collect-timer: pid $bpid (burn, first $(basename "$sh_path")): " wrap.err ||
	fail "exec: the summary does not name pid $bpid by burn and the shell: $(cat wrap.err)"

# A process busy before and after its exec: one line of the summary, one
# node of the tree, whose samples are both images'.
# (the process's CPU time goes on across the exec: the second burns 0.3 s)
"$COLLECT_TIMER" -o twice.raw ./burn 0.3 ./burn 0.6 >twice.out 2>twice.err || fail "burn twice failed: $(cat twice.err)"
tpid=$(awk '{ print $2 }' twice.out)
[ "$(grep -c "^collect-timer: pid $tpid (burn): " twice.err)" = 1 ] ||
	fail "the two images of pid $tpid are not one line: $(cat twice.err)"
"$PROFVIEW" --processes twice.raw >twice.txt 2>/dev/null || fail "profview --processes on twice.raw"
[ "$(grep -c '\[process ' twice.txt)" = 1 ] || fail "the two images are not one process: $(cat twice.txt)"
n=$(sed -n 's/^collect-timer: pid [0-9]* (burn): \([0-9]*\) samples.*/\1/p' twice.err)
grep -qE "^ *$n .*\[process $tpid \"burn\", first burn\]" twice.txt ||
	fail "the process node of pid $tpid has not the $n samples: $(head -8 twice.txt)"

# Six busy children: the summary lists three, each once, and says how many
# it left out; -v lists every image and says nothing is left out.
"$COLLECT_TIMER" -o six.raw sh -c 'for i in 1 2 3 4 5 6; do ./burn 0.2 & done; wait' >six.out 2>six.err ||
	fail "six children failed: $(cat six.err)"
# (the lines of processes' samples, not a notice a process may also give)
dups=$(grep -E '^collect-timer: pid [0-9]+ \([^)]*\): [0-9]+ samples?' six.err | grep -o '^collect-timer: pid [0-9]* ' | sort | uniq -d)
[ -z "$dups" ] || fail "a process listed twice: $(cat six.err)"
[ "$(grep -cE '^collect-timer: pid [0-9]+ \([^)]*\): [0-9]+ samples?' six.err)" = 3 ] || fail "not three processes listed: $(cat six.err)"
set -- $(summary_count six.err)
[ "${2:-0}" -ge 6 ] || fail "fewer than the six busy processes with samples: $(cat six.err)"
grep -q "($(($2 - 3)) more not listed; -v lists every one)" six.err ||
	fail "no notice of the $(($2 - 3)) left out: $(cat six.err)"
"$COLLECT_TIMER" -v -o sixv.raw sh -c 'for i in 1 2 3 4 5 6; do ./burn 0.2 & done; wait' >sixv.out 2>sixv.err ||
	fail "six children failed with -v: $(cat sixv.err)"
! grep -q 'not listed' sixv.err || fail "-v still says processes are not listed: $(cat sixv.err)"
for pid in $(awk '{ print $2 }' sixv.out); do
	# its burn image once (with the shell's image before its exec named in
	# its line, or, when that image got a sample, said in a line of its own)
	[ "$(grep -c "^collect-timer: pid $pid (burn" sixv.err)" = 1 ] ||
		fail "-v: burn $pid is not listed once: $(cat sixv.err)"
	[ "$(grep -cE "^collect-timer: pid $pid \([^)]*\): [0-9]+ samples?" sixv.err)" -le 2 ] ||
		fail "-v: pid $pid is listed more than once per image: $(cat sixv.err)"
	grep -Eq "^collect-timer: pid $pid \(burn(, after [a-z, ]+)?\): [0-9]+ samples" sixv.err ||
		fail "-v: burn $pid's line does not name it: $(cat sixv.err)"
done
# collect-heap the same: six children allocating, -v lists each once
build heapcases
"$COLLECT_HEAP" -v -o sixh.raw sh -c 'for i in 1 2 3 4 5 6; do ./heapcases known & done; wait' >/dev/null 2>sixh.err ||
	fail "collect-heap: six children failed with -v: $(cat sixh.err)"
! grep -q 'not listed' sixh.err || fail "collect-heap -v still says processes are not listed: $(cat sixh.err)"
# (a shell's image with a sample before its exec has a line of its own)
dups=$(grep -o '^collect-heap: pid [0-9]* (heapcases' sixh.err | sort | uniq -d)
[ -z "$dups" ] || fail "collect-heap -v lists a process twice: $(cat sixh.err)"
[ "$(grep -Ec '^collect-heap: pid [0-9]+ \(heapcases(, after [a-z, ]+)?\): [1-9][0-9]* samples' sixh.err)" = 6 ] ||
	fail "collect-heap -v does not list the six children with their samples: $(cat sixh.err)"
exit 0
