#!/usr/bin/env bash
# collect-heap: programs with known allocations (tests/progs/heapcases.c,
# heapcxx.cc) profiled and read back.  Blocks kept to the end are in use
# at the end, blocks freed at once are not, a peak freed before the end is
# at the peak and not at the end, each estimated within 5 sigma of the
# truth; every entry point of the allocator is seen, C++'s new through
# libstdc++ too, and allocations in a constructor, an atexit handler and a
# signal handler; one allocation under two callers from the same stack
# pointer is told apart; the processes a program forks and execs are traced; a
# program killed with SIGKILL leaves a trace that reads; pprof reads the
# sample types.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"
[ -x "$COLLECT_HEAP" ] || fail "no collect-heap next to $COLLECT_TIMER"

build heapcases
"$CXX" -O1 -g -o heapcxx "$SRCDIR/tests/progs/heapcxx.cc" || fail "cannot compile heapcxx.cc"

# by_function FILE: "function total" of a --folded report, by leaf
by_function() {
	awk '{ n = split($1, a, ";"); s[a[n]] += $NF } END { for (k in s) print k, s[k] }' "$1"
}
# in_stacks FILE FUNCTION: the total of the stacks through FUNCTION
in_stacks() {
	awk -v f="$2" '{ n = split($1, a, ";"); for (i = 1; i <= n; i++) if (a[i] == f) { s += $NF; break } }
		END { print s + 0 }' "$1"
}
value_of() {
	awk -v f="$2" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}
# report TRACE TYPE: the trace's --folded report by TYPE, by leaf, in TYPE.txt
report() {
	"$PROFVIEW" -q --folded --sample-index="$2" "$1" >"$2.folded" || fail "profview --sample-index=$2 of $1 failed"
	by_function "$2.folded" >"$2.txt"
}
# unsampled_ok ESTIMATE N SIZE RATE: is an estimate of the bytes of N
# blocks of SIZE, sampled at RATE, within 5 sigma of N*SIZE?  A block is
# sampled with p = 1-exp(-SIZE/RATE), independently: n ~ Binomial(N, p)
# and the estimate n SIZE/p has the relative sigma sqrt((1-p)/(N p)).
unsampled_ok() {
	awk -v e="$1" -v n="$2" -v s="$3" -v r="$4" 'BEGIN {
		p = 1 - exp(-s / r); t = n * s; sd = t * sqrt((1 - p) / (n * p))
		d = e - t; if (d < 0) d = -d
		exit !(d <= 5 * sd)
	}'
}

# ---- known allocations, at a rate that makes 5 sigma a close test ------
# (32 KiB blocks at 64 KiB: p = 0.39; 5 sigma is 14% of kept()'s bytes)
RATE=65536
SIZE=32768
"$COLLECT_HEAP" -q --rate=64k -o known.raw ./heapcases known || fail "collect-heap of heapcases known failed"
report known.raw inuse_space
report known.raw alloc_space
report known.raw peak_space
report known.raw inuse_objects
cat alloc_space.txt
kept=$(value_of inuse_space.txt kept)
unsampled_ok "$kept" 2000 $SIZE $RATE || fail "kept: $kept bytes in use at the end, not 2000 x $SIZE within 5 sigma"
transient=$(value_of alloc_space.txt transient)
unsampled_ok "$transient" 4000 $SIZE $RATE ||
	fail "transient: $transient bytes allocated, not 4000 x $SIZE within 5 sigma"
peak=$(value_of alloc_space.txt peak)
unsampled_ok "$peak" 3000 $SIZE $RATE || fail "peak: $peak bytes allocated, not 3000 x $SIZE within 5 sigma"

# An end by _exit: the library's _exit writes the end record the
# destructor would have, and what was in use is kept.
"$COLLECT_HEAP" -q --rate=64k -o quick.raw ./heapcases quick || fail "collect-heap of heapcases quick failed"
[ "$("$RAWDUMP" quick.raw | awk '$1 == "end" { n++ } END { print n + 0 }')" = 1 ] ||
	fail "quick: the trace of a program that ended by _exit has no end record"
