#!/usr/bin/env bash
# Kernel (system) time: a thread whose CPU time is mostly page faults shows
# that share of its time in kernel frames on top of the function that
# faulted, as getrusage(RUSAGE_THREAD) measured it for the thread, and a
# thread that computes shows no more than the kernel charged it; with POSIX timers (the split
# from getrusage, one "[kernel]" frame) and with --engine=perf where perf
# events may count system time (each sample's own mode, with its kernel
# call chain, the program's starting thread's too).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

build kernelsplit
cd "$WORK"

# kernel_share FOLDED THREADFUNC: "KERNEL TOTAL" of the folded stacks
# through THREADFUNC, by value; a kernel frame is one at a kernel address
# (--addresses: " @0xffff...") or the "[kernel]" frame at address 0 (its
# name marked "_[k]", as --folded marks kernel frames).
kernel_share() {
	awk -v f="$2" '
	{
		v = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, fr, ";")
		through = 0
		for (i = 1; i <= k; i++) if (fr[i] ~ "^" f " @") through = 1
		if (!through) next
		total += v
		if (fr[k] ~ / @0xffff[89a-f]/ || fr[k] ~ /^\[kernel\] @0x0_\[k\]$/) kern += v
	}
	END { print kern + 0, total + 0 }' "$1"
}

# check NAME ENGINE-OPTIONS...: profile kernelsplit and compare
check() {
	local name=$1
	shift
	"$COLLECT_TIMER" "$@" -o "$name.raw" ./kernelsplit 1.5 >"$name.truth" 2>"$name.err" ||
		fail "collect-timer $* failed: $(cat "$name.err")"
	cat "$name.truth" "$name.err"
	"$PROFVIEW" --folded --addresses "$name.raw" >"$name.folded" 2>"$name.warn" ||
		fail "profview --folded failed on $name.raw: $(cat "$name.warn")"
	local user sys k t n
	read -r user sys < <(awk '$2 == "faulter" { print $3, $4 }' "$name.truth")
	read -r k t < <(kernel_share "$name.folded" faulter)
	# the samples of the faulter, for the binomial part of the tolerance
	n=$("$PROFVIEW" --threads --maxdepth=1 "$name.raw" | awk '$NF == "\"faulter\"]" { print $1 }')
	note "$name: faulter: kernel $k of $t in the profile; getrusage: user $user ns, system $sys ns; $n samples"
	# Within 10 points.  Both sides are samples: the kernel's split is
	# one of its ticks (4 ms here: 1.5 s is ~375 of them), perf's of its
	# samples; 5 sigma of both plus 2 points is below 10 here, and taken
	# when above.
	awk -v k="$k" -v t="$t" -v u="$user" -v s="$sys" -v n="${n:-0}" 'BEGIN {
		if (t <= 0 || u + s <= 0 || n <= 0) exit 1
		p = s / (u + s); q = k / t
		ticks = (u + s) / 4e6
		tol = 5 * sqrt(p * (1 - p) / ticks + p * (1 - p) / n) + 0.02
		if (tol < 0.10) tol = 0.10
		d = q - p; if (d < 0) d = -d
		printf "# faulter: %.3f kernel in the profile, %.3f by getrusage (tolerance %.3f)\n", q, p, tol
		exit !(d <= tol)
	}' || fail "$name: the faulter's kernel share ($k of $t) is not getrusage's ($sys of $((user + sys)))"
	# The spinner: at most 2 points above the system time the kernel
	# charged it (interrupts that land in it count as its system time,
	# a few percent on a busy machine), within the same sampling noise.
	read -r user sys < <(awk '$2 == "spinner" { print $3, $4 }' "$name.truth")
	read -r k t < <(kernel_share "$name.folded" spinner)
	n=$("$PROFVIEW" --threads --maxdepth=1 "$name.raw" | awk '$NF == "\"spinner\"]" { print $1 }')
	note "$name: spinner: kernel $k of $t in the profile; getrusage: user $user ns, system $sys ns; $n samples"
	awk -v k="$k" -v t="$t" -v u="$user" -v s="$sys" -v n="${n:-0}" 'BEGIN {
		if (t <= 0 || u + s <= 0 || n <= 0) exit 1
		p = s / (u + s); if (p < 0.01) p = 0.01
		tol = 5 * sqrt(p * (1 - p) / ((u + s) / 4e6) + p * (1 - p) / n) + 0.02
		printf "# spinner: %.3f kernel in the profile, %.3f by getrusage (at most %.3f more)\n", k / t, s / (u + s), tol
		exit !(k / t <= s / (u + s) + tol)
	}' || fail "$name: the spinner, which makes next to no system calls, has $k of $t in the kernel (getrusage: $sys of $((user + sys)))"
}

check posix --engine=posix
# posix: no kernel chain, one "[kernel]" frame on top of the faulting function
grep -q 'touch_pages @0x[0-9a-f]*;\[kernel\] @0x0_\[k\] ' posix.folded ||
	fail "posix: no [kernel] frame on top of touch_pages"

"$COLLECT_TIMER" --engine=perf -o probe.raw true 2>probe.err || true
if grep -q 'not permitted\|may not count system time' probe.err; then
	echo "SKIP (perf engine): perf events may not count system time here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?'), not root)"
	exit 0
fi
check perf --engine=perf -F 250
# perf: the kernel's own frames, named from /proc/kallsyms where it shows
# addresses, under the function that faulted
if [ "$(cat /proc/sys/kernel/kptr_restrict 2>/dev/null || echo 2)" = 0 ] || [ "$(id -u)" = 0 ]; then
	grep -q 'touch_pages @0x[0-9a-f]*;[a-z_]*page_fault @0xffff' perf.folded ||
		fail "perf: no named page fault frames on top of touch_pages"
	# the kernel's own symbols were kept for this boot: a second report
	# names the frames from that file, the same, and without it again
	ls "$XDG_CACHE_HOME"/profview/kernel-*.syms >/dev/null 2>&1 ||
		fail "perf: no file of the kernel's symbols under $XDG_CACHE_HOME/profview"
	"$PROFVIEW" --folded --addresses perf.raw >perf.again 2>&1 || fail "profview --folded failed again"
	cmp -s perf.folded perf.again || fail "perf: the kernel's frames named otherwise from the kept symbols"
	PROFVIEW_CACHE=off "$PROFVIEW" --folded --addresses perf.raw >perf.off 2>&1 ||
		fail "profview --folded failed with PROFVIEW_CACHE=off"
	cmp -s perf.folded perf.off || fail "perf: the kernel's frames named otherwise with PROFVIEW_CACHE=off"
	# the starting thread too, whose timer is the event the engine's
	# probe opened: dd of a single thread, mostly in its system calls
	"$COLLECT_TIMER" --engine=perf -o main.raw dd if=/dev/zero of=/dev/null bs=4k count=200000 2>main.err ||
		fail "collect-timer dd failed: $(cat main.err)"
	"$PROFVIEW" --folded --addresses main.raw >main.folded 2>/dev/null || fail "profview --folded failed on main.raw"
	grep -q ' @0xffff[89a-f][0-9a-f]*_\[k\]' main.folded ||
		fail "perf: no named kernel frame in the samples of a program's starting thread: $(head -c 600 main.folded)"
	! grep -q '\[kernel\] @0x0_\[k\]' main.folded ||
		fail "perf: a sample of the starting thread without its kernel call chain: $(grep -m1 '\[kernel\] @0x0' main.folded)"
fi
exit 0
