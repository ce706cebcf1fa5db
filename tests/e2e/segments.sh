#!/usr/bin/env bash
# collect-timer --split: segments appear while the program runs, each a
# trace profview reads alone; together they hold the whole run, every
# sample once and each thread's CPU time as its own clock says; the part of
# the trace already cut is given back to the file system as the program
# runs; a segment converts to pprof with its own length; --keep-segments
# keeps the last ones.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
build pauser
cd "$WORK"

# waitfor FILE: until FILE exists, at most 30 s.
waitfor() {
	for _ in $(seq 300); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	fail "no $1 after 30 s: $(ls)"
}

# waitfor_seg NAME N M: until a segment NAME.segNNNN.raw numbered N to M
# exists, at most 30 s (with --keep-segments one lives only as long as the
# next few take, which a loaded machine's polling can miss).
waitfor_seg() {
	local f n
	for _ in $(seq 300); do
		for f in "$1".seg[0-9][0-9][0-9][0-9].raw; do
			[ -e "$f" ] || continue
			n=${f#"$1".seg}
			n=$((10#${n%.raw}))
			[ "$n" -ge "$2" ] && [ "$n" -le "$3" ] && return 0
		done
		sleep 0.1
	done
	fail "no segment $2 to $3 of $1 after 30 s: $(ls)"
}

# 1. A program that runs until told to stop, cut every half second; with
# stack copies (--unwind=dwarf), megabytes a second, so that the trace's
# disk space is seen given back within seconds, well inside the program's
# minute, also on a slow machine.
"$COLLECT_TIMER" --split=0.5 --engine=perf -F 1000 --unwind=dwarf -o s.raw ./pauser until stop >s.out 2>s.err &
launcher=$!
waitfor s.seg0002.raw
kill -0 $launcher 2>/dev/null || fail "collect-timer ended before it was told: $(cat s.err)"
# A segment, read alone while the program runs: whole, finished, private.
"$PROFVIEW" --flat s.seg0001.raw >one.txt 2>one.err || fail "profview cannot read the first segment: $(cat one.err)"
[ ! -s one.err ] || fail "profview warns about a finished segment: $(cat one.err)"
[ "$(stat -c %a s.seg0001.raw)" = 600 ] || fail "a segment is not private: mode $(stat -c %a s.seg0001.raw)"
# What was cut is a hole in the trace the program writes, up to a 2 MiB
# boundary: once the segments hold 12 MiB, the holes are what they hold
# but for the 2 MiB, each segment's header, mappings and threads (some
# kilobytes), and what collect-timer copied in the read it has not yet
# punched after (a tenth of a second: about 1 MB here, twice that if it
# is slow to get a CPU): 6 MiB is room enough.
for _ in $(seq 300); do
	cut=$(cat s.seg*.raw | wc -c)
	[ "$cut" -ge $((12 << 20)) ] && break
	sleep 0.1
done
read -r blocks bsize size < <(stat -c '%b %B %s' s.raw)
freed=$((size - blocks * bsize))
note "the program's trace: $size bytes long, $((blocks * bsize)) allocated; $cut bytes in segments"
if ! grep -q 'cannot free the disk space' s.err; then
	[ "$freed" -ge $((cut - (6 << 20))) ] || fail "the trace's disk space is not freed as it is cut: $freed bytes free"
fi
touch stop
wait $launcher || fail "collect-timer --split failed: $(cat s.err)"
cat s.out s.err
[ ! -e s.raw ] || fail "the program's whole trace is left next to its segments"
summary=$(grep 'samples (' s.err)
total=$(sed -E 's/^collect-timer: pid [0-9]+ \(pauser\): ([0-9]+) samples.*/\1/' <<<"$summary")
n=$(sed -nE "s/.*written to ([0-9]+) segments, 's\.seg0001\.raw' to 's\.seg0*([0-9]+)\.raw'.*/\1 \2/p" <<<"$summary")
[ -n "$n" ] || fail "collect-timer does not list the segments: $summary"
read -r count last <<<"$n"
[ "$count" = "$last" ] && [ "$count" -ge 3 ] || fail "want 3 segments or more, numbered from 1: $summary"

# Each alone: read without a word of warning, finished, and its samples
# those its end record counts; together every sample of the run once.
sum=0
for f in s.seg*.raw; do
	"$PROFVIEW" --flat "$f" >f.txt 2>f.err || fail "profview cannot read $f: $(cat f.err)"
	[ ! -s f.err ] || fail "$f: $(cat f.err)"
	"$RAWDUMP" "$f" >f.dump
	k=$(grep -cE '^(regs|sample) ' f.dump || true)
	[ "$(awk '$1 == "end" { print $3 }' f.dump)" = "$k" ] || fail "$f: $k samples, its end record says otherwise"
	! grep -q '^stop' f.dump || fail "$f: $(grep '^stop' f.dump)"
	sum=$((sum + k))
	cat f.dump >>all.dump
done
note "$count segments, $sum samples in them, $total in collect-timer's summary"
[ "$sum" = "$total" ] || fail "the segments hold $sum samples, the run $total"

# CPU time: each segment shares out what its thread records say, and
# those add up, segment after segment, to the thread's whole stretch:
# from its first thread record to its last exit record, exactly.
awk '
	$1 == "thread" { if (!($2 in first)) first[$2] = $4; open[$2] = $4 }
	$1 == "exit" { sum[$2] += $4 - open[$2]; last[$2] = $4 }
	END { for (t in sum) if (sum[t] != last[t] - first[t]) { print t, sum[t], last[t] - first[t]; bad = 1 } exit bad }' all.dump >cpu.bad ||
	fail "a thread's CPU time in the segments does not add up: $(cat cpu.bad)"
# ... which is what the threads' own clocks say: the worker's from its
# start, the main thread's from when the library started (its first
# record).
main=$(awk '$1 == "header" { print $2; exit }' all.dump)
"$PROFVIEW" --threads --maxdepth=0 s.seg*.raw >threads.txt 2>threads.err ||
	fail "profview cannot read the segments together: $(cat threads.err)"
[ ! -s threads.err ] || fail "profview warns about the segments together: $(cat threads.err)"
cat threads.txt
base=$(awk -v m="$main" '$1 == "thread" && $2 == m { print $4; exit }' all.dump)
for who in main worker; do
	ns=$(awk -v w=$who '$1 == "cpu" && $2 == w { print $3 }' s.out)
	[ $who = main ] && ns=$((ns - base))
	if [ $who = main ]; then
		ms=$(awk -v m="$main" 'index($0, "[thread " m " ") { print $4 }' threads.txt)
	else
		ms=$(awk -v m="$main" '/\[thread / && !index($0, "[thread " m " ") { print $4 }' threads.txt)
	fi
	note "$who: $ms ms in the segments, $((ns / 1000)) us by its clock"
	# The thread's end is read a few microseconds after it printed its
	# time; 1 ms (with the report's 0.1 ms rounding) plus 0.1%.
	awk -v ms="$ms" -v ns="$ns" 'BEGIN { d = ms - ns / 1e6; if (d < 0) d = -d; exit !(ms != "" && d <= 0.001 * ns / 1e6 + 1) }' ||
		fail "$who: the segments charge $ms ms, its clock says $((ns / 1000000)) ms"
done
# At 1000 Hz a perf event per thread takes close to a thousand samples a
# second of its CPU time (992 to 998 measured, under a CPU hog too); POSIX
# timers, where perf events are refused, one a tick: 250, and no fewer
# than one every two periods of a thread the tick misses.
cpu_ms=$(awk 'NR > 2 && /\[thread / { s += $4 } END { print s }' threads.txt)
floor=600
grep -q 'perf events are not permitted' s.err && floor=100
awk -v n="$sum" -v ms="$cpu_ms" -v f=$floor 'BEGIN { exit !(n / (ms / 1000) > f) }' ||
	fail "$sum samples for $cpu_ms ms of CPU time"

# pprof: a segment's profile is as long as the segment.
"$PROFVIEW" --pprof -o seg2.pb.gz s.seg0002.raw || fail "profview --pprof failed on a segment"
"$PROFVIEW" --flat seg2.pb.gz >seg2.txt 2>/dev/null || fail "profview cannot read back a segment's pprof"
grep -q '^profile: 500\.0 ms,' seg2.txt || fail "the second segment's pprof profile is not 0.5 s long: $(sed -n 2p seg2.txt)"

# 2. --keep-segments=2: the last two only; segments of an earlier run by
# the same name are removed first.
: >k.seg0042.raw
"$COLLECT_TIMER" --split=0.2 --keep-segments=2 -o k.raw ./pauser until stop2 >/dev/null 2>k.err &
launcher=$!
waitfor_seg k 5 20
touch stop2
wait $launcher || fail "collect-timer --keep-segments failed: $(cat k.err)"
cat k.err
ls k.seg* >k.ls
[ "$(wc -l <k.ls)" = 2 ] || fail "--keep-segments=2 left $(tr '\n' ' ' <k.ls)"
last=$(sed -nE "s/.*'k\.seg0*([0-9]+)\.raw' to 'k\.seg0*([0-9]+)\.raw'.*/\1 \2/p" k.err)
read -r a b <<<"$last"
[ -n "$a" ] && [ $((b - a)) = 1 ] && [ -e "$(printf 'k.seg%04d.raw' "$b")" ] ||
	fail "--keep-segments=2: the summary does not name the last two kept: $(cat k.err)"
grep -q "the last 2 kept: 'k" k.err || fail "--keep-segments: the summary does not say the others were removed"
for f in k.seg*.raw; do
	"$PROFVIEW" --flat "$f" >/dev/null 2>f.err && [ ! -s f.err ] || fail "profview on $f: $(cat f.err)"
done

# 3. --duration ends the profile, not the program: the last segment is
# written, and the program's trace removed, while the program runs on;
# no segment comes after.
"$COLLECT_TIMER" --split=0.3 --duration=0.7 -o d.raw ./pauser until stop3 >/dev/null 2>d.err &
launcher=$!
for _ in $(seq 300); do
	[ -e d.seg0001.raw ] && [ ! -e d.raw ] && break
	sleep 0.1
done
[ -e d.seg0001.raw ] && [ ! -e d.raw ] || fail "--duration: the trace is left, or no segment: $(ls d.*)"
n=$(ls d.seg*.raw | wc -l)
sleep 0.6
pgrep -P $launcher >/dev/null || fail "--duration: the program did not run on"
[ "$(ls d.seg*.raw | wc -l)" = "$n" ] || fail "--duration: a segment after the end of the profile: $(ls d.*)"
touch stop3
wait $launcher || fail "collect-timer --split --duration failed: $(cat d.err)"
grep -q "written to $n segments" d.err || fail "--duration: not $n segments: $(cat d.err)"

# 4. Segments that cannot be written (here: a directory where segment 2's
# part file and segment 3's name would go, as a full disk would fail them)
# are lost, and said to be: their samples are counted in the summary's
# "lost", with the segments and their time in the run; the others are
# written, and profview, merging them, warns about the gap with the same
# count.
mkdir f.seg0002.raw.part
mkdir -p f.seg0003.raw/busy
"$COLLECT_TIMER" --split=0.4 -o f.raw ./pauser until stop4 >/dev/null 2>f.err &
launcher=$!
waitfor f.seg0005.raw
touch stop4
wait $launcher || fail "collect-timer --split with segments it cannot write failed: $(cat f.err)"
cat f.err
grep -q "cannot write 'f.seg0002.raw.part'.*segment 2 is lost" f.err || fail "segment 2's failure is not said"
grep -q "cannot write 'f.seg0003.raw'.*segment 3 is lost" f.err || fail "segment 3's failure is not said"
summary=$(grep 'samples (' f.err)
re='^collect-timer: pid [0-9]+ \([^)]*\): ([0-9]+) samples .* ([0-9]+) lost \(([0-9]+) in segments 2 to 3, 400\.0 ms to 1\.20 s of the run, that could not be written: Is a directory\)'
[[ $summary =~ $re ]] || fail "the summary does not count the lost segments' samples as lost: $summary"
total=${BASH_REMATCH[1]} lost=${BASH_REMATCH[2]} inlost=${BASH_REMATCH[3]}
[ "$lost" -ge "$inlost" ] || fail "lost $lost, of which $inlost in the lost segments"
grep -q '2 segments could not be written' <<<"$summary" || fail "the summary does not say 2 segments were not written"
sum=0
for f in f.seg*.raw; do
	[ -f "$f" ] || continue
	"$RAWDUMP" "$f" >f.dump
	sum=$((sum + $(grep -cE '^(regs|sample) ' f.dump || true)))
done
[ "$sum" = "$total" ] || fail "the segments written hold $sum samples, the summary says $total"
"$PROFVIEW" --flat f.seg0001.raw f.seg0004.raw f.seg0005.raw >/dev/null 2>g.err ||
	fail "profview cannot merge the segments around the gap: $(cat g.err)"
cat g.err
grep -qx "profview: warning: the segments merged leave a gap: segments 2 to 3 of the run, 400\.0 ms to 1\.20 s, are missing: they could not be written (Is a directory), $inlost samples\? lost" g.err ||
	fail "profview does not warn about the segments that could not be written: $(cat g.err)"
# a segment left out by the user is a gap too, but not a lost one
"$PROFVIEW" --flat f.seg0001.raw f.seg0005.raw >/dev/null 2>h.err || fail "profview: $(cat h.err)"
grep -q "segments 2 to 4 of the run, 400\.0 ms to 1\.60 s, are missing: they are not among the profiles given" h.err ||
	fail "profview does not warn about a segment left out: $(cat h.err)"
# segments that follow each other, after segments that could not be
# written: those are said, as lost, the first ones as not given
"$PROFVIEW" --flat f.seg0004.raw f.seg0005.raw >i.txt 2>i.err || fail "profview: $(cat i.err)"
grep -qx "profview: warning: the segments read start after the run's start: segments 1 to 3 of the run, 0\.0 ms to 1\.20 s, are missing: they are not among the profiles given, and the last 2 could not be written (Is a directory), $inlost samples\? lost" i.err ||
	fail "profview does not say the segments before the first read: $(cat i.err)"
grep -q "^program: .*, segments 4 to 5 of a run (1 to 3 not read)$" i.txt ||
	fail "the header does not say which segments were read: $(head -1 i.txt)"
# the last segment alone: the ones before it are not read, none lost: the
# header says it, no warning
"$PROFVIEW" --flat f.seg0005.raw >j.txt 2>j.err && [ ! -s j.err ] ||
	fail "profview warns about segment 5 read alone: $(cat j.err)"
grep -q "^program: .*, segment 5 of a run (1 to 4 not read)$" j.txt ||
	fail "the header does not say segment 5 was read alone: $(head -1 j.txt)"
# 6. Processes that live across the segments' boundaries, each of which
# blocks the profiling signal for 0.8 s of CPU time: its first sample
# after weighs all of it, more than a segment's 0.5 s, CPU time used in
# the segments before.  Each segment is a whole trace on its own, and the
# segments read together make one run of the three processes and their
# three threads, without a warning; their CPU time is what the processes
# used (each spins 1.2 s by its own clock, a little more to start and
# end).
build segworkers
"$COLLECT_TIMER" -q --split=0.5 -o w.raw ./segworkers 2 0.8 0.4 2>w.err ||
	fail "segworkers failed under collect-timer --split: $(cat w.err)"
for f in w.seg*.raw; do
	"$PROFVIEW" --flat "$f" >w1.txt 2>w1.err || fail "profview $f failed: $(cat w1.err)"
	[ -s w1.err ] && fail "$f read alone: $(cat w1.err)"
	grep -E '^warning: .*(damaged|dropped)' w1.txt && fail "$f read alone: $(grep '^warning' w1.txt)"
done
"$PROFVIEW" --flat w.seg*.raw >wall.txt 2>wall.err || fail "profview on the segments together failed: $(cat wall.err)"
[ -s wall.err ] && fail "the segments read together: $(cat wall.err)"
grep -E '^warning: .*(damaged|dropped)' wall.txt && fail "the segments read together: $(grep '^warning' wall.txt)"
grep -q '^profile: .* 3 processes, 3 threads$' wall.txt ||
	fail "the segments read together are not one run of 3 processes and 3 threads: $(head -3 wall.txt)"
ms=$(awk '/^profile:/ { for (i = 1; i <= NF; i++) if ($i == "CPU") {
	v = $(i + 1); u = $(i + 2); sub(/,$/, "", u); print (u == "s" ? v * 1000 : v); exit } }' wall.txt)
awk -v m="$ms" 'BEGIN { exit !(m >= 3 * 1200 * 0.99 && m <= 3 * 1200 + 600) }' ||
	fail "the segments hold $ms ms of CPU time; the processes used 3600 ms and a little more"

# 7. A trace that cannot grow (a file size limit, as a full disk would
# fail it): the samples lost in each segment's time are that segment's,
# said when it is read alone; together they are what the summary says.
# The program spins 3 s of CPU time; its stack copies (--unwind=dwarf)
# fill the 640 KiB in about a second of it, so samples are lost for the
# rest, at least 1.5 s of the run's time (CPU time runs no faster than
# the clock), over several segments of 0.3 s.
"$CC" -O1 -g -o accounted "$SRCDIR/tests/progs/accounted.c" || fail "cannot build accounted"
(ulimit -f 640 && exec "$COLLECT_TIMER" --split=0.3 --unwind=dwarf -o lim.raw ./accounted spin 3) \
	>/dev/null 2>lim.err || fail "--split under a file size limit failed: $(cat lim.err)"
total=$(sed -n 's/.* \([0-9][0-9]*\) lost (the trace could not grow.*/\1/p' lim.err)
[ "${total:-0}" -gt 0 ] || fail "no samples lost under the file size limit: $(cat lim.err)"
sum=0 lossy=0
for f in lim.seg*.raw; do
	"$PROFVIEW" --flat "$f" >lim1.txt 2>/dev/null || fail "profview $f failed"
	n=$(sed -n 's/^warning: \([0-9][0-9]*\) samples\? lost .*/\1/p' lim1.txt)
	[ -n "$n" ] || continue
	sum=$((sum + n))
	lossy=$((lossy + 1))
done
note "file size limit: $total samples lost, in $lossy segments"
[ "$sum" = "$total" ] || fail "the segments say $sum samples lost, the summary $total"
[ "$lossy" -ge 2 ] || fail "the samples lost are said in $lossy segment(s), not in each one's own time"

exit 0