"$PROFVIEW" --folded --sample-index=inuse_space quick.raw >quick.folded 2>quick.err ||
	fail "quick: profview failed: $(cat quick.err)"
[ ! -s quick.err ] || fail "quick: profview warns: $(cat quick.err)"
by_function quick.folded >quick.txt
unsampled_ok "$(value_of quick.txt kept)" 2000 $SIZE $RATE ||
	fail "quick: kept() holds $(value_of quick.txt kept) bytes at the _exit, not 2000 x $SIZE within 5 sigma"
# freed blocks are not in use at the end, exactly
[ "$(value_of inuse_space.txt transient)" = 0 ] ||
	fail "transient freed every block, yet $(value_of inuse_space.txt transient) bytes are in use"
[ "$(value_of inuse_space.txt peak)" = 0 ] ||
	fail "peak freed every block, yet $(value_of inuse_space.txt peak) bytes are in use"
# at the peak: all of peak()'s (the heap is largest after its last
# block), kept()'s, and none of transient()'s
[ "$(value_of peak_space.txt peak)" = "$peak" ] ||
	fail "peak: $(value_of peak_space.txt peak) bytes at the peak, of the $peak it allocated"
[ "$(value_of peak_space.txt kept)" = "$kept" ] ||
	fail "kept: $(value_of peak_space.txt kept) bytes at the peak, $kept at the end"
[ "$(value_of peak_space.txt transient)" = 0 ] ||
	fail "transient's blocks are at the peak: $(value_of peak_space.txt transient) bytes"
# objects: n/p blocks, each sample's count rounded at random (variance
# at most 1/4 a sample)
objects=$(value_of inuse_objects.txt kept)
awk -v e="$objects" -v s=$SIZE -v r=$RATE 'BEGIN { n = 2000; p = 1 - exp(-s / r)
	sd = sqrt(n * (1 - p) / p + n * p / 4); d = e - n; if (d < 0) d = -d; exit !(d <= 5 * sd) }' ||
	fail "kept: $objects blocks in use, not 2000 within 5 sigma"
note "kept $kept B in use ($objects blocks), transient $transient B allocated, peak $peak B at the peak"

# threads: each its own countdown; a block freed by another thread than
# the one that allocated it is freed
"$COLLECT_HEAP" -q --rate=64k -o threads.raw ./heapcases threads || fail "collect-heap of heapcases threads failed"
report threads.raw inuse_space
report threads.raw alloc_space
cat alloc_space.txt
t_kept=$(value_of inuse_space.txt thread_kept)
unsampled_ok "$t_kept" 4000 $SIZE $RATE || fail "thread_kept: $t_kept bytes in use, not 4000 x $SIZE within 5 sigma"
for f in thread_transient handoff; do
	[ "$(value_of inuse_space.txt $f)" = 0 ] || fail "$f freed its blocks, yet $(value_of inuse_space.txt $f) bytes are in use"
done
h=$(value_of alloc_space.txt handoff)
unsampled_ok "$h" 4000 $SIZE $RATE || fail "handoff: $h bytes allocated, not 4000 x $SIZE within 5 sigma"
# (the main thread only frees: it may have no sample of its own)
header=$("$PROFVIEW" -q --tree threads.raw | sed -n 2p)
nthreads=$(printf '%s\n' "$header" | sed -n 's/.*, \([0-9]*\) threads$/\1/p')
[ -n "$nthreads" ] && [ "$nthreads" -ge 4 ] || fail "threads.raw: not the program's threads: $header"
note "4 threads: thread_kept $t_kept B in use, handoff $h B allocated, none in use"

