#!/usr/bin/env bash
# Python frames under what a profiler, a debugger or an embedder changes in
# the interpreter, and under attach (tests/progs/pyhooks.py), with each
# CPython 3.9 to 3.13 on the machine:
#   - setprofile, settrace: with a sys.setprofile callback installed, and
#     with a sys.settrace one, the split of the samples between hook_a and
#     hook_b within 5 binomial sigmas (plus 1%) of their CPU time
#     (time.thread_time); the callback, prof_callback or trace_callback,
#     has samples of its own, right under the Python function it was
#     called in (90% of its time at least);
#   - evalhook: with the frame evaluation function replaced (PEP 523) by
#     one that calls the default one (tests/progs/pyevalhook.c, installed
#     with ctypes): the hook saw the calls, the same split within 5
#     sigmas, hook_a right under split (the hook's frame between them
#     allowed) in 90% of its time; skipped, and said, where the
#     interpreter exports no _PyInterpreterState_SetEvalFrameFunc;
#   - sub: code run in a subinterpreter (_interpreters or
#     _xxsubinterpreters, whichever exists) has its own frames, under the
#     frames of the interpreter that ran it: sub_spin under run_sub in 90%
#     of its time, 100 ms at least from the main thread and from another;
#     the main thread's split between main_spin and sub_spin within 5
#     sigmas of their CPU time; skipped, and said, without the module;
#   - attach, --clock=wall: a process attached to (collect-timer -p) has
#     its threads off CPU under their Python functions: sleep_work, a
#     thread that sleeps, at least half of the 2 s under it (the program
#     ends half a second after the attach), and
#     "[sleeping]" right under it in most of that; busy_work beside it;
#     skipped, and said, where ptrace_scope forbids attaching;
#   - split: a CPython of a version not read (3.8), cut into segments
#     (--split): each segment read alone says "python 3.8: its frames are
#     not read", and so do the collector's summary line of the process
#     (once) and the segments merged (without a count of processes); a
#     fork's two processes are said each once, and the merged segments
#     say "in 2 processes"; skipped, and said, without a 3.8; a version
#     read is not said so in any segment.
# A chance failure of each statistical check: less than once in 10^5.
# The interpreters' splits run two at a time (pool_start: one thread's
# samples against its own CPU time); the attaches, of wall-clock time, one
# at a time.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"
HOOKS="$SRCDIR/tests/progs/pyhooks.py"
WORKPY="$SRCDIR/tests/progs/pywork.py"

"$CC" -O1 -g -fno-omit-frame-pointer -shared -fPIC -o pyevalhook.so "$SRCDIR/tests/progs/pyevalhook.c" ||
	fail "cannot build pyevalhook.so"

# samples FLAT NAME: the cum samples of NAME in a --flat report
samples() {
	flat_column "$1" "$2" 3
}

# share_of FOLDED INSIDE RIGHT: "K N": N the time of the stacks that hold
# INSIDE (a regular expression), K of those that match RIGHT too
share_of() {
	awk -v a="$2" -v b="$3" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s !~ a) next
		all += n; if (s ~ b) k += n }
		END { print k + 0, all + 0 }' "$1"
}

# at_least_90 LABEL WHAT K N [MIN]: fails unless K >= 90% of N, N >= MIN
# (100 ms unless given)
at_least_90() {
	[ "$4" -ge "${5:-100000}" ] && [ $(($3 * 10)) -ge $(($4 * 9)) ] ||
		fail "$1: $2: $3 of $4 us"
	note "$1: $2: $3 of $4 us"
}

