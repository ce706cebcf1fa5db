#!/usr/bin/env bash
# Whole runs: the file given to collect-timer holds every process of the
# command.  A compiler-driver-like tree (fork+exec of a child, and one
# through a shell that execs it, while the parent works) is one file whose
# flat profile gives each process the share of the CPU time it measured
# itself; --processes and --pid see the processes; the exec'd images
# before their exec leave nothing and no warning; a shell script of 1,000
# short commands leaves one trace and a few lines; a process that left by
# _exit is a normal end, said nothing of.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

build driver
"$CC" -O1 -g -fno-omit-frame-pointer -pthread -o tcases "$SRCDIR/tests/progs/timer-cases.c" ||
	fail "cannot build timer-cases"

# cum_pct FILE FUNCTION: the cumulative share (percent) of FUNCTION in a --flat report
cum_pct() {
	awk -v f="$2" '$6 == f { sub(/%/, "", $4); print $4; found = 1; exit }
		END { if (!found) print 0 }' "$1"
}

mkdir d
"$COLLECT_TIMER" -o d/run.raw ./driver >d.out 2>d.err || fail "driver failed under collect-timer: $(cat d.err)"
[ "$(ls d)" = run.raw ] || fail "the run left more than its file: $(ls d | tr '\n' ' ')"
# (not counting the line on the collector's own CPU time, said when it is
# more than a hundredth of the run's)
# (the lines of the summary but the collector's: at most four processes'
# (three and a line of how many more, or all four), the run's, and the CPU
# time in no sample; which short processes get a sample is chance, so the
# bound is the most the summary writes, not what one run had)
others() { grep -vc '^collect-timer: collector: ' "$1" || true; }
[ "$(others d.err)" -le 6 ] || fail "more than 6 lines on stderr: $(cat d.err)"
grep -q "^collect-timer: [0-9]* processes, [3-9] with samples.*written to 'd/run.raw'" d.err ||
	fail "no summary of the run: $(cat d.err)"
"$PROFVIEW" --flat d/run.raw >d.txt 2>d.perr || fail "profview on the run: $(cat d.perr)"
[ ! -s d.perr ] || fail "profview warns about the run: $(cat d.perr)"
# the same processes counted by both
said=$(sed -n "s/^collect-timer: \([0-9]*\) processes, \([0-9]*\) with samples.*/\1 processes (\2 with samples)/p" d.err)
grep -q "^profile: .* $said, [3-9] threads" d.txt || fail "header: $(sed -n 2p d.txt), collect-timer: $said"
total=$(awk '$1 == "cpu" { t += $4 } END { print t }' d.out)
for who in driver cc1 as; do
	want=$(awk -v w="$who" -v t="$total" '$1 == "cpu" && $2 == w { print 100 * $4 / t }' d.out)
	got=$(cum_pct d.txt "${who}_work")
	note "${who}_work: $got% of the profile, $want% of the CPU time the processes measured"
	awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 5) }' ||
		fail "${who}_work: $got% of the profile, not within 5 points of $want%"
done
# each process by itself
"$PROFVIEW" --processes d/run.raw >dp.txt || fail "profview --processes"
for who in driver cc1 as; do
	pid=$(awk -v w="$who" '$1 == "cpu" && $2 == w { print $3 }' d.out)
	# (named ", first dash" too when the shell's image before the exec
	# happened to get a sample)
	grep -qE "\[process $pid \"driver\"(, first [^]]*)?\]" dp.txt || fail "--processes: no node for pid $pid: $(cat dp.txt)"
	"$PROFVIEW" --flat --pid="$pid" d/run.raw >dpid.txt || fail "profview --pid=$pid"
	# (one process, even when the child's timer fired in the instant
	# between its fork and its exec: its two images are one process)
	grep -qE "^profile: .* 1 process, .*\(pid $pid\)" dpid.txt || fail "--pid=$pid: $(sed -n 2p dpid.txt)"
	"$PROFVIEW" --processes --maxdepth=1 --pid="$pid" d/run.raw | grep '\[process ' |
		grep -v "\[process $pid " && fail "--pid=$pid: another process in it"
	got=$(cum_pct dpid.txt "${who}_work")
	awk -v s="$got" 'BEGIN { exit !(s >= 80) }' || fail "--pid=$pid: ${who}_work only $got%"
	for other in driver cc1 as; do
		[ "$other" = "$who" ] && continue
		[ "$(cum_pct dpid.txt "${other}_work")" = 0 ] || fail "--pid=$pid: ${other}_work in it"
	done
