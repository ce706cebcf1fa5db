#!/usr/bin/env bash
# collect-timer -p: profiling a process that runs.  A server computing on
# four threads, and a fifth started while attached, attached to for 3 s:
# each thread's share of the samples against its share of the CPU time
# its own clocks measured over the attach (within 5 sigma); the process afterwards as before (its threads,
# SIGPROF's action); a second attach reuses the library.  Threads blocked
# in read, nanosleep, epoll_wait and a futex end their calls as they
# would have without it.  A process with a thread in malloc all the time
# is attached to eight times, each in bounded time (a thread stopped with
# the lock held would wait for ever).  A thread's frames are what make it
# busy, not stale words its frames left: a busy thread with stale return
# addresses into malloc and the loader in its live frame is attached to;
# one inside the loader under code without CFI is refused.  sqlite3 in a
# query and a Python program are attached to, their functions in the
# profile (each check left out when its program is not installed).  Each
# refusal (a process traced, stopped, static, another user's, under a
# seccomp filter that forbids opening files; kernel.yama.ptrace_scope 3,
# and 2 for a user) is one line and leaves the process running; one attached to
# goes on with its registers as they were, vector ones too.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
build attachserve
build attachlock
build attachstale
build attachinit
build attachfp
cd "$WORK"

# one_line FILE PATTERN: FILE is one line, matching PATTERN
one_line() {
	[ "$(wc -l < "$1")" -eq 1 ] || fail "$1 is not one line: $(cat "$1")"
	grep -q -- "$2" "$1" || fail "$1 does not say '$2': $(cat "$1")"
}

pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$WORK" || true' EXIT

# ---- refusals that need no tracing ----
set +e
"$COLLECT_TIMER" -p 0 2> e0.err
rc=$?
set -e
[ "$rc" = 2 ] || fail "-p 0: status $rc"
"$COLLECT_TIMER" -p 1 ./attachserve 2> e1.err && fail "-p and a program accepted"
grep -q "one or the other" e1.err || fail "-p and a program: $(cat e1.err)"
max=$(cat /proc/sys/kernel/pid_max)
"$COLLECT_TIMER" -p "$max" 2> e2.err && fail "pid $max accepted"
one_line e2.err "no process $max"

scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if [ "$scope" = 3 ]; then
	# no process may be traced until the next boot
	"$COLLECT_TIMER" -p $$ 2> e3.err && fail "attached with ptrace_scope 3"
	one_line e3.err "ptrace_scope is 3"
	echo "SKIP: kernel.yama.ptrace_scope is 3: the checks that attach cannot run" >&2
	exit 77
fi

# ---- shares, and the process as it was ----
# library_gone PID: the library's threads have ended in PID
# (collect-timer waits for the one that ran the end, which closes the
# channel collect-timer waits on just before it returns)
library_gone() {
	! grep -qs '^profview-' /proc/"$1"/task/*/comm ||
		fail "a thread of the library is left: $(grep -s '^profview-' /proc/"$1"/task/*/comm)"
}

mkfifo in1
./attachserve < in1 > serve.out &
serve=$!
pids+=("$serve")
exec 3> in1
wait_lines serve.out ready
kill -USR1 "$serve"
wait_lines serve.out "^cpu" 1
"$COLLECT_TIMER" -p "$serve" --duration=3 -o t1.raw 2> t1.err &
collector=$!
# a thread started while attached: found by the library's thread
wait_lines t1.err "attached to process"
sleep 0.5
kill -USR2 "$serve"
wait "$collector" || fail "attach: $(cat t1.err)"
library_gone "$serve"
kill -USR1 "$serve"
wait_lines serve.out "^cpu" 2
grep -q "stopped one thread for [0-9.]* ms" t1.err || fail "no time stopped said: $(cat t1.err)"
note "$(grep -o 'stopped one thread for [0-9.]* ms' t1.err)"
[ "$(stat -c %a t1.raw)" = 600 ] || fail "the trace is mode $(stat -c %a t1.raw)"
"$PROFVIEW" --flat t1.raw > t1.flat || fail "profview cannot read the trace"
for f in spin_a spin_b spin_c spin_d spin_e; do
	flat_column t1.flat "$f" 3
