#!/usr/bin/env bash
# Processes the program starts: a forked child, a grandchild and an exec'd
# program each write their own trace, with their own hot function, joined
# at the end into the file named; profview tells them apart by pid and
# collect-timer -v lists them all.  --no-inherit profiles the program
# alone.  A chdir does not move the traces.  A set-user-ID program is
# refused before it runs.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

"$CC" -O1 -g -fno-omit-frame-pointer -pthread -o tcases "$SRCDIR/tests/progs/timer-cases.c" ||
	fail "cannot build timer-cases"
"$CC" -O1 -g -fno-omit-frame-pointer -pthread -o bspin "$SRCDIR/tests/progs/bench-spin.c" ||
	fail "cannot build bench-spin"

# share FILE FUNCTION: cumulative share of FUNCTION in a --flat report
share() {
	awk -v f="$2" '/^profile:/ { for (i = 1; i <= NF; i++) if ($i == "samples") n = $(i - 1) }
		$6 == f { c = $3 } END { print (n > 0 ? c / n : 0) }' "$1"
}

# header_u32 FILE OFFSET: a 32-bit field of the raw header (pid 24, ppid 28)
header_u32() {
	od -An -t u4 -j "$2" -N 4 "$1" | tr -d ' '
}

mkdir tree
"$COLLECT_TIMER" -v -o tree/t.raw ./tcases forktree ./bspin 1 12000 >tree.out 2>tree.err &
launcher=$!
wait $launcher || fail "forktree failed under collect-timer: $(cat tree.err)"
parent=$(awk '$2 == "parent" { print $3 }' tree.out)
child=$(awk '$2 == "child" { print $3 }' tree.out)
grandchild=$(awk '$2 == "grandchild" { print $3 }' tree.out)
execd=$(awk '$2 == "exec" { print $3 }' tree.out)
# One file: every process's trace joined into the one named.
[ "$(ls tree)" = t.raw ] || fail "want one trace, got: $(ls tree | tr '\n' ' ')"
for pid in "$parent" "$child" "$grandchild"; do
	grep -q "^collect-timer: pid $pid (tcases): .* in 'tree/t.raw'" tree.err ||
		fail "collect-timer -v does not list pid $pid: $(cat tree.err)"
done
# (the image before the exec said in the same line, when it had no sample)
grep -Eq "^collect-timer: pid $execd \(bspin(, after tcases)?\): .* in 'tree/t.raw'" tree.err ||
	fail "collect-timer -v does not list the exec'd program: $(cat tree.err)"

check() { # TRACE PID FUNCTION
	"$PROFVIEW" --flat --pid="$2" "$1" >p.txt 2>p.err || fail "profview --pid=$2 on $1"
	[ ! -s p.err ] || fail "$1: $(cat p.err)"
	# A pid that ran another program is one process, whichever of its
	# images has samples.
	grep -qE "^profile: .* 1 process," p.txt || fail "$1, pid $2: $(sed -n 2p p.txt)"
	# its threads, not the run's (every process here has one thread)
	grep -qE "^profile: .* 1 process, 1 thread \(pid $2\)$" p.txt || fail "$1, pid $2: $(sed -n 2p p.txt)"
	s=$(share p.txt "$3")
	note "$1, pid $2: $3 in $s of the samples"
	awk -v s="$s" 'BEGIN { exit !(s >= 0.8) }' || fail "$1, pid $2: $3 in only $s of the samples: $(head -8 p.txt)"
	for other in parent_work child_work grandchild_work spin_leaf; do
		[ "$other" = "$3" ] && continue
		[ "$(flat_cum p.txt "$other")" = 0 ] || fail "$1, pid $2: $other of another process in it"
	done
}
# The program's own trace is the file's start: its header is the program's.
[ "$(header_u32 tree/t.raw 24)" = "$parent" ] || fail "header pid $(header_u32 tree/t.raw 24), not $parent"
[ "$(header_u32 tree/t.raw 28)" = "$launcher" ] || fail "header ppid $(header_u32 tree/t.raw 28), not $launcher"
check tree/t.raw "$parent" parent_work
check tree/t.raw "$child" child_work
check tree/t.raw "$grandchild" grandchild_work
check tree/t.raw "$execd" spin_leaf

