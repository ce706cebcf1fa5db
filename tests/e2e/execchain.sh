#!/usr/bin/env bash
# A process that runs 60 programs one after the other by exec, each
# spinning 1 ms of CPU time: each image's CPU time is counted with the
# run's, though no destructor runs at an exec (the library ends its
# threads' times there), and the CPU time of the images with no sample is
# said with what it is.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
build execchain
cd "$WORK"

"$COLLECT_TIMER" -o chain.raw ./execchain 59 1000 >chain.out 2>chain.err ||
	fail "collect-timer failed: $(cat chain.err)"
total=$(sed -n 's/^cpu \([0-9.]*\)$/\1/p' chain.out)
[ -n "$total" ] || fail "execchain printed no CPU time: $(cat chain.out)"
grep -q "^collect-timer: 1 process, " chain.err || fail "not one process: $(cat chain.err)"
# The run's CPU time as the summary counts it: the line of the CPU time in
# no sample (at 250 Hz an image of 1 ms gets no sample more often than
# not: that line is there) says it.
line=$(grep "is in no sample" chain.err) || fail "no line of the CPU time in no sample: $(cat chain.err)"
case $line in
*": that of "*" programs that ran another (exec) or ended before their first sample"*) ;;
*) fail "the CPU time in no sample is not said to be the programs': $line" ;;
esac
counted=$(echo "$line" | sed -n 's/.* of the \([0-9.]*\) \(ms\|s\) of CPU time .*/\1 \2/p' |
	awk '{ print ($2 == "s" ? $1 * 1000 : $1) }')
[ -n "$counted" ] || fail "no CPU time in: $line"
note "the thread's CPU time $total ms, counted $counted ms"
# Each image's 1 ms of spinning is between its start and its exec, so 60 ms
# at least are counted; at most what the thread used in all (the images'
# starts before the library's are not).
awk -v c="$counted" -v t="$total" 'BEGIN { exit !(c >= 60 && c <= t) }' ||
	fail "counted $counted ms of CPU time: not between 60 ms and the thread's $total ms"
# The exit records, one per image: the trace says each image's end.
n=$("$RAWDUMP" chain.raw | awk '$1 == "exit" { n++ } END { print n + 0 }')
[ "$n" = 60 ] || fail "$n thread ends for 60 images"
exit 0
