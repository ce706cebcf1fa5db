#!/usr/bin/env bash
# Inputs made to cost memory and time beyond their size, written by
# tests/tools/hostile-gen.py: a pprof stack of millions of frames, one of
# sparse location ids up to 10^9, a location of 10,000 inlined lines listed
# 3,000 times, 300 callers of such a location (a call tree of 3 million
# nodes from 80 KB), a perf script of 100,000 threads for the timeline,
# names of megabytes.  Each runs with --max-memory=64M, under a hard limit
# of address space and a timeout: the result is a correct, bounded output
# or one line that names the limit, and the peak (getrusage) stays within
# what profview(1) promises: what it takes with nothing to read, the input
# and its decompressed data, the budget twice (reading, then the report)
# and 32 MiB for the allocator's slack.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

# Under AddressSanitizer memory is not what it costs.
if grep -q __asan_init "$PROFVIEW"; then
	note "profview is built with AddressSanitizer: memory is not measured"
	exit 77
fi

GEN="$SRCDIR/tests/tools/hostile-gen.py"
BUDGET_MIB=64
DEPTH=65536 # PV_MAX_DEPTH, profview(1) LIMITS

# run NAME ARGS...: profview ARGS with --max-memory, at most 2 GiB of
# address space and 60 s; the peak in NAME.kib, the output in NAME.out,
# the messages in NAME.err, the status in $st.
run() {
	local name=$1 start
	shift
	st=0
	start=$(date +%s)
	(ulimit -v 2097152 && timeout 60 "$MAXRSS" "$name.kib" "$PROFVIEW" --max-memory=${BUDGET_MIB}M "$@" \
		>"$name.out" 2>"$name.err") || st=$?
	secs=$(($(date +%s) - start))
	[ "$st" -le 1 ] || fail "$name: profview $* exited $st after $secs s: $(head -c 300 "$name.err")"
}

# within NAME INPUT_BYTES: the peak of NAME within the bound above.
within() {
	local rss bound
	rss=$(cat "$1.kib")
	bound=$((base + $2 / 1024 + 2 * BUDGET_MIB * 1024 + 32 * 1024))
	[ "$rss" -le "$bound" ] ||
		fail "$1: profview held $((rss / 1024)) MiB at its peak, more than the $((bound / 1024)) MiB allowed"
	note "$1: $((rss / 1024)) MiB at the peak (at most $((bound / 1024))), ${secs} s: $(head -c 160 "$1.err" | head -n 1)"
}

# one_line NAME TEXT: NAME's messages are that one line.
one_line() {
	[ "$(wc -l <"$1.err")" -eq 1 ] && grep -qxF "$2" "$1.err" || fail "$1: expected '$2', got: $(head -c 400 "$1.err")"
}

# frames FILE: the frames of each folded line of FILE.
frames() {
	awk '{ sub(/ [0-9]+$/, ""); print split($0, f, ";") }' "$1"
}

printf 'main;f 1\n' >tiny.folded
run base --flat tiny.folded
base=$(cat base.kib)

# 1. One sample whose stack is one location 20 million times: 20 MB of
# data in 20 KB of gzip.  Cut to its innermost frames, said once.
python3 "$GEN" deep 20000000 >deep.pb.gz
for kind in tree folded flame; do
	run "deep-$kind" --$kind deep.pb.gz
	[ "$st" -eq 0 ] || fail "deep --$kind: $(cat "deep-$kind.err")"
	one_line "deep-$kind" "profview: warning: 'deep.pb.gz': 1 stack deeper than $DEPTH frames (inlined calls counted) cut to its innermost"
	within "deep-$kind" 20000000
done
[ "$(frames deep-folded.out)" = "$DEPTH" ] || fail "deep --folded: a stack of $(frames deep-folded.out) frames, not $DEPTH"

# 2. 100,000 locations of ids spread up to 10^9, one sample through them
# all: read without a table by id; the stack cut as 1.
python3 "$GEN" ids 100000 >ids.pb.gz
run ids --folded ids.pb.gz
[ "$st" -eq 0 ] || fail "sparse ids: $(cat ids.err)"
one_line ids "profview: warning: 'ids.pb.gz': 1 stack deeper than $DEPTH frames (inlined calls counted) cut to its innermost"
[ "$(frames ids.out)" = "$DEPTH" ] || fail "sparse ids: a stack of $(frames ids.out) frames"
within ids "$(gzip -dc ids.pb.gz | wc -c)"

# 3. A location of 10,000 inlined lines listed 3,000 times: 30 million
# frames from 63 KB.  Whole locations are kept while they fit: as many
# lines as 65,536 holds of whole 10,000s.
python3 "$GEN" inline 10000 >inline.pb
for kind in flat folded; do
	run "inline-$kind" --$kind inline.pb
	[ "$st" -eq 0 ] || fail "inline --$kind: $(cat "inline-$kind.err")"
	one_line "inline-$kind" "profview: warning: 'inline.pb': 1 stack deeper than $DEPTH frames (inlined calls counted) cut to its innermost"
	within "inline-$kind" "$(stat -c %s inline.pb)"
done
[ "$(frames inline-folded.out)" = $((DEPTH / 10000 * 10000)) ] ||
	fail "inline: a stack of $(frames inline-folded.out) frames, not $((DEPTH / 10000 * 10000))"