# split_within FLAT TRUTH LABEL A B: the samples of A and B in FLAT split
# as their CPU time in TRUTH ("truth NAME SECONDS" lines), within 5 sigmas
split_within() {
	local flat=$1 truth=$2 label=$3 a=$4 b=$5 ka kb ta tb
	ka=$(samples "$flat" "$a")
	kb=$(samples "$flat" "$b")
	ta=$(awk -v f="$a" '$1 == "truth" && $2 == f { print $3 }' "$truth")
	tb=$(awk -v f="$b" '$1 == "truth" && $2 == f { print $3 }' "$truth")
	[ -n "$ta" ] && [ -n "$tb" ] || fail "$label: no truth of $a and $b: $(cat "$truth")"
	[ $((ka + kb)) -ge 200 ] || fail "$label: $ka samples in $a, $kb in $b: $(head -14 "$flat")"
	within_sigma "$ka" $((ka + kb)) "$(awk -v a="$ta" -v b="$tb" 'BEGIN { print a / (a + b) }')" 5 ||
		fail "$label: $a $ka, $b $kb samples; their CPU times $ta s, $tb s: $(head -14 "$flat")"
	note "$label: $a $ka samples ($ta s), $b $kb ($tb s)"
}

# check_hookfn PY LABEL MODE CALLBACK: setprofile (prof_callback) or
# settrace (trace_callback)
check_hookfn() {
	local k n cb=$4
	"$COLLECT_TIMER" -q -F 1000 -o p.raw "$1" "$HOOKS" "$3" 0.6 >p-truth.txt ||
		fail "$2: pyhooks.py $3 failed"
	"$PROFVIEW" -q --flat p.raw >p-flat.txt
	split_within p-flat.txt p-truth.txt "$2, $3" hook_a hook_b
	# (setprofile: some 3% of the time, 18 samples expected of 600; 3 at
	# least fails by chance less than once in 10^5)
	k=$(samples p-flat.txt "$cb")
	[ "$k" -ge 3 ] || fail "$2, $3: $cb in $k samples: $(head -14 p-flat.txt)"
	"$PROFVIEW" -q --folded p.raw >p.txt
	read -r k n < <(share_of p.txt ";$cb(;|\$)" \
		";(set(profile|trace)_main|split|hook_a|hook_b|([A-Za-z]+\.)?(choice|uniform|_randbelow[a-z_]*));$cb(;|\$)")
	at_least_90 "$2, $3" "$cb right under a Python function" "$k" "$n" 1
}

# check_evalhook PY LABEL
check_evalhook() {
	local calls k n
	if ! "$1" -c 'import ctypes; ctypes.pythonapi._PyInterpreterState_SetEvalFrameFunc; ctypes.pythonapi._PyEval_EvalFrameDefault' 2>/dev/null; then
		note "SKIP: $2: evalhook: the interpreter exports no _PyInterpreterState_SetEvalFrameFunc or _PyEval_EvalFrameDefault"
		return
	fi
	"$COLLECT_TIMER" -q -F 1000 -o e.raw "$1" "$HOOKS" evalhook "$WORK/pyevalhook.so" 0.6 >e-truth.txt ||
		fail "$2: pyhooks.py evalhook failed"
	calls=$(awk '$1 == "hook" { print $2 }' e-truth.txt)
	[ "${calls:-0}" -ge 1000 ] || fail "$2, evalhook: the hook saw ${calls:-no} calls"
	"$PROFVIEW" -q --flat e.raw >e-flat.txt
	split_within e-flat.txt e-truth.txt "$2, evalhook" hook_a hook_b
	"$PROFVIEW" -q --folded e.raw >e.txt
	read -r k n < <(share_of e.txt ';hook_a(;|$)' ';split;(hook_eval;)?hook_a(;|$)')
	at_least_90 "$2, evalhook" "hook_a under split" "$k" "$n"
	"$PROFVIEW" -q --folded --native-frames e.raw >en.txt
	read -r k n < <(share_of en.txt ';hook_a(;|$)' ';split;(.*;)?hook_eval;(.*;)?hook_a(;|$)')
	at_least_90 "$2, evalhook, --native-frames" "hook_eval between split and hook_a" "$k" "$n"
}