# twins: the same allocation from the same stack pointer, under two
# callers: the walk's words tell them apart (a walk taken again from the
# unwinder's table only while the stack still holds what it read)
"$COLLECT_HEAP" -q --rate=64k -o twins.raw ./heapcases twins || fail "collect-heap of heapcases twins failed"
"$PROFVIEW" -q --folded --sample-index=inuse_space twins.raw >twins.folded || fail "profview of twins.raw failed"
t_a=$(in_stacks twins.folded twin_a)
t_b=$(in_stacks twins.folded twin_b)
unsampled_ok "$t_a" 3000 $SIZE $RATE || fail "twin_a: $t_a bytes in use, not 3000 x $SIZE within 5 sigma"
unsampled_ok "$t_b" 1000 $SIZE $RATE || fail "twin_b: $t_b bytes in use, not 1000 x $SIZE within 5 sigma"
note "twins: twin_a $t_a B, twin_b $t_b B in use"

# the header: the default type is inuse_space, the rate is said, and the noise
# is that of the sampled blocks
"$PROFVIEW" -q --tree known.raw >tree.txt || fail "profview --tree of known.raw failed"
header=$(sed -n 2p tree.txt)
case $header in
*"inuse_space "*" MiB in "*" samples (a sample every 65536 bytes on average)"*) ;;
*) fail "known.raw's header: $header" ;;
esac
n_kept=$(awk '$NF ~ /heapcases.c:/ && $(NF-1) == "kept" { print $1; exit }' tree.txt)
within_sigma "$n_kept" 2000 "$(awk 'BEGIN { print 1 - exp(-0.5) }')" 5 0 ||
	fail "kept: $n_kept blocks sampled, not 2000 x p within 5 sigma"
# --lines: the line of the allocation
"$PROFVIEW" -q --flat --lines --sample-index=alloc_space known.raw >lines.txt || fail "--lines failed"
line=$(grep -n 'KEEP(malloc(32 \* KIB))' "$SRCDIR/tests/progs/heapcases.c" | head -1 | cut -d: -f1)
grep -q "heapcases.c:$line" lines.txt || { cat lines.txt; fail "--lines does not give kept()'s line $line"; }
# every report, by every sample type
for idx in inuse_space inuse_objects alloc_space alloc_objects peak_space peak_objects samples alloc_samples \
	peak_samples; do
	for r in --tree --flat --folded --svg --flame --speedscope --timeline; do
		# shellcheck disable=SC2086
		"$PROFVIEW" -q $r --sample-index=$idx -o out.x known.raw || fail "profview $r --sample-index=$idx failed"
		[ -s out.x ] || fail "profview $r --sample-index=$idx wrote nothing"
	done
done

# ---- every entry point, and allocations before main, in a signal handler
# and in an exit handler (16 MiB each at the default rate: 30 samples
# expected, none with the probability e^-32) -----------------------------
HEAPCASES_CTOR=1 "$COLLECT_HEAP" -q -o entries.raw ./heapcases entries ||
	fail "collect-heap of heapcases entries failed"
"$PROFVIEW" -q --folded --sample-index=inuse_space entries.raw >entries.folded || fail "profview of entries.raw failed"
for f in ep_malloc ep_calloc ep_realloc ep_reallocarray ep_posix_memalign ep_aligned_alloc ep_memalign ep_valloc \
	ep_pvalloc in_ctor in_atexit in_handler; do
	[ "$(in_stacks entries.folded $f)" -gt 0 ] || { cat entries.folded; fail "$f's allocations are not seen"; }
done
# none of the library's own frames: the leaf is the function that called
grep -q 'heap_\|libprofview' entries.folded && fail "the collector's frames are in the stacks"

"$COLLECT_HEAP" -q -o cxx.raw ./heapcxx || fail "collect-heap of heapcxx failed"
"$PROFVIEW" -q --folded --sample-index=inuse_space cxx.raw >cxx.folded || fail "profview of cxx.raw failed"
"$PROFVIEW" -q --folded --sample-index=alloc_space cxx.raw >cxx-alloc.folded || fail "profview of cxx.raw failed"
for f in cxx_new cxx_new_array cxx_new_aligned; do
	[ "$(in_stacks cxx.folded $f)" -gt 0 ] || { cat cxx.folded; fail "$f's blocks are not in use"; }
