#!/usr/bin/env bash
# The reports' ± (one standard error) against the spread of many runs of
# programs with known work (tests/progs/noisetruth.c):
#   - heap (collect-heap at a rate of 8 KiB, 60 runs): small()'s 40000
#     blocks of 64 bytes counted as objects; mixed()'s 20000 blocks of 64
#     bytes to 64 KiB, as objects (each sample stands for 1/p blocks of its
#     size: far noisier than √n says) and as bytes; large()'s 8 blocks of
#     1 MiB, sampled with certainty: exact, and said to be (± 0);
#   - CPU: light()'s CPU time (30% of the program's) under collect-timer's
#     perf events at 1 kHz (30 runs of 150 ms: samples of one period) and
#     under POSIX timers at 250 Hz on a core shared with a CPU hog (20
#     runs of 500 ms: samples of unequal weights, a few ticks each).
#     The thread's CPU time is known exactly, so light()'s samples are a
#     binomial share of it: the stated error is the Poisson one times
#     sqrt(1 - 0.3).
# For each value, over N runs with estimates x, stated errors s and the
# truth t: the measured spread sqrt(mean((x - t)^2)) over the stated one
# sqrt(mean(s^2)) must lie within the chi distribution's quantiles for N
# (N r^2 follows chi^2 with N degrees of freedom when the stated errors
# are right and the estimates near normal), and the runs outside 3 stated
# errors may be no more than the binomial tail allows at the normal 0.27%.
# Each tolerance fails by chance less than once in 100,000 (z = 4.42 for
# the Wilson-Hilferty quantiles, the binomial tail below 1e-5), so that
# the whole test does less than once in 10,000.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"
"$CC" -O1 -g -fno-omit-frame-pointer -o noisetruth "$SRCDIR/tests/progs/noisetruth.c" -lm ||
	fail "cannot compile noisetruth.c"

# node FILE NAME: "samples noise value" of the tree node NAME in a table
# written with --tree -t ';' (the first such node)
node() {
	awk -F';' -v f="$2" '$8 == f { print $4, $6, $7; exit }' "$1"
}

# raw_summary RAW: what a trace holds, for a failure's message: its
# records by type, and its samples' weights (ms) and stacks, in the order
# they were taken
raw_summary() {
	[ -n "${RAWDUMP:-}" ] || return 0
	"$RAWDUMP" "$1" 2>&1 | awk '
		{ n[$1]++ }
		$1 == "sample" { w[++k] = sprintf("%.1f ms (stack %s)", $4 / 1e6, $5) }
		END {
			for (t in n) printf "%s %d; ", t, n[t]
			printf "\nsamples:"
			for (i = 1; i <= k && i <= 60; i++) printf " %s", w[i]
			print ""
		}'
}

# row FILE NAME TRUTH [RAW]: the line "x s t" of node NAME: its value, its
# stated error in the value's unit (the ± column is in samples) and TRUTH
# (RAW: the trace the table was made of, summed up in a failure)
row() {
	read -r n s v < <(node "$1" "$2")
	[ -n "$v" ] || fail "no node $2 in $1 (truth $3):
$(head -40 "$1")
$(if [ -n "${4:-}" ]; then raw_summary "$4"; fi)"
	awk -v n="$n" -v s="$s" -v v="$v" -v t="$3" 'BEGIN { print v, (n > 0 ? s * v / n : 0), t }'
}