done > counts
grep '^cpu' serve.out | awk '{ print $2, $3, $4, $5, $6 }' > clocks
paste <(tr '\n' ' ' < counts) <(sed -n 1p clocks) <(sed -n 2p clocks) | awk '
{
	for (k = 1; k <= 5; k++) { n[k] = $k; d[k] = $(10 + k) - $(5 + k); N += n[k]; D += d[k] }
	if (N < 200) { print "only " N " samples of the five functions"; exit 1 }
	for (k = 1; k <= 5; k++) {
		s = d[k] / D; p = n[k] / N; sigma = sqrt(s * (1 - s) / N)
		printf "# thread %d: %.3f of the samples, %.3f of the CPU time (5 sigma %.3f)\n", k, p, s, 5 * sigma
		if (p - s > 5 * sigma || s - p > 5 * sigma) bad = 1
	}
	exit bad
}' || fail "the threads' shares of the samples are not their shares of the CPU time"
before=$(grep '^cpu' serve.out | sed -n 1p | awk '{ print $7, $8, $9, $10 }')
after=$(grep '^cpu' serve.out | sed -n 2p | awk '{ print $7, $8, $9, $10 }')
# (one more thread: the fifth computing one)
[ "$before" = "threads 6 sigprof default" ] || fail "before the attach: $before"
[ "$after" = "threads 7 sigprof default" ] || fail "after the attach: $after"
grep -l '^profview-' /proc/"$serve"/task/*/comm 2>/dev/null && fail "a thread of the library is left"
# the threads found running are unwound in the process, as a launched
# run's are (tens of bytes a sample): their walks read a copy of their
# stacks; a sample written as a stack copy instead is the odd one out
read -r walked copied < <("$RAWDUMP" t1.raw | awk '$1 == "sample" { s++ } $1 == "regs" { r++ }
	END { print s + 0, r + 0 }')
note "first attach: $walked samples unwound in the process, $copied written as stack copies"
[ $((copied * 20)) -le $((walked + copied)) ] && [ "$walked" -gt 0 ] ||
	fail "the attached threads' samples were not unwound in the process: $walked walked, $copied copies"

# a second attach: the library loaded once, the process as it was, with
# the mappings it had after the first (nothing of the attach left mapped)
maps1=$(wc -l < /proc/"$serve"/maps)
fds1=$(ls /proc/"$serve"/fd | wc -l)
# (ended by SIGINT, as ^C does; a second collect-timer meanwhile refused;
# --unwind=check: each walk over a stack copy against the analyzer's own
# unwinding of the same copy, sample for sample, as tests/e2e/cfi.sh does)
"$COLLECT_TIMER" -p "$serve" --unwind=check -o t2.raw 2> t2.err &
collector=$!
wait_lines t2.err "attached to process"
"$COLLECT_TIMER" -p "$serve" -o t6.raw 2> e6.err && fail "a second collect-timer attached too"
one_line e6.err "another collect-timer -p"
sleep 1
kill -INT "$collector"
wait "$collector" || fail "second attach: status $?: $(cat t2.err)"
[ "$(wc -l < /proc/"$serve"/maps)" = "$maps1" ] ||
	fail "$maps1 mappings after the first attach, $(wc -l < /proc/"$serve"/maps) after the second"
[ "$(ls /proc/"$serve"/fd | wc -l)" = "$fds1" ] ||
	fail "$fds1 open files after the first attach, $(ls /proc/"$serve"/fd | wc -l) after the second"
[ "$(grep -c 'r-xp.*libprofview-timer.so' /proc/"$serve"/maps)" = 1 ] ||
	fail "the library is mapped $(grep -c 'r-xp.*libprofview-timer.so' /proc/"$serve"/maps) times"
"$PROFVIEW" --flat t2.raw > t2.flat 2> t2.perr || fail "profview cannot read the second trace"
grep -q spin_d t2.flat || fail "the second attach has no samples of spin_d"
line=$(grep 'unwind check:' t2.perr | head -1)
read -r samples agree differ < <(echo "$line" |
	sed -n 's/.*check: \([0-9]*\) samples: \([0-9]*\) agree.*, \([0-9]*\) differ,.*/\1 \2 \3/p')