done
"$PROFVIEW" -q --folded --keep-alloc-frames cxx.raw >cxx-keep.folded || fail "profview --keep-alloc-frames of cxx.raw failed"
grep -q ';operator new' cxx-keep.folded || fail "--keep-alloc-frames: operator new is not the leaf of C++'s allocations"
grep -q 'operator new' cxx.folded && fail "operator new is in the stacks, not trimmed"
[ "$(in_stacks cxx-alloc.folded cxx_deleted)" -gt 0 ] || fail "cxx_deleted's allocations are not seen"
[ "$(in_stacks cxx.folded cxx_deleted)" = 0 ] || fail "cxx_deleted deleted its objects, yet they are in use"

# ---- fork and exec ------------------------------------------------------
"$COLLECT_HEAP" -q -o fork.raw ./heapcases fork || fail "collect-heap of heapcases fork failed"
"$PROFVIEW" -q --folded --sample-index=inuse_space fork.raw >fork.folded || fail "profview of fork.raw failed"
for f in parent_work child_work execd_work; do
	[ "$(in_stacks fork.folded $f)" -gt 0 ] || { cat fork.folded; fail "$f's blocks are not in the run"; }
done

# --no-inherit: the program's process alone
"$COLLECT_HEAP" -q --no-inherit -o alone.raw ./heapcases fork || fail "collect-heap --no-inherit failed"
"$PROFVIEW" -q --folded alone.raw >alone.folded || fail "profview of alone.raw failed"
[ "$(in_stacks alone.folded parent_work)" -gt 0 ] || fail "--no-inherit: parent_work is not in the trace"
[ "$(in_stacks alone.folded child_work)$(in_stacks alone.folded execd_work)" = 00 ] ||
	fail "--no-inherit: the children are in the trace"

# ---- --split: each segment a heap trace of its own, its stacks in it --
"$COLLECT_HEAP" -q --split=0.2 -o phases.raw ./heapcases phases || fail "collect-heap --split failed"
ls phases.seg*.raw >/dev/null 2>&1 || fail "--split wrote no segments"
: >segs.folded
for f in phases.seg*.raw; do
	"$PROFVIEW" --folded "$f" >>segs.folded 2>seg.err || fail "profview of $f failed: $(cat seg.err)"
	grep -q 'missing' seg.err && fail "$f: $(cat seg.err)"
done
for f in phase_a phase_b; do
	[ "$(in_stacks segs.folded $f)" -gt 0 ] || { cat segs.folded; fail "--split: $f is in no segment"; }
done

# ---- killed ---------------------------------------------------------------
"$COLLECT_HEAP" -q -o hang.raw ./heapcases hang "$WORK/pid.txt" &
launcher=$!
for _ in $(seq 600); do
	[ -s pid.txt ] && break
	sleep 0.1
done
[ -s pid.txt ] || fail "heapcases hang did not start"
kill -9 "$(cat pid.txt)"
wait "$launcher" || true
"$PROFVIEW" --folded --sample-index=inuse_space hang.raw >hang.folded 2>hang.err || fail "the killed program's trace does not read"
grep -q 'not finished' hang.err || fail "the killed program's trace is not said to be unfinished: $(cat hang.err)"
[ "$(in_stacks hang.folded hang_work)" -gt 0 ] || fail "the killed program's blocks are not in its trace"