done
# a thread row says its process; pprof labels carry it
"$PROFVIEW" --threads --maxdepth=1 d/run.raw >dt.txt || fail "profview --threads"
grep -q '\[thread [0-9]* "driver" in pid [0-9]* (driver)\]' dt.txt || fail "--threads: $(cat dt.txt)"
# -v: every process, those without samples too
mkdir v
"$COLLECT_TIMER" -v -o v/run.raw ./driver >v.out 2>v.err || fail "driver failed with -v"
for pid in $(awk '$1 == "cpu" { print $3 }' v.out); do
	grep -Eq "^collect-timer: pid $pid \(driver(, after [a-z, ]+)?\): .* in 'v/run.raw'" v.err ||
		fail "-v: pid $pid missing: $(cat v.err)"
done
# the shell's image: a line of its own when it has something to say, else
# named in the line of the program it ran
grep -q "^collect-timer: pid [0-9]* (dash\|sh): .*not kept" v.err ||
	grep -q "^collect-timer: pid [0-9]* (dash\|sh): .* in 'v/run.raw'; then the process ran another program" v.err ||
	grep -Eq "^collect-timer: pid [0-9]+ \([a-z]+, after ([a-z]+, )*(dash|sh)(, [a-z]+)*\): " v.err ||
	fail "-v: the shell's image is not listed: $(cat v.err)"

# An exec chain through a shell, with short helpers, like a pyenv shim.
cat >shim <<SHIM
#!/bin/sh
a=\$(basename /x/y/z)
b=\$(dirname /x/y/z)
c=\$(readlink -f /bin/sh)
exec ./driver cc1 0.3
SHIM
chmod +x shim
mkdir s
"$COLLECT_TIMER" -o s/run.raw ./shim >s.out 2>s.err || fail "the shim failed: $(cat s.err)"
[ "$(ls s)" = run.raw ] || fail "the shim left more than its file: $(ls s | tr '\n' ' ')"
[ "$(others s.err)" -le 6 ] || fail "the shim: more than 6 lines on stderr: $(cat s.err)"
"$PROFVIEW" --flat s/run.raw >s.txt 2>s.perr || fail "profview on the shim's run"
[ ! -s s.perr ] || fail "profview warns about the shim's run: $(cat s.perr)"
got=$(cum_pct s.txt cc1_work)
awk -v s="$got" 'BEGIN { exit !(s >= 80) }' || fail "the shim: cc1_work only $got%: $(head -8 s.txt)"

# A shell script of 1,100 short commands: every process counted, none
# left out however many, one file.
printf 'i=0\nwhile [ $i -lt 1100 ]; do /bin/true; i=$((i+1)); done\n' >loop.sh
mkdir l
"$COLLECT_TIMER" -o l/run.raw sh loop.sh >/dev/null 2>l.err || fail "the loop failed: $(cat l.err)"
[ "$(ls l)" = run.raw ] || fail "the loop left $(ls l | wc -l) files"
[ "$(others l.err)" -le 6 ] || fail "the loop: $(wc -l <l.err) lines on stderr: $(cat l.err)"
grep -q '^collect-timer: 1101 processes, ' l.err || fail "the loop: not 1,101 processes: $(cat l.err)"
"$PROFVIEW" --flat l/run.raw >/dev/null 2>l.perr || fail "profview on the loop's run: $(cat l.perr)"

# A child that leaves by _exit (no exit handlers) ended as it meant to:
# its trace is whole up to its last record, and nothing is said of it.
mkdir k
"$COLLECT_TIMER" -o k/run.raw sh -c './tcases exit 3; ./driver as 0.1' >/dev/null 2>k.err ||
	fail "the _exit case failed: $(cat k.err)"
! grep -q "killed\|exit handlers" k.err || fail "collect-timer says the _exit child was cut short: $(cat k.err)"
"$PROFVIEW" --flat k/run.raw >/dev/null 2>k.perr || fail "profview on the _exit run"
[ ! -s k.perr ] || fail "profview warns about the child that left by _exit: $(cat k.perr)"
exit 0
