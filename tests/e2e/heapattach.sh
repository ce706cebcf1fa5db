#!/usr/bin/env bash
# collect-heap -p: the heap sampler loaded into a running process
# (tests/progs/heapattach.c, built with -fno-plt so that it reads its own
# GOT entries of malloc and free).  Attached to for 2 s: small()'s and
# big()'s bytes allocated and in use at the detach against the program's
# own counts of the window (within 5 sigma of the sampling's binomial);
# every other entry point of the allocator seen too (a block of each's
# size sampled); the trace's header says it counts only what was allocated since the
# attach, and so do collect-heap and profview; no free record of a block
# the trace does not have (the program frees and reallocs blocks of before
# the attach all along); the GOT back as it was and the process going on
# allocating after the detach (blocks of the window freed then too).  A
# child forked while attached has its GOT back and writes nothing.  A
# second attach (ended by SIGINT) reuses the library, and a library the
# program loads while attached (its GOT read by the program too) has its
# allocations sampled from when its entries are rewritten, its bytes
# within 5 sigma of the program's count; a collect-heap killed leaves the
# process as it was too.  Refusals are one line.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
[ -x "$COLLECT_HEAP" ] || fail "no collect-heap next to $COLLECT_TIMER"
build heapattach -fno-plt
cd "$WORK"
cat >plug.c <<'EOF'
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void *plug_alloc(void)
{
	char *p = malloc(7000);

	if (p != NULL)
		memset(p, 3, 64);
	return p;
}

uintptr_t plug_got(void)
{
	uintptr_t v;

	__asm__ volatile("movq malloc@GOTPCREL(%%rip), %0\n\txorq %1, %0"
			 : "=&r"(v) : "r"(0x5a5a5a5a5a5a5a5aull));
	return v;
}
EOF
"$CC" -O1 -g -fno-omit-frame-pointer -fno-plt -fPIC -shared -o plug.so plug.c || fail "cannot compile plug.c"

SMALL=4000
BIG=12000
RING=2000
PLUG=7000
RATE=65536

# ask: the program's line into $line (windows= attached= got= small= big=
# pre_left= steps=)
asked=0
ask() {
	asked=$((asked + 1))
	kill -USR1 "$pid" || fail "the program is gone"
	wait_lines prog.out '^windows=' $asked
	line=$(sed -n "${asked}p" prog.out)
}
field() { # LINE NAME
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# by_function TRACE TYPE: "function value" by leaf, of --sample-index=TYPE
by_function() {
	"$PROFVIEW" -q --folded --sample-index="$2" "$1" >"$2.folded" ||
		fail "profview --sample-index=$2 of $1 failed"
	awk '{ n = split($1, a, ";"); s[a[n]] += $NF } END { for (k in s) print k, s[k] }' "$2.folded"
}
value_of() { # FILE FUNCTION
	awk -v f="$2" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}
# unsampled_ok ESTIMATE N SIZE: is the estimate of the bytes of N blocks of
# SIZE within 5 sigma of N SIZE?  A block is sampled with p =
# 1-exp(-SIZE/RATE), independently: n ~ Binomial(N, p) and the estimate
# n SIZE/p has the sigma N SIZE sqrt((1-p)/(N p)); plus 2 blocks, for the
# program's count at the window's edges.
unsampled_ok() {
	awk -v e="$1" -v n="$2" -v s="$3" -v r=$RATE 'BEGIN {
		p = 1 - exp(-s / r); t = n * s; sd = t * sqrt((1 - p) / (n * p))
		d = e - t; if (d < 0) d = -d
		exit !(d <= 5 * sd + 2 * s)
	}'
}

# check_trace TRACE: an attach's trace: its header's flag, one end
# record, and no free of a block it does not have
check_trace() {
	"$RAWDUMP" "$1" >"$1.dump" || fail "rawdump cannot read $1"
	[ "$(awk '$1 == "header" { print $6 }' "$1.dump")" = 1 ] ||
		fail "$1: the header does not say the blocks are those since the attach: $(head -1 "$1.dump")"
	[ "$(grep -c '^end ' "$1.dump")" = 1 ] || fail "$1: not one end record"
	awk '$1 == "heapalloc" { live[$5] = 1; n++ }
	     $1 == "heapfree" { if (!($4 in live)) { print "a free of " $4 " without its block"; bad = 1 }
				delete live[$4]; f++ }
	     END { if (n == 0) { print "no block"; bad = 1 } exit bad }' "$1.dump" ||
		fail "$1: a free record of a block allocated before the attach"
}