# ---- pprof --------------------------------------------------------------
if command -v go >/dev/null; then
	PPROF=$("$SRCDIR/scripts/install-pprof" "$WORK/tools") || fail "cannot build pprof"
	"$PROFVIEW" -q --pprof -o known.pb.gz known.raw || fail "profview --pprof of known.raw failed"
	for idx in inuse_space alloc_space peak_space; do
		report known.raw $idx
		want=$(awk '{ s += $NF } END { print s }' "$idx.folded")
		got=$("$PPROF" -top -unit=B -sample_index=$idx known.pb.gz 2>/dev/null |
			sed -n 's/.* of \([0-9]*\)B total$/\1/p')
		[ -n "$got" ] && [ "$got" = "$want" ] || fail "pprof -sample_index=$idx: $got bytes, profview $want"
	done
	note "pprof -sample_index=peak_space of profview's pprof: $got bytes"
	# pprof opens on what profview shows: inuse_space, or --sample-index's
	for idx in "" peak_space alloc_space; do
		"$PROFVIEW" -q --pprof ${idx:+--sample-index=$idx} -o dflt.pb.gz known.raw ||
			fail "profview --pprof ${idx:+--sample-index=$idx} of known.raw failed"
		want=$(awk '{ s += $NF } END { print s }' "${idx:-inuse_space}.folded")
		got=$("$PPROF" -top -unit=B dflt.pb.gz 2>/dev/null | sed -n 's/.* of \([0-9]*\)B total$/\1/p')
		[ -n "$got" ] && [ "$got" = "$want" ] ||
			fail "pprof of profview --pprof ${idx:+--sample-index=$idx}: $got bytes by default, profview ${idx:-inuse_space} $want"
		"$PPROF" -raw dflt.pb.gz 2>/dev/null | grep -q "${idx:-inuse_space}/bytes\[dflt\]" ||
			fail "pprof -raw does not mark ${idx:-inuse_space} as the default sample type"
	done
else
	note "go is not installed: pprof's reading of the sample types is not checked"
fi

# ---- damaged traces: one clear line or a partial reading, never a crash --
size=$(stat -c %s known.raw)
for cut in 64 100 200 1000 4000 20000 $((size / 2)) $((size - 8)); do
	head -c "$cut" known.raw >cut.raw
	st=0
	"$PROFVIEW" -q --flat --sample-index=peak_space cut.raw >/dev/null 2>cut.err || st=$?
	[ "$st" -le 1 ] || fail "known.raw cut at $cut bytes: profview exited $st: $(cat cut.err)"
done
for at in 200 1000 3000 9000 $((size / 3)) $((size / 2 + 4)); do
	cp known.raw bad.raw
	printf '\377\377\377\377\377\377\377\377' | dd of=bad.raw bs=1 seek="$at" conv=notrunc status=none
	st=0
	"$PROFVIEW" -q --tree bad.raw >/dev/null 2>bad.err || st=$?
	[ "$st" -le 1 ] || fail "known.raw with 8 bytes of 0xff at $at: profview exited $st: $(cat bad.err)"
done

# ---- an allocation from JIT code ------------------------------------------
# (tests/progs/jit.c alloc: code in an anonymous executable mapping made
# after the start calls the allocating function) its frame named [anon],
# from the maps the end reads once a stack held an address in no mapping
# the start wrote
build jit
"$COLLECT_HEAP" -q -o jit.raw ./jit 0.1 alloc >/dev/null || fail "collect-heap ./jit failed"
"$PROFVIEW" --folded --sample-index=alloc_space jit.raw >jit.folded || fail "profview of jit.raw failed"
anon=$(awk '/;main;\[anon\][^;]*;allocate / { t += $NF } END { print (t > 0) }' jit.folded)
[ "$anon" = 1 ] || fail "no allocation under main;[anon];allocate: $(sort -t' ' -k2 -n jit.folded | tail -2)"

# ---- usage ----------------------------------------------------------------
st=0
"$COLLECT_HEAP" --rate=0 ./heapcases known 2>err.txt || st=$?
[ "$st" = 2 ] && grep -q 'invalid rate' err.txt || fail "--rate=0: status $st, $(cat err.txt)"