# judge WHAT RESULTS: RESULTS holds a line "x s t" per run (estimate,
# stated error, truth); fails unless the stated errors match the spread.
judge() {
	local verdict
	verdict=$(awk -v what="$1" '
		{ n++; d = $1 - $3; ss += d * d; st += $2 * $2; if ($2 > 0 ? (d < 0 ? -d : d) > 3 * $2 : d != 0) out++ }
		END {
			z = 4.42; k = 2 / (9 * n)
			lo = sqrt((1 - k - z * sqrt(k)) ^ 3); hi = sqrt((1 - k + z * sqrt(k)) ^ 3)
			# the most runs outside 3 sigma: P(X > m) < 1e-5, X ~ B(n, 0.0027)
			p = 0.0027; m = 0; pm = (1 - p) ^ n; tail = 1 - pm
			while (tail >= 1e-5) { pm *= (n - m) / (m + 1) * p / (1 - p); m++; tail -= pm }
			r = st > 0 ? sqrt(ss / st) : -1
			printf "%s: %d runs, measured spread %.4g, stated %.4g, ratio %.3f (allowed %.3f-%.3f), %d outside 3 sigma (allowed %d)\n",
				what, n, sqrt(ss / n), sqrt(st / n), r, lo, hi, out, m
			if (r < lo || r > hi || out > m) exit 1
		}' "$2") || fail "$verdict"
	note "$verdict"
}

# ---- heap ------------------------------------------------------------
HEAP_RUNS=60
: >small-objects.txt
: >mixed-objects.txt
: >mixed-bytes.txt
for i in $(seq "$HEAP_RUNS"); do
	"$COLLECT_HEAP" -q -r 8k -o h.raw ./noisetruth heap >truth.txt || fail "collect-heap ./noisetruth heap failed"
	bytes=$(sed -n 's/^mixed_bytes //p' truth.txt)
	"$PROFVIEW" -q --tree -t ';' --sample-index=alloc_objects h.raw >obj.txt
	"$PROFVIEW" -q --tree -t ';' --sample-index=alloc_space h.raw >space.txt
	row obj.txt small 40000 >>small-objects.txt
	row obj.txt mixed 20000 >>mixed-objects.txt
	row space.txt mixed "$(awk -v b="$bytes" 'BEGIN { print b / 1024 }')" >>mixed-bytes.txt
	# large(): 8 MiB, exactly, and ± 0
	read -r n s v < <(node space.txt large)
	[ "$n" = 8 ] && [ "$s" = 0.00 ] && [ "$v" = 8192.000 ] ||
		fail "large()'s 8 blocks of 1 MiB, sampled with certainty: $n samples, ± $s, $v KiB (want 8, 0.00, 8192.000)"
done
judge "heap small() objects" small-objects.txt
judge "heap mixed() objects" mixed-objects.txt
judge "heap mixed() KiB" mixed-bytes.txt

# ---- CPU -------------------------------------------------------------
# cpu_runs FILE RUNS MS COLLECT-TIMER-OPTIONS...: light()'s estimates,
# errors and truth in milliseconds, of RUNS runs of MS ms, run under
# $PIN; 1 when perf events are refused.
PIN=
cpu_runs() {
	local file=$1 runs=$2 ms=$3
	shift 3
	: >"$file"
	for i in $(seq "$runs"); do
		if ! $PIN "$COLLECT_TIMER" -q "$@" -o c.raw ./noisetruth cpu "$ms" >truth.txt 2>err.txt; then
			grep -q 'perf events are not permitted' err.txt && return 1
			fail "collect-timer $* ./noisetruth cpu $ms failed: $(cat err.txt)"
		fi
		"$PROFVIEW" -q --tree -t ';' c.raw >cpu.txt
		row cpu.txt light "$(awk -v t="$(sed -n 's/^light_ns //p' truth.txt)" 'BEGIN { print t / 1e6 }')" c.raw >>"$file"
	done
}
if cpu_runs perf.txt 30 150 --engine=perf -F 1000; then
	judge "CPU light(), perf events" perf.txt
else
	echo "SKIP: perf events are refused on this machine: the perf engine's check"
fi
# POSIX timers on one core with a hog: the program gets part of it, and
# its samples carry unequal CPU times
taskset -c 0 sh -c 'while :; do :; done' &
hog=$!
trap 'kill "$hog" 2>/dev/null || true; rm -rf "$WORK" || true' EXIT
PIN="taskset -c 0"
cpu_runs posix.txt 20 500 --engine=posix -F 250 || fail "collect-timer --engine=posix failed"
kill "$hog" 2>/dev/null || true
judge "CPU light(), POSIX timers beside a hog" posix.txt
echo "ok"
