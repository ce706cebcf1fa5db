#!/usr/bin/env bash
# A perf event that may count user time only (a process of a user other
# than root where perf_event_paranoid is 2: the collector opens its events
# with exclude_kernel): the kernel drops each overflow that finds the
# thread in the kernel, and the next sample weighs every period since.
# collect-timer charges those periods to the kernel and profview counts a
# kernel sample for each, under the stack of the sample that ended them,
# so that a thread that alternates stretches of system calls and of user
# work, each longer than a period, beside busy threads on its CPU (which
# make getrusage's tick-sampled split of its time wrong), shows the
# share of each stretch the program measured with its own CPU clock, as
# many samples as periods of its CPU time, no sample with more than about
# a period of user time, and its system call wrapper no more than the
# little user time it has.  Run as nobody when the test
# runs as root; skipped when the events may count system time (or none
# may be opened) for the user it runs as.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

build kmissed
cd "$WORK"

as=()
if [ "$(id -u)" = 0 ]; then
	if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
		as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	elif command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
		as=(runuser -u nobody --)
	else
		echo "SKIP: root, without setpriv or runuser and a user nobody to run the program as"
		exit 77
	fi
	# the other user's files: a directory of its own under the test's
	chmod 711 "$WORK"
fi
mkdir -m 777 u
cd u

"${as[@]}" "$COLLECT_TIMER" --engine=perf -o probe.raw true 2>probe.err || true
if ! grep -q 'may not count system time' probe.err; then
	echo "SKIP: perf events count system time (or none are permitted) for $("${as[@]}" id -un) here" \
	     "(perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?'))"
	exit 77
fi

# the first CPU this test may run on, which the hogs and the program share
pin=$(first_cpu)
trap 'hogs_stop; rm -rf "$WORK" || true' EXIT
hogs_start "$pin"

"${as[@]}" taskset -c "$pin" "$COLLECT_TIMER" --engine=perf -F 250 -o km.raw ../kmissed 3 >km.truth 2>km.err ||
	fail "collect-timer kmissed failed: $(cat km.err)"
hogs_stop
cat km.truth km.err
"$PROFVIEW" --flat -t $'\t' km.raw >km.tsv 2>km.warn || fail "profview --flat failed: $(cat km.warn)"
read -r sys_ns user_ns < <(awk '$1 == "phases" { print $2, $3 }' km.truth)

# From the flat report (self samples, self CPU time by function): the
# samples and CPU time in all, and the self CPU time of the kernel, of
# user_phase and of the wrapper of the reads (read_block and libc's pread).
read -r n cpu kern user wrap < <(awk -F '\t' 'NR > 1 {
	n += $1; cpu += $6
	if ($8 == "[k] [kernel]") kern += $6
	if ($8 == "user_phase") user += $6
	if ($8 == "read_block" || $8 ~ /^__(libc_)?pread(64)?$/) wrap += $6
} END { print n + 0, cpu + 0, kern + 0, user + 0, wrap + 0 }' km.tsv)
note "profile: $n samples, $cpu ms of CPU: kernel $kern ms, user_phase $user ms, the reads' wrapper $wrap ms;" \
     "the program: sys_phase $sys_ns ns, user_phase $user_ns ns"

# The tolerances: 4.5 sigma of a count of n samples (a binomial share's
# sigma is sqrt(p (1 - p) / n), a Poisson count's sqrt(n)), beyond which
# a sample falls by chance less than once in 100,000 times; the sampling
# here is of random periods, whose counts vary less than that.
#
# Every period of CPU time is a sample, in the kernel or not: n is the
# profile's CPU time over the period (4 ms at 250 Hz).  Before the dropped
# overflows were counted, 57 to 60% of that.
awk -v n="$n" -v cpu="$cpu" 'BEGIN {
	e = cpu / 4; tol = 4.5 * sqrt(e)
	printf "# samples: %d, CPU time over the period: %.0f (tolerance %.0f)\n", n, e, tol
	exit !(e > 0 && n >= e - tol && n <= e + tol)
}' || fail "$n samples for $cpu ms of CPU time at 4 ms a period"

# user_phase's own time: the share of its stretches (their system time,
# the reads of the CPU clock every 0.3 ms or so, is next to none).
# Before, the dropped periods were the kernel's or the user code's as
# getrusage's split said, by whole samples: beside the hogs 29% where it
# had 50%.
awk -v u="$user" -v cpu="$cpu" -v n="$n" -v su="$user_ns" -v ss="$sys_ns" 'BEGIN {
	p = su / (su + ss); q = u / cpu
	tol = 4.5 * sqrt(p * (1 - p) / n) + 0.01
	printf "# user_phase: %.3f of the CPU time in the profile, %.3f measured (tolerance %.3f)\n", q, p, tol
	d = q - p; if (d < 0) d = -d
	exit !(cpu > 0 && n > 0 && d <= tol)
}' || fail "user_phase has $user of $cpu ms, where its stretches took $user_ns of $((user_ns + sys_ns)) ns"

# The kernel's share: that of sys_phase's stretches but the little user
# time of its loop and its reads' wrappers (perf: 1.3% of the program's
# time), at most 3 points.
awk -v k="$kern" -v cpu="$cpu" -v n="$n" -v su="$user_ns" -v ss="$sys_ns" 'BEGIN {
	p = ss / (su + ss); q = k / cpu
	tol = 4.5 * sqrt(p * (1 - p) / n)
	printf "# kernel: %.3f of the CPU time in the profile, sys_phase %.3f measured (from %.3f to %.3f)\n",
		q, p, p - 0.03 - tol, p + tol
	exit !(cpu > 0 && n > 0 && q >= p - 0.03 - tol && q <= p + tol)
}' || fail "the kernel has $kern of $cpu ms, where sys_phase's stretches took $sys_ns of $((user_ns + sys_ns)) ns"

# No sample has more user time than about a period: a period is drawn
# from half the period to one and a half (6 ms at most), and the sample's
# weight beyond its last period is the kernel's, its periods counted to the
# nearest (a signal now and then comes short of its multiple under
# contention), so that what is left is at most one and a half periods,
# 9 ms, and the handler's own time before the event was armed again: at
# most 9.5 ms.  Before, the user part of 10 of some 200 samples was over
# 12 ms (23.5 ms the heaviest).
read -r heavy most < <("$RAWDUMP" km.raw | awk '
	$1 == "sample" { w[$3] = $4 }
	$1 == "kernel" { k[$3] = $4 }
	END {
		for (t in w) { u = w[t] - k[t]; if (u > 9.5e6) n++; if (u > m) m = u }
		print n + 0, m + 0
	}')
note "the heaviest user part of a sample: $most ns"
[ "$heavy" = 0 ] || fail "$heavy samples with more than 9.5 ms of user time (the heaviest $most ns)"

# The wrapper's own time: at most those 3 points.
awk -v w="$wrap" -v cpu="$cpu" -v n="$n" 'BEGIN {
	q = w / cpu; tol = 4.5 * sqrt(0.03 * 0.97 / n)
	printf "# the reads wrapper: %.3f of the CPU time (at most %.3f)\n", q, 0.03 + tol
	exit !(cpu > 0 && n > 0 && q <= 0.03 + tol)
}' || fail "the reads' wrapper has $wrap of $cpu ms as its own"
exit 0