pid=
trap '[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true; rm -rf "$WORK" || true' EXIT

# ---- refusals ----
max=$(cat /proc/sys/kernel/pid_max)
"$COLLECT_HEAP" -p "$max" 2>e1.err && fail "pid $max accepted"
[ "$(wc -l <e1.err)" = 1 ] && grep -q "no process $max" e1.err || fail "-p $max: $(cat e1.err)"
"$COLLECT_HEAP" -p 1 ./heapattach 2>e2.err && fail "-p and a program accepted"
grep -q "one or the other" e2.err || fail "-p and a program: $(cat e2.err)"
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if [ "$scope" = 3 ]; then
	echo "SKIP: kernel.yama.ptrace_scope is 3: no process can be attached to" >&2
	exit 77
fi

./heapattach pid.txt "$WORK/plug.so" >prog.out &
pid=$!
wait_lines pid.txt .
ask
[ "$(field "$line" got)" = same ] || fail "the GOT moved before any attach: $line"

# ---- the first attach: --duration ----
"$COLLECT_HEAP" -p "$pid" --duration=2 --rate=64k -o a1.raw 2>a1.err || fail "collect-heap -p failed: $(cat a1.err)"
cat a1.err
grep -q "since the attach" a1.err || fail "collect-heap does not say what its counts are of: $(cat a1.err)"
ask
note "after the first attach: $line"
[ "$(field "$line" windows)" = 1 ] || fail "the program did not see one attach: $line"
[ "$(field "$line" got)" = same ] || fail "the GOT is not as it was after the detach: $line"
n=$(field "$line" small)
[ "$n" -gt $((2 * RING)) ] || fail "too few blocks in the window to test: $line"
check_trace a1.raw
for i in 0 1 2 3 4 5 6 7; do
	awk -v s=$((5000 + 64 * i)) '$1 == "heapalloc" && $4 == s { found = 1 } END { exit !found }' a1.raw.dump ||
		fail "no block of $((5000 + 64 * i)) bytes: entry point $i of calloc, aligned_alloc, posix_memalign, memalign, valloc, pvalloc, reallocarray, realloc is not seen"