# 4. 300 functions that each call a location of 10,000 inlined lines: a
# call tree of 3 million nodes, past the budget: refused before it is
# made, in one line.  The flat table needs a row a function: made.
python3 "$GEN" inlines 300 >inlines.pb.gz
for kind in tree folded flame; do
	run "inlines-$kind" --$kind inlines.pb.gz
	[ "$st" -eq 1 ] || fail "300 x 10,000 frames --$kind exited $st"
	one_line "inlines-$kind" "profview: the report on 'inlines.pb.gz' needs more than $BUDGET_MIB MiB of memory; stopped making it (raise the limit with --max-memory)"
	within "inlines-$kind" "$(gzip -dc inlines.pb.gz | wc -c)"
done
run inlines-flat --flat inlines.pb.gz
[ "$st" -eq 0 ] || fail "300 x 10,000 frames --flat: $(cat inlines-flat.err)"
[ "$(flat_cum inlines-flat.out f0)" = 300 ] || fail "300 x 10,000 frames --flat: f0 is not in all 300 samples"
within inlines-flat "$(gzip -dc inlines.pb.gz | wc -c)"

# 5. 100,000 threads of one sample each, for the timeline: 500 rows, the
# last of the threads left.
threads=100000
python3 "$GEN" threads $threads >threads.txt
run threads --timeline threads.txt
[ "$st" -eq 0 ] || fail "$threads threads --timeline: $(cat threads.err)"
one_line threads "profview: --timeline: $((threads - 499)) threads with the fewest samples are drawn as one row, of the 500 rows drawn"
[ "$(grep -c 'class="row"' threads.out)" -eq 500 ] || fail "$threads threads: $(grep -c 'class="row"' threads.out) rows"
grep -qF ">$((threads - 499)) more threads</text>" threads.out || fail "$threads threads: no row of the rest"
size=$(stat -c %s threads.out)
[ "$size" -lt $((2 << 20)) ] || fail "$threads threads: a timeline of $size bytes"
if command -v xmllint >/dev/null; then
	xmllint --noout threads.out || fail "$threads threads: the timeline is not XML"
fi
within threads "$(stat -c %s threads.txt)"

# 6. Eight function names of 4 MB each: each shown as its first 4,000 bytes and
# "...", in a table of a few kilobytes.
python3 "$GEN" names 4000000 >names.folded
run names --flat names.folded
[ "$st" -eq 0 ] || fail "names of 4 MB: $(cat names.err)"
for c in a b c d e f g h; do
	grep -qE "^ +1 +12\.5% +1 +12\.5% +1 +$c{4000}\.\.\.$" names.out || fail "names of 4 MB: '$c' is not shown cut"
done
size=$(stat -c %s names.out)
[ "$size" -lt 65536 ] || fail "names of 4 MB: a table of $size bytes"
[ "$secs" -le 10 ] || fail "names of 4 MB: $secs s"
within names "$(stat -c %s names.folded)"

# 7. A jemalloc heap profile and a gperftools CPU profile with a stack of
# 200,000 addresses: read, cut to the innermost frames like every other
# input, said once, within the bound.
python3 "$GEN" jemdeep 200000 >deep.heap
python3 "$GEN" gperfdeep 200000 >deep.prof
for f in deep.heap deep.prof; do
	run "$f" --folded "$f"
	[ "$st" -eq 0 ] || fail "$f: $(cat "$f.err")"
	grep -qxF "profview: warning: '$f': 1 stack deeper than $DEPTH frames (inlined calls counted) cut to its innermost" "$f.err" ||
		fail "$f: the cut is not said: $(head -c 400 "$f.err")"
	[ "$(frames "$f.out" | sort -n | tail -n 1)" = "$DEPTH" ] || fail "$f: a stack of $(frames "$f.out" | sort -n | tail -n 1) frames, not $DEPTH"
	within "$f" "$(stat -c %s "$f")"
done
# the innermost frames are the ones kept: the leaf is the first address
grep -qE ';prog\+0xfff [0-9]+$' deep.heap.out || fail "deep.heap: the leaf frame was not kept: $(tail -c 200 deep.heap.out)"
grep -qE ';prog\+0x1000 [0-9]+$' deep.prof.out || fail "deep.prof: the leaf frame was not kept"

# 8. 20 million folded lines in 350 KB of gzip: with --max-memory the
# decompressed data is bounded by it too, refused in one line that names it.
python3 -c 'import gzip, sys; sys.stdout.buffer.write(gzip.compress(b"main;f 1\n" * 20000000, 9))' >bomb.folded.gz
run bomb --flat bomb.folded.gz
[ "$st" -eq 1 ] || fail "a gzip of 180 MB decompressed under --max-memory=${BUDGET_MIB}M exited $st"
one_line bomb "profview: 'bomb.folded.gz': decompressed data is larger than $BUDGET_MIB MiB; stopped decompressing (raise the limit with --max-memory)"
rss=$(cat bomb.kib)
[ "$rss" -le $((base + 2 * BUDGET_MIB * 1024)) ] || fail "bomb: profview held $((rss / 1024)) MiB decompressing under a budget of $BUDGET_MIB MiB"