note "second attach: $line"
[ -n "$samples" ] || fail "the second attach was not compared: $(cat t2.perr)"
[ "$differ" -eq 0 ] || fail "the walks over the attached threads' stack copies differ: $line"
[ "$samples" -ge 20 ] && [ $((agree * 100)) -ge $((samples * 95)) ] ||
	fail "the collector unwound only $agree of $samples samples of the attached threads: $line"
library_gone "$serve"
kill -USR1 "$serve"
wait_lines serve.out "^cpu" 3
after=$(grep '^cpu' serve.out | sed -n 3p | awk '{ print $7, $8, $9, $10 }')
[ "$after" = "threads 7 sigprof default" ] || fail "after the second attach: $after"
kill -0 "$serve" || fail "the server ended"
exec 3>&-
wait "$serve" || fail "the server ended with status $?"

# ---- a process that ends while profiled: said, its trace kept ----
mkfifo in5
./attachserve < in5 > ended.out &
ended=$!
pids+=("$ended")
exec 5> in5
wait_lines ended.out ready
"$COLLECT_TIMER" -p "$ended" --duration=30 -o t5.raw 2> t5.err &
collector=$!
wait_lines t5.err "attached to process"
sleep 0.5
kill -9 "$ended"
wait "$collector" || fail "the collector of an ended process: status $?: $(cat t5.err)"
exec 5>&-
grep -q "process $ended ended after" t5.err || fail "the end is not said: $(cat t5.err)"
"$PROFVIEW" --flat t5.raw 2> /dev/null | grep -q spin_d || fail "no samples of the ended process"

# ---- blocked calls end as without the attach ----
mkfifo in2
./attachserve blocked < in2 > blocked.out &
blocked=$!
pids+=("$blocked")
exec 4> in2
wait_lines blocked.out ready
"$COLLECT_TIMER" -p "$blocked" --duration=0.5 -o t3.raw 2> t3.err || fail "attach: $(cat t3.err)"
wait_lines blocked.out "returned"
wait_lines blocked.out "returned" 3
exec 4>&-
wait "$blocked" || fail "the blocked server ended with status $?"
grep -qx "read returned 1" blocked.out || fail "read: $(cat blocked.out)"
grep -qx "nanosleep returned 0" blocked.out || fail "nanosleep: $(cat blocked.out)"
grep -qx "epoll_wait returned 0" blocked.out || fail "epoll_wait: $(cat blocked.out)"
grep -qx "futex returned -1 Connection timed out" blocked.out || fail "futex: $(cat blocked.out)"

# ---- the allocator's lock taken all the time by a thread: eight attaches,
# none stopping that thread inside it (where our dlopen would wait for
# the lock that thread holds, for ever) ----
# attach_eight PID WHAT [OUT]: eight attaches of 0.05 s to PID, each in
# bounded time (a failure says what PID wrote to OUT)
attach_eight() {
	local i
	for i in 1 2 3 4 5 6 7 8; do
		timeout -k 1 20 "$COLLECT_TIMER" -q -p "$1" --duration=0.05 -o t4.raw 2> t4.err ||
			fail "attach $i to $2: status $?: $(cat t4.err) $(cat ${3:-/dev/null})"
	done
}
./attachlock > lock.out &
locked=$!
pids+=("$locked")
wait_lines lock.out ready
attach_eight "$locked" "a process busy in malloc"
kill -0 "$locked" || fail "the process busy in malloc ended"
kill -9 "$locked"

# ---- a computation in vector registers goes on as it was: eight
# attaches stop attachfp's thread in the middle of it (the calls made
# there use those registers too) ----
./attachfp > fp.out &
fp=$!
pids+=("$fp")
wait_lines fp.out ready
attach_eight "$fp" attachfp fp.out
sleep 0.3
kill -0 "$fp" && ! grep -q mismatch fp.out ||
	fail "attachfp's computation went wrong after the attaches: $(cat fp.out)"