done
by_function a1.raw alloc_space >alloc.txt
by_function a1.raw inuse_space >inuse.txt
for f in small:$SMALL big:$BIG; do
	name=${f%:*} size=${f#*:}
	got=$(value_of alloc.txt "$name")
	unsampled_ok "$got" "$n" "$size" || fail "$name: $got bytes allocated, not $n x $size within 5 sigma"
	# in use at the detach: the ring's last RING blocks, all of the window
	got=$(value_of inuse.txt "$name")
	unsampled_ok "$got" $RING "$size" || fail "$name: $got bytes in use, not $RING x $size within 5 sigma"
done
note "small $(value_of alloc.txt small) B, big $(value_of alloc.txt big) B allocated of $n blocks each"
"$PROFVIEW" a1.raw >a1.txt 2>&1 || fail "profview of a1.raw failed: $(cat a1.txt)"
grep -q "since the attach" a1.txt || fail "profview's report does not say the blocks are those since the attach"
"$PROFVIEW" -q --timeline -o a1.svg a1.raw || fail "profview --timeline of a1.raw failed"
grep -q "since collect-heap attached" a1.svg || fail "the heap timeline does not say the blocks are those since the attach"

# the process goes on, freeing the window's blocks and allocating
steps=$(field "$line" steps)
sleep 0.3
ask
[ "$(field "$line" steps)" -gt "$steps" ] || fail "the program does not go on after the detach: $line"
[ "$(field "$line" got)" = same ] || fail "the GOT changed after the detach: $line"

# ---- a second attach, ended by SIGINT: the library is reused; a
# library loaded meanwhile ----
"$COLLECT_HEAP" -q -p "$pid" --rate=64k -o a2.raw 2>a2.err &
cpid=$!
for i in $(seq 100); do
	ask
	[ "$(field "$line" attached)" = 1 ] && break
	sleep 0.05
done
[ "$(field "$line" attached)" = 1 ] || fail "the second attach did not reach the program: $(cat a2.err)"
kill -USR2 "$pid"
kill -HUP "$pid"
sleep 1.5
kill -INT $cpid
wait $cpid || fail "collect-heap -p ended by SIGINT failed: $(cat a2.err)"
ask
[ "$(field "$line" windows)" = 2 ] || fail "the program did not see a second attach: $line"
[ "$(field "$line" got)" = same ] || fail "the GOT is not as it was after the second detach: $line"
check_trace a2.raw
[ "$(field "$line" fork)" = 0 ] || fail "a child forked while attached: status $(field "$line" fork) (3: its GOT not put back)"
awk -v p="$pid" '$1 == "heapalloc" && $2 != p { bad = 1 } END { exit bad }' a2.raw.dump ||
	fail "a child forked while attached wrote into the trace"
grep -q 'libprofview-heap' "/proc/$pid/maps" || fail "the library is not loaded"
n=$(field "$line" plug)
[ "$n" -gt 1000 ] || fail "too few of the plugin's blocks in the window to test: $line"
by_function a2.raw alloc_space >alloc2.txt
got=$(value_of alloc2.txt plug_alloc)
unsampled_ok "$got" "$n" $PLUG || fail "plug_alloc: $got bytes allocated, not $n x $PLUG within 5 sigma"
note "the plugin loaded while attached: plug_alloc $got B allocated of $n blocks of $PLUG B"
"$RAWDUMP" a2.raw | grep -q '^thread ' || fail "the second trace names no thread"

# ---- collect-heap killed: the library ends by itself ----
"$COLLECT_HEAP" -q -p "$pid" --rate=64k -o a3.raw 2>a3.err &
cpid=$!
for i in $(seq 100); do
	ask
	[ "$(field "$line" attached)" = 1 ] && break
	sleep 0.05
done
[ "$(field "$line" attached)" = 1 ] || fail "the third attach did not reach the program: $(cat a3.err)"
kill -9 $cpid
wait $cpid 2>/dev/null || true
for i in $(seq 100); do
	ask
	[ "$(field "$line" got)" = same ] && break
	sleep 0.05
done
[ "$(field "$line" got)" = same ] || fail "the GOT is not put back after collect-heap was killed: $line"
kill -0 "$pid" || fail "the program died"
kill "$pid"
wait "$pid" || fail "the program did not end as asked"
pid=

# ---- a CPython program: its Python frames in the stacks ----
py=$(pythons | head -1)
if [ -z "$py" ]; then
	note "SKIP: no CPython 3.9-3.13: the attach to a Python program is left out"
else
	cat >hold.py <<'EOF'
def hold_py(keep):
    while True:
        for _ in range(2000):
            keep.append(bytes(1000))
        if len(keep) > 200000:
            del keep[:100000]
print("ready", flush=True)
hold_py([])
EOF
	PYTHONMALLOC=malloc "$py" hold.py >py.out &
	pid=$!
	wait_lines py.out ready || fail "$py did not start"
	"$COLLECT_HEAP" -q -p "$pid" --duration=1 --rate=64k -o py.raw 2>py.err ||
		fail "collect-heap -p of $py failed: $(cat py.err)"
	kill -0 "$pid" || fail "$py died after the attach"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	# hundreds of megabytes a second allocated: thousands of samples, all
	# but the few of the list's growth through hold_py's frame
	"$PROFVIEW" --folded --sample-index=alloc_objects py.raw >py.folded 2>py.perr ||
		fail "profview of the Python attach failed: $(cat py.perr)"
	all=$(awk '{ n += $NF } END { print n + 0 }' py.folded)
	in=$(awk '/;hold_py;/ { n += $NF } END { print n + 0 }' py.folded)
	[ "$all" -ge 200 ] || fail "only $all blocks of the Python program estimated from the samples"
	[ $((in * 10)) -ge $((all * 9)) ] || fail "$in of $all blocks (estimated from the samples) under hold_py (its Python frame)"
	note "the Python program attached to: $in of $all blocks (estimated) under hold_py"
fi