# check_sub PY LABEL
check_sub() {
	local k n
	"$COLLECT_TIMER" -q -o sub.raw "$1" "$HOOKS" sub 0.6 >sub-truth.txt || fail "$2: pyhooks.py sub failed"
	if grep -q '^nosub' sub-truth.txt; then
		note "SKIP: $2: subinterpreters: $(sed 's/^nosub //' sub-truth.txt)"
		return
	fi
	"$PROFVIEW" -q --folded sub.raw >sub.txt
	read -r k n < <(share_of sub.txt ';sub_spin(;|$)' ';run_sub;(.*;)?sub_spin(;|$)')
	at_least_90 "$2, sub" "sub_spin under run_sub" "$k" "$n"
	read -r k n < <(share_of sub.txt ';sub_spin(;|$)' ';sub_main;run_sub;(.*;)?sub_spin(;|$)')
	[ "$k" -ge 100000 ] || fail "$2, sub: $k us of sub_spin from the main thread: $(grep -m2 sub_spin sub.txt)"
	read -r k n < <(share_of sub.txt ';sub_spin(;|$)' ';sub_thread;run_sub;(.*;)?sub_spin(;|$)')
	[ "$k" -ge 100000 ] || fail "$2, sub: $k us of sub_spin from another thread: $(grep -m2 sub_thread sub.txt)"
	note "$2, sub: sub_spin from another thread $k us"
	"$PROFVIEW" -q --flat --focus='^sub_main$' --ignore='^sub_thread$' sub.raw >sub-flat.txt
	split_within sub-flat.txt sub-truth.txt "$2, sub" main_spin sub_spin
}

# check_attach_wall PY LABEL
check_attach_wall() {
	local pid all sl busy
	# (until half a second after the attach has ended: 60 s at most)
	rm -f sl.stop
	"$1" "$HOOKS" sleeper 60 sl.stop >sl.out &
	pid=$!
	# (within a minute: a busy machine can take seconds to start it)
	for _ in $(seq 1200); do
		grep -q '^ready' sl.out && break
		sleep 0.05
	done
	grep -q '^ready' sl.out || {
		# (what it was doing, for whoever reads the log)
		ps -o pid,stat,wchan:32,etime,cmd -p "$pid" >&2 || true
		cat "/proc/$pid/stack" >&2 2>/dev/null || true
		! command -v gdb >/dev/null ||
			timeout 30 gdb -q -batch -p "$pid" -ex 'thread apply all bt' >&2 2>&1 || true
		kill -9 "$pid" 2>/dev/null || true
		fail "$2: pyhooks.py sleeper did not start (its state above)"
	}
	"$COLLECT_TIMER" -q -p "$pid" --clock=wall --duration=2 -o aw.raw 2>aw.err ||
		{ kill "$pid"; fail "$2: collect-timer -p --clock=wall: $(cat aw.err)"; }
	touch sl.stop
	wait "$pid" || fail "$2: pyhooks.py sleeper failed after the attach"
	"$PROFVIEW" -q --folded aw.raw >aw.txt
	read -r sl all < <(share_of aw.txt ';sleep_work(;|$)' ';sleep_work;\[sleeping\]')
	# (2 s of wall time, nearly all of it asleep; the GIL waited for
	# after each sleep is the rest)
	[ "$all" -ge 1000000 ] && [ $((sl * 2)) -ge "$all" ] ||
		fail "$2, attach: sleep_work $all us, [sleeping] under it $sl: $(grep -m3 -e sleep_work -e Thread aw.txt | cut -c1-300)"
	read -r busy _ < <(share_of aw.txt ';busy_work(;|$)' '.')
	[ "$busy" -ge 100000 ] || fail "$2, attach: busy_work $busy us"
	note "$2, attach: sleep_work $all us, [sleeping] $sl; busy_work $busy us"
}

# check_one PY LABEL: the checks of one interpreter that hold beside other
# work (run two at a time: pool_start): one thread's split against its own
# CPU time, stacks
check_one() {
	check_hookfn "$1" "$2" setprofile prof_callback
	check_hookfn "$1" "$2" settrace trace_callback
	check_evalhook "$1" "$2"
	check_sub "$1" "$2"
}