kill -9 "$fp"

# ---- a thread judged by its frames, not by stale words ----
# a busy thread whose live frame's unused bytes hold return addresses into
# malloc and the loader, left by calls that returned: attached to (a scan
# of the stack's words took them for frames and refused it for ever)
./attachstale > stale.out &
stale=$!
pids+=("$stale")
wait_lines stale.out ready
read -r _ loader inmalloc < stale.out
[ "$loader" -gt 0 ] && [ "$inmalloc" -gt 0 ] ||
	fail "attachstale left no stale return addresses to test with: $(head -1 stale.out)"
timeout -k 1 20 "$COLLECT_TIMER" -p "$stale" --duration=0.3 -o t7.raw 2> t7.err ||
	fail "a thread with stale return addresses ($loader into the loader, $inmalloc into malloc) was not attached to: $(cat t7.err)"
note "$(grep -o 'stopped one thread for [0-9.]* ms' t7.err) with $loader stale words into the loader, $inmalloc into malloc"
"$PROFVIEW" --flat t7.raw > t7.flat 2> /dev/null || fail "profview cannot read the trace of attachstale"
[ "$(flat_self t7.flat stale_spin)" -gt 0 ] || fail "no samples of stale_spin: $(cat t7.flat)"
# its stack, 16 KiB deep, is read a piece first and the rest as the walk
# needs it: with --stack-size=32k every walk reaches main, as the
# analyzer's own unwinding of the same copy does
"$COLLECT_TIMER" -q -p "$stale" --stack-size=32k --unwind=check --duration=0.5 -o t12.raw 2> t12.err ||
	fail "the second attach to attachstale: $(cat t12.err)"
"$PROFVIEW" --flat t12.raw > t12.flat 2> t12.perr || fail "profview cannot read the second trace of attachstale"
line=$(grep 'unwind check:' t12.perr | head -1)
read -r samples agree < <(echo "$line" | sed -n 's/.*check: \([0-9]*\) samples: \([0-9]*\) agree.*/\1 \2/p')
note "attachstale, --stack-size=32k: $line"
[ "${samples:-0}" -gt 0 ] && [ "$agree" = "$samples" ] && [ "$(flat_cum t12.flat main)" = "$samples" ] ||
	fail "the walks over attachstale's deep stack: $line; main in $(flat_cum t12.flat main)"
kill -9 "$stale"
# a thread inside the loader below code without call frame information:
# the walk stops at its first frame, and the words above it show the
# loader's frames: refused, the process left running
"$CC" -O1 -g -shared -fPIC -DATTACHINIT_LIB -o libattachinit.so "$SRCDIR/tests/progs/attachinit.c" ||
	fail "cannot compile attachinit.c as a library"
./attachinit ./libattachinit.so > init.out &
init=$!
pids+=("$init")
wait_lines init.out ready
sleep 0.2
timeout -k 1 20 "$COLLECT_TIMER" -p "$init" --duration=0.1 -o t8.raw 2> e9.err &&
	fail "a thread inside the loader, under a frame without CFI, was stopped: $(cat e9.err)"
one_line e9.err "stayed busy in the allocator or the dynamic loader"
kill -0 "$init" || fail "the process inside the loader ended"
kill -9 "$init"