# fp mode: the child's stack table starts afresh (its stack ids refer to
# its own trace).
mkdir fp
"$COLLECT_TIMER" -q --unwind=fp -o fp/t.raw ./tcases forktree ./bspin 1 3000 >fp.out 2>fp.err ||
	fail "forktree failed in fp mode: $(cat fp.err)"
[ ! -s fp.err ] || fail "-q: $(cat fp.err)"
check fp/t.raw "$(awk '$2 == "child" { print $3 }' fp.out)" child_work
check fp/t.raw "$(awk '$2 == "grandchild" { print $3 }' fp.out)" grandchild_work

# --no-inherit: one trace, the program's.
mkdir solo
"$COLLECT_TIMER" --no-inherit -o solo/t.raw ./tcases forktree ./bspin 1 3000 >/dev/null 2>solo.err ||
	fail "forktree failed under --no-inherit: $(cat solo.err)"
[ "$(ls solo)" = t.raw ] || fail "--no-inherit left $(ls solo | tr '\n' ' ')"
[ "$(grep -c 'written to' solo.err)" -eq 1 ] || fail "--no-inherit: $(cat solo.err)"
"$PROFVIEW" --flat solo/t.raw >solo.txt || fail "profview on the --no-inherit trace"
awk -v s="$(share solo.txt parent_work)" 'BEGIN { exit !(s >= 0.8) }' || fail "--no-inherit: parent_work is not hot"

# exec in the program's own process: the two images, joined, the first
# one said to have run another program, and no warning that it was cut.
mkdir ex
"$COLLECT_TIMER" -v -o ex/e.raw ./tcases exec >/dev/null 2>ex.err || fail "exec case failed: $(cat ex.err)"
[ "$(ls ex)" = e.raw ] || fail "exec: want 1 trace, got $(ls ex | tr '\n' ' ')"
grep -q "in 'ex/e.raw'; then the process ran another program" ex.err ||
	fail "exec: the first image is not reported as having exec'd: $(cat ex.err)"
"$PROFVIEW" --flat ex/e.raw >/dev/null 2>ex.perr || fail "profview on ex/e.raw"
[ ! -s ex.perr ] || fail "exec: profview warns: $(cat ex.perr)"
"$PROFVIEW" --processes ex/e.raw >ex.txt || fail "profview --processes on ex/e.raw"
[ "$(grep -c '^ *[0-9].*\[process [0-9]* "tcases", first tcases\]' ex.txt)" -eq 1 ] &&
	[ "$(grep -c '\[process ' ex.txt)" -eq 1 ] ||
	fail "exec: want the two images as one process that ran tcases first: $(cat ex.txt)"

# chdir: the traces stay where they were asked for.
mkdir cd elsewhere
"$COLLECT_TIMER" -o cd/c.raw ./tcases chdir "$WORK/elsewhere" >/dev/null 2>cd.err || fail "chdir case failed"
[ "$(ls cd)" = c.raw ] || fail "chdir: want 1 trace in cd/, got $(ls cd | tr '\n' ' ')"
[ -z "$(ls elsewhere)" ] || fail "chdir: traces written in the new directory: $(ls elsewhere)"
grep -q "^profile: .* 2 processes" <("$PROFVIEW" --flat cd/c.raw) || fail "chdir: the run is not of 2 processes"

# A set-user-ID program: the loader would ignore LD_PRELOAD.
cp tcases suid
chmod u+s suid
set +e
"$COLLECT_TIMER" -o su.raw ./suid spin 0.01 >/dev/null 2>su.err
st=$?
set -e
[ "$st" -eq 1 ] || fail "a set-user-ID program gave status $st, not 1"
grep -q 'set-user-ID' su.err || fail "no clear message for a set-user-ID program: $(cat su.err)"
[ ! -e su.raw ] || fail "a set-user-ID program left a trace"
exit 0