# check_split: --split with a version not read: each segment, the
# summary, the merge; a version read is not said so
check_split() {
	old=$(ls -d /root/.pyenv/versions/3.8.*/bin/python3.8 2>/dev/null | head -1 || true)
	if [ -n "$old" ]; then
		"$COLLECT_TIMER" --split=0.3 -o o.raw "$old" "$WORKPY" deep 1 >/dev/null 2>o.err ||
			fail "$old --split: pywork.py failed: $(cat o.err)"
		[ "$(grep -c 'pid [0-9]* (python3.8): python 3.8: its frames are not read' o.err)" = 1 ] ||
			fail "$old --split: the summary does not say once that its frames are not read: $(cat o.err)"
		n=0
		for f in o.seg*.raw; do
			n=$((n + 1))
			"$PROFVIEW" --flat "$f" 2>&1 | grep -q '^warning: python 3.8: its frames are not read (' ||
				fail "$old --split: $f read alone: $("$PROFVIEW" --flat "$f" 2>&1 | head -5)"
		done
		[ "$n" -ge 3 ] || fail "$old --split: $n segments of 1 s cut at 0.3 s"
		"$PROFVIEW" --flat o.seg*.raw 2>&1 | grep -q '^warning: python 3.8: its frames are not read (' ||
			fail "$old --split: the $n segments merged: $("$PROFVIEW" --flat o.seg*.raw 2>&1 | head -5)"
		note "$old --split: said in each of $n segments, once in the summary"
		"$COLLECT_TIMER" --split=0.3 -o of.raw "$old" "$WORKPY" fork 0.6 >of.out 2>of.err ||
			fail "$old --split: pywork.py fork failed: $(cat of.err)"
		sed -n 's/.*pid \([0-9]*\) (python3.8): python 3.8: its frames are not read.*/\1/p' of.err | sort >of.pids
		[ "$(wc -l <of.pids)" = 2 ] && [ "$(sort -u of.pids | wc -l)" = 2 ] &&
			grep -qx "$(awk '$1 == "child" { print $2 }' of.out)" of.pids ||
			fail "$old --split: fork: not said once of each process: $(cat of.err)"
		"$PROFVIEW" --flat of.seg*.raw 2>&1 | grep -q '^warning: python 3.8: its frames are not read in 2 processes' ||
			fail "$old --split: fork: the segments merged: $("$PROFVIEW" --flat of.seg*.raw 2>&1 | head -6)"
	else
		note "SKIP: --split with a version not read: no CPython 3.8 under /root/.pyenv/versions"
	fi
	py=$(pythons 2>/dev/null | head -1)
	"$COLLECT_TIMER" --split=0.3 -o r.raw "$py" "$WORKPY" deep 0.7 >/dev/null 2>r.err || fail "$py --split: pywork.py failed"
	! grep -q 'frames are not read' r.err || fail "$py --split: said to be unread: $(cat r.err)"
	for f in r.seg*.raw; do
		! "$PROFVIEW" --flat "$f" 2>&1 | grep -q 'frames are not read' || fail "$py --split: $f said to be unread"
	done
}

found=0
labels=()
while read -r py <&3; do
	label="$py ($("$py" -c 'import platform; print(platform.python_version())'))"
	labels+=("$py" "$label")
	found=$((found + 1))
	pool_start "py$found" check_one "$py" "$label"
done 3< <(pythons)
[ "$found" -gt 0 ] || { echo "SKIP: no CPython 3.9 to 3.13 on this machine" >&2; exit 77; }
pool_start split check_split
pool_wait
# wall-clock time: one program at a time, with nothing of this test beside it
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
for ((i = 0; i < ${#labels[@]}; i += 2)); do
	if [ "$scope" -lt 3 ]; then
		check_attach_wall "${labels[i]}" "${labels[i + 1]}"
	else
		note "SKIP: ${labels[i + 1]}: attach: kernel.yama.ptrace_scope is 3"
	fi
	note "${labels[i + 1]}: ok"
done