# ---- real programs ----
# cpu_ticks PID: the user CPU time of PID so far, in clock ticks
cpu_ticks() {
	awk '{ print $14 }' "/proc/$1/stat"
}
# busy_for PID TICKS: until PID has used TICKS ticks of CPU (10 s at most)
busy_for() {
	local i
	for i in $(seq 200); do
		[ "$(cpu_ticks "$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "process $1 did not start its work: $(cpu_ticks "$1") ticks of CPU"
}
# attach_flat PID NAME SECONDS: PID attached to for SECONDS, its flat
# profile in NAME.flat and its count of samples in $n
attach_flat() {
	timeout -k 1 20 "$COLLECT_TIMER" -p "$1" --duration="$3" "${@:4}" -o "$2.raw" 2> "$2.err" ||
		fail "$2 (process $1) was not attached to: $(cat "$2.err")"
	note "$2: $(grep -o 'stopped one thread for [0-9.]* ms' "$2.err")"
	"$PROFVIEW" --flat "$2.raw" > "$2.flat" 2> /dev/null || fail "profview cannot read the trace of $2"
	n=$(awk '/ in [0-9]+ samples/ { for (i = 1; i < NF; i++) if ($(i + 1) == "samples") print $i }' \
		"$2.flat" | head -1)
}
# sqlite3 in a long query: attached to, its functions in the profile
if command -v sqlite3 > /dev/null; then
	sqlite3 :memory: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c
		LIMIT 10000000000) SELECT sum(x) FROM c;" > /dev/null &
	sq=$!
	pids+=("$sq")
	busy_for "$sq" 20
	attach_flat "$sq" sqlite3 1
	step=$(flat_cum sqlite3.flat sqlite3_step)
	# every sample of the query is under sqlite3_step: at least half
	[ "${n:-0}" -ge 20 ] && [ $((step * 2)) -ge "$n" ] ||
		fail "sqlite3_step in $step of ${n:-0} samples of sqlite3: $(head -12 sqlite3.flat)"
	kill -9 "$sq"
else
	echo "# sqlite3 is not installed: the attach to sqlite3 is left out"
fi
# a running Python program: its Python functions in the profile; none in
# an attach with --no-python, and in the next attach again
py=$(command -v python3.11 || command -v python3 || true)
if [ -n "$py" ]; then
	"$py" "$SRCDIR/tests/progs/pywork.py" shares 600 > /dev/null &
	pyp=$!
	pids+=("$pyp")
	busy_for "$pyp" 30
	attach_flat "$pyp" python 2
	module=$(flat_cum python.flat "<module>")
	spin=$(flat_cum python.flat spin)
	# spin has half the work: absent from 30 samples once in 1e9 runs
	[ "${n:-0}" -ge 30 ] && [ $((module * 2)) -ge "$n" ] && [ "$spin" -gt 0 ] ||
		fail "python's frames: <module> in $module, spin in $spin of ${n:-0} samples: $(head -12 python.flat)"
	# attached again with --no-python: none; and once more without: read again
	attach_flat "$pyp" nopython 1 --no-python
	module=$(flat_cum nopython.flat "<module>")
	[ "${n:-0}" -ge 10 ] && [ "${module:-0}" = 0 ] && ! grep -q '\[python' nopython.flat ||
		fail "--no-python attach: <module> in $module of ${n:-0} samples: $(head -12 nopython.flat)"
	attach_flat "$pyp" python3rd 1
	module=$(flat_cum python3rd.flat "<module>")
	[ "${n:-0}" -ge 10 ] && [ $((module * 2)) -ge "$n" ] ||
		fail "a third attach: <module> in $module of ${n:-0} samples: $(head -12 python3rd.flat)"
	kill -9 "$pyp"
else
	echo "# no python3: the attach to a Python program is left out"
fi

# ---- refusals that leave the process running ----
if command -v gdb > /dev/null; then
	sleep 30 &
	traced=$!
	pids+=("$traced")
	gdb -nx -batch -p "$traced" -ex 'shell sleep 5' > /dev/null 2>&1 &
	pids+=("$!")
	for i in $(seq 100); do
		[ "$(awk '/^TracerPid/ { print $2 }' /proc/$traced/status)" != 0 ] && break
		sleep 0.05
	done
	"$COLLECT_TIMER" -p "$traced" 2> e4.err && fail "attached to a traced process"
	one_line e4.err "already traced"
	kill -0 "$traced" || fail "the traced process ended"
else
	echo "# gdb is not installed: the check of a traced process is left out"
fi
sleep 30 &
stopped=$!
pids+=("$stopped")
kill -STOP "$stopped"
for i in $(seq 100); do
	grep -q '^State:.T' /proc/"$stopped"/status && break
	sleep 0.05
