#!/usr/bin/env bash
# collect-timer -p with several processes: a pre-forked server (a parent
# and three workers, each computing in bursts of its own length) attached
# to by its pids and by its name.  Every process is in the run file, each
# with its share of the samples within 5 sigma of its share of the CPU
# time its own clock measured over the attach; a pid that does not exist
# (first in the list, so that the run file is named after one that was
# not attached to) is said in one line, the others profiled, the status
# a failure.  The server runs under a name of this run's own, so that
# --all-matching finds its processes and no other run's.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
build prefork
cd "$WORK"

server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$WORK" || true' EXIT
name=prefork$(($$ % 100000))
cp prefork "$name"
"./$name" > serve.out &
server=$!
wait_lines serve.out '^ready' 4
procs=$(awk '/^ready/ { print $2 }' serve.out | sort -n)
list=$(echo $procs | tr ' ' ',')
for p in $procs; do
	[ "$p" = "$server" ] || [ "$(awk '{ print $4 }' /proc/"$p"/stat)" = "$server" ] ||
		fail "process $p is not the server's"
done

# shares PROFILE ROUND: each process's share of PROFILE's samples against
# its share of the CPU time between the ROUND-th and the next "cpu" lines
shares() {
	"$PROFVIEW" --processes --maxdepth=1 "$1" > "$1.procs" || fail "profview cannot read $1"
	for p in $procs; do
		n=$(awk -v p="[process $p" 'index($0, p) { print $1; f = 1; exit } END { if (!f) print 0 }' "$1.procs")
		[ "$n" -gt 0 ] || fail "process $p has no samples in $1: $(cat "$1.procs")"
		d=$(awk -v p="$p" -v r="$2" '$1 == "cpu" && $2 == p { k++; if (k == r) a = $4; if (k == r + 1) b = $4 }
			END { print b - a }' serve.out)
		echo "$p $n $d"
	done | awk '
	{ pid[NR] = $1; n[NR] = $2; d[NR] = $3; N += $2; D += $3 }
	END {
		if (N < 200) { print "only " N " samples"; exit 1 }
		for (k = 1; k <= NR; k++) {
			s = d[k] / D; p = n[k] / N; sigma = sqrt(s * (1 - s) / N)
			printf "# process %d: %.3f of the samples, %.3f of the CPU time (5 sigma %.3f)\n", pid[k], p, s, 5 * sigma
			if (p - s > 5 * sigma || s - p > 5 * sigma) bad = 1
		}
		exit bad
	}' || fail "$1: the processes' shares of the samples are not their shares of the CPU time"
}

# ask N: every process says its CPU time, the N-th time
ask() {
	for p in $procs; do kill -USR1 "$p"; done
	wait_lines serve.out '^cpu' $((4 * $1))
}

# ---- by pid list ----
ask 1
"$COLLECT_TIMER" -p "$list" --duration=3 -o list.raw 2> list.err || fail "-p $list: $(cat list.err)"
ask 2
[ "$(grep -c 'attached to process' list.err)" = 4 ] || fail "not four attaches: $(cat list.err)"
grep -q "4 processes, 4 with samples" list.err || fail "no summary of four: $(cat list.err)"
for p in $procs; do
	grep -q "pid $p ($name): [0-9]* samples" list.err || fail "no line of process $p: $(cat list.err)"
done
[ "$(ls list.*.raw 2>/dev/null | wc -l)" = 0 ] || fail "traces left apart: $(ls)"
[ "$(stat -c %a list.raw)" = 600 ] || fail "the run file is mode $(stat -c %a list.raw)"
shares list.raw 1

# ---- by name ----
"$COLLECT_TIMER" --all-matching="$name" --duration=3 -o name.raw 2> name.err ||
	fail "--all-matching=$name: $(cat name.err)"
ask 3
[ "$(grep -c 'attached to process' name.err)" = 4 ] || fail "not four attaches by name: $(cat name.err)"
shares name.raw 2
"$COLLECT_TIMER" --all-matching=no-such-program-here -o none.raw 2> none.err &&
	fail "--all-matching of no process succeeded"
grep -q "no process named 'no-such-program-here'" none.err || fail "no match: $(cat none.err)"
[ ! -e none.raw ] || fail "a trace was made of no process"

# ---- one pid that does not exist: said, the others profiled ----
max=$(cat /proc/sys/kernel/pid_max)
set +e
"$COLLECT_TIMER" -p "$max,$list" --duration=1 -o gone.raw 2> gone.err
rc=$?
set -e
[ "$rc" != 0 ] || fail "a list with a pid that does not exist: status 0"
[ "$(grep -c "no process $max" gone.err)" = 1 ] || fail "the missing pid is not said once: $(cat gone.err)"
grep -q "1 of the 5 processes could not be profiled" gone.err || fail "the failure is not counted: $(cat gone.err)"
"$PROFVIEW" --processes --maxdepth=1 gone.raw > gone.procs || fail "profview cannot read gone.raw"
for p in $procs; do
	grep -q "\[process $p " gone.procs || fail "process $p missing from gone.raw: $(cat gone.procs)"
done

# ---- usage ----
"$COLLECT_TIMER" -p "$server,$server" 2> twice.err && fail "a pid given twice accepted"
grep -q "given twice" twice.err || fail "twice: $(cat twice.err)"
"$COLLECT_TIMER" -p "$server,x" 2> bad.err && fail "-p $server,x accepted"
"$COLLECT_TIMER" -p "$server" --all-matching="$name" 2> both.err && fail "-p and --all-matching accepted"
grep -q "one or the other" both.err || fail "both: $(cat both.err)"
for p in $procs; do
	kill -0 "$p" || fail "process $p ended"
done
echo "attachmany: ok"