done
"$COLLECT_TIMER" -p "$stopped" 2> e10.err && fail "attached to a stopped process"
one_line e10.err "is stopped"
grep -q '^State:.T' /proc/"$stopped"/status || fail "the stopped process was started"
if "$CC" -static -O1 -o static "$SRCDIR/tests/progs/attachlock.c" -lpthread 2> /dev/null; then
	./static > static.out &
	st=$!
	pids+=("$st")
	wait_lines static.out ready
	"$COLLECT_TIMER" -p "$st" 2> e5.err && fail "attached to a static program"
	one_line e5.err "static program"
	kill -0 "$st" || fail "the static program ended"
else
	echo "# no static C library: the check of a static program is left out"
fi
if command -v runuser > /dev/null && [ "$(id -u)" = 0 ]; then
	sleep 30 &
	pids+=("$!")
	runuser -u nobody -- "$COLLECT_TIMER" -p "$!" 2> e8.err && fail "another user's process attached to"
	one_line e8.err "belongs to user 0"
	# root profiles another user's process: the trace is that user's
	chmod 755 "$WORK"
	mkfifo in9
	runuser -u nobody -- ./attachserve < in9 > nobody.out &
	nobody=$!
	pids+=("$nobody")
	exec 9> in9
	wait_lines nobody.out ready
	nobody=$(pgrep -n -u nobody attachserve)
	"$COLLECT_TIMER" -p "$nobody" --duration=1 -o t9.raw 2> t9.err ||
		fail "root attaching to nobody's process: $(cat t9.err)"
	[ "$(stat -c '%U %a' t9.raw)" = "nobody 600" ] || fail "the trace is $(stat -c '%U %a' t9.raw)"
	"$PROFVIEW" --flat t9.raw 2> /dev/null | grep -q spin_d || fail "no samples of nobody's process"
	exec 9>&-
else
	echo "# not root, or no runuser: the check of another user's process is left out"
fi
# a process whose seccomp filter forbids opening files: the library cannot
# be loaded, which is said with the filter named, and the process runs on
build seccompdeny
./seccompdeny > sc.out &
sc=$!
pids+=("$sc")
wait_lines sc.out ready
"$COLLECT_TIMER" -p "$sc" --duration=1 -o sc.raw 2> e11.err && fail "attached under a seccomp filter"
one_line e11.err "its seccomp filter forbids"
if [ -x "$COLLECT_HEAP" ]; then
	"$COLLECT_HEAP" -p "$sc" --duration=1 -o sch.raw 2> e12.err && fail "collect-heap attached under a seccomp filter"
	one_line e12.err "its seccomp filter forbids"
fi
kill -0 "$sc" || fail "the process under a seccomp filter ended"
# kernel.yama.ptrace_scope 3 and 2 (stood for by the test's variable where
# the machine has no Yama): refused before any tracing
PROFVIEW_TEST_PTRACE_SCOPE=3 "$COLLECT_TIMER" -p "$sc" 2> e13.err && fail "attached with ptrace_scope 3"
one_line e13.err "ptrace_scope is 3: no process may be attached to until the next boot"
if command -v runuser > /dev/null && [ "$(id -u)" = 0 ]; then
	runuser -u nobody -- sleep 30 &
	pids+=("$!")
	for i in $(seq 100); do
		nsleep=$(pgrep -n -u nobody -x sleep || true)
		[ -n "$nsleep" ] && break
		sleep 0.05
	done
	pids+=("$nsleep")
	runuser -u nobody -- env PROFVIEW_TEST_PTRACE_SCOPE=2 "$COLLECT_TIMER" -p "$nsleep" 2> e14.err &&
		fail "a user attached with ptrace_scope 2"
	one_line e14.err "ptrace_scope is 2: only root may attach: run collect-timer as root, or 'sysctl kernel.yama.ptrace_scope=1'"
fi
kill -0 "$sc" || fail "the process under a seccomp filter ended"
echo "attach: ok"
