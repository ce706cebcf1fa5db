#!/usr/bin/env bash
# Output files.  Traces are created mode 0600 (collect-timer's, with -o and
# by default, a forked child's, collect-gdb's); profview's reports, -o with
# every kind, collect-timer -o and collect-gdb -o never write through a
# symbolic link (dangling or not), into a FIFO (without hanging), over a
# second hard link or over another user's file, each refused in one line;
# one's own file is written over, with no stale tail.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
COLLECT_GDB=${COLLECT_GDB:-$(cd "$(dirname "$PROFVIEW")/../collectors/gdb" && pwd)/collect-gdb}
[ -x "$COLLECT_GDB" ] || fail "no collect-gdb at '$COLLECT_GDB'"
cd "$WORK"
# A umask that leaves group and others their read bit: 0644 would show.
umask 022

mode_of() { stat -c %a "$1"; }

# refused WHAT REGEX COMMAND...: COMMAND fails in time (not killed by the
# timeout) with one line of error that matches REGEX.
refused() {
	local what=$1 re=$2 rc=0
	shift 2
	timeout 20 "$@" >refused.out 2>refused.err || rc=$?
	[ "$rc" -ne 124 ] || fail "$what: hangs"
	[ "$rc" -ne 0 ] || fail "$what: exit 0 ($(cat refused.err))"
	[ "$(wc -l <refused.err)" -eq 1 ] || fail "$what: not one line of error: $(cat refused.err)"
	grep -Eq -- "$re" refused.err || fail "$what: the message does not match /$re/: $(cat refused.err)"
}

# plant: a file to protect, links to it and to nothing, a FIFO, a second
# name of the file, another user's file (root only).
plant() {
	rm -rf p && mkdir p
	echo secret >p/victim
	ln -s victim p/link
	ln -s absent p/dangling
	mkfifo p/fifo
	echo mine >p/mine
	ln p/mine p/hard
	if [ "$(id -u)" -eq 0 ]; then
		echo theirs >p/theirs
		chown 65534 p/theirs
	fi
}

# check_refusals WHAT COMMAND...: COMMAND with each planted path in place of
# its argument OUT.
check_refusals() {
	local what=$1
	shift
	plant
	refused "$what -o LINK" "cannot write 'p/link': it is a symbolic link; not following it" \
		"${@/#OUT/p/link}"
	[ "$(cat p/victim)" = secret ] || fail "$what -o LINK wrote into the link's target"
	refused "$what -o DANGLING" "cannot write 'p/dangling': it is a symbolic link" "${@/#OUT/p/dangling}"
	[ ! -e p/absent ] || fail "$what -o DANGLING created the link's target"
	refused "$what -o FIFO" "cannot write 'p/fifo': it is not a regular file" "${@/#OUT/p/fifo}"
	refused "$what -o HARDLINK" "cannot write 'p/hard': it has other hard links" "${@/#OUT/p/hard}"
	[ "$(cat p/mine)" = mine ] || fail "$what -o HARDLINK wrote into the file"
	if [ -e p/theirs ]; then
		refused "$what -o THEIRS" \
			"cannot write 'p/theirs': it belongs to another user \\(uid 65534\\); not overwriting it" \
			"${@/#OUT/p/theirs}"
		[ "$(cat p/theirs)" = theirs ] || fail "$what -o THEIRS wrote over another user's file"
	fi
}

# profview: every kind of report.
printf 'main;parse;checksum 30\nmain;parse 12\nmain;index 7\n' >in.folded
[ "$(id -u)" -eq 0 ] || note "not root: another user's file not tried"
for kind in --tree --flat --folded --sample-index=samples --svg --flame --pprof; do
	check_refusals "profview $kind" "$PROFVIEW" "$kind" -o OUT in.folded
	# One's own file is written over, all of it, as standard output would be.
	"$PROFVIEW" "$kind" in.folded >ref.out || fail "profview $kind failed"
	seq 1 200000 >own.out
	"$PROFVIEW" "$kind" in.folded -o own.out || fail "profview $kind -o OWN failed"
	cmp -s own.out ref.out || fail "profview $kind -o OWN: not what standard output gets (a stale tail?)"
	[ "$(mode_of own.out)" = 644 ] || fail "profview $kind -o OWN changed its mode to $(mode_of own.out)"
	rm -f new.out
	"$PROFVIEW" "$kind" in.folded -o new.out || fail "profview $kind -o NEW failed"
	[ "$(mode_of new.out)" = 644 ] || fail "profview $kind -o NEW: mode $(mode_of new.out)"
done

# A character device is written to (/dev/null); the report is never
# written over one of its inputs, by any name; a trace never onto a device.
printf 'main;f 3\n' >keep.folded
cp keep.folded keep.ref
ln -s keep.folded alias.folded
for kind in --flat --svg --pprof; do
	"$PROFVIEW" "$kind" -o /dev/null in.folded || fail "profview $kind -o /dev/null failed"
	[ -c /dev/null ] || fail "profview $kind -o /dev/null: /dev/null is no longer a device"
	refused "profview $kind -o INPUT" "cannot write 'keep.folded': it is the input 'keep.folded'; not writing the report over it" \
		"$PROFVIEW" "$kind" -o keep.folded keep.folded
	refused "profview $kind -o INPUT (another name)" "cannot write 'keep.folded': it is the input 'alias.folded'" \
		"$PROFVIEW" "$kind" -o keep.folded in.folded alias.folded
	refused "profview $kind -o BASE" "it is the input 'keep.folded'" \
		"$PROFVIEW" "$kind" --diff-base=keep.folded -o keep.folded in.folded
	refused "profview $kind -o STDIN" "cannot write 'keep.folded': it is the standard input" \
		"$PROFVIEW" "$kind" -o keep.folded - <keep.folded
	cmp -s keep.folded keep.ref || fail "profview $kind -o INPUT wrote over the input"
done
st=0
"$COLLECT_TIMER" -q -o /dev/null /bin/true 2>dev.err || st=$?
[ $st -ne 0 ] && [ -c /dev/null ] || fail "collect-timer -o /dev/null: status $st, $(ls -l /dev/null)"

# collect-timer: the trace, by default and with -o, and a forked child's
# are 0600, also in place of an old 0644 trace; then the refusals.
mkdir ct
(cd ct && "$COLLECT_TIMER" -q /bin/true) || fail "collect-timer /bin/true failed"
for t in ct/profview-true-*.raw; do
	[ -f "$t" ] || fail "collect-timer wrote no trace by its default name"
	[ "$(mode_of "$t")" = 600 ] || fail "collect-timer's default trace '$t' has mode $(mode_of "$t")"
done
mkdir fork
echo "an old trace" >fork/t.raw
chmod 644 fork/t.raw
# While the child (a busy shell loop: a trace file is made at an image's
# first sample) runs, its own trace is beside the program's, and the file
# of the run's images without a sample too; at the end the run's are
# joined into the one file and the rest removed.
"$COLLECT_TIMER" -q -o fork/t.raw /bin/sh -c '/bin/true; /bin/sh -c "i=0; while [ \$i -lt 3000000 ]; do i=\$((i + 1)); done"; /bin/true' &
launcher=$!
for _ in $(seq 500); do [ "$(find fork -name '*.raw' | wc -l)" -ge 2 ] && break; sleep 0.01; done
[ "$(find fork -name '*.raw' | wc -l)" -ge 2 ] || fail "no trace of a forked child: $(ls fork)"
for t in fork/*.raw fork/*.short; do
	[ -e "$t" ] || continue
	[ "$(mode_of "$t")" = 600 ] || fail "collect-timer's trace '$t' has mode $(mode_of "$t")"
done
wait $launcher || fail "collect-timer sh -c failed"
[ "$(ls fork)" = t.raw ] || fail "the run left more than its one file: $(ls fork)"
[ "$(mode_of fork/t.raw)" = 600 ] || fail "the run's file has mode $(mode_of fork/t.raw)"
"$PROFVIEW" -q --flat fork/t.raw >/dev/null || fail "profview cannot read the trace written in place of an old one"
check_refusals "collect-timer" "$COLLECT_TIMER" -q -o OUT /bin/true

# The trace never replaces a file the run reads: the program, the
# interpreter of a script, a file the command line names.
cp /bin/true victim
cp victim victim.ref
printf 'data\n' >data.txt
cp data.txt data.ref
cp /bin/sh myinterp
printf '#!%s/myinterp\nexit 0\n' "$PWD" >script.sh
chmod +x script.sh
for c in "$COLLECT_TIMER" "$COLLECT_HEAP"; do
	n=${c##*/}
	refused "$n -o PROGRAM" "^$n: cannot write the trace to 'victim': it is the program to run; choose another -o$" \
		"$c" -q -o victim ./victim
	refused "$n -o ARGUMENT" "^$n: cannot write the trace to 'data.txt': the command line names it \('data.txt'\)" \
		"$c" -q -o data.txt cat data.txt
	refused "$n -o OPTION=VALUE" "the command line names it \('--file=data.txt'\)" \
		"$c" -q -o data.txt /bin/true --file=data.txt
	refused "$n -o INTERPRETER" "it is the interpreter of the program to run" \
		"$c" -q -o myinterp ./script.sh
	cmp -s victim victim.ref || fail "$n -o PROGRAM: the program was changed"
	cmp -s data.txt data.ref || fail "$n -o ARGUMENT: the file was changed"
	cmp -s myinterp /bin/sh || fail "$n -o INTERPRETER: the interpreter was changed"
done

# Two runs on one -o: the second is refused while the first writes it, and
# the first's trace is whole; once it has ended the name is free again.
"$CC" -O1 -o spinner "$SRCDIR/tests/progs/syscalls.c" || fail "cannot build syscalls.c"
"$COLLECT_TIMER" -q -o same.raw ./spinner 1.5 >/dev/null &
first=$!
for _ in $(seq 200); do [ -s same.raw ] && break; sleep 0.01; done
[ -s same.raw ] || fail "the first run's trace did not appear"
refused "collect-timer -o IN-USE" "^collect-timer: cannot write the trace to 'same.raw': another run is writing it; choose another -o$" \
	"$COLLECT_TIMER" -q -o same.raw /bin/true
refused "collect-heap -o IN-USE" "another run is writing it" "$COLLECT_HEAP" -q -o same.raw /bin/true
wait $first || fail "the first run failed"
"$PROFVIEW" --flat same.raw >same.txt || fail "profview on the first run's trace"
awk '/^profile:/ { for (i = 1; i <= NF; i++) if ($i == "CPU") { v = $(i + 1); u = $(i + 2) } }
	END { exit !((u == "s" && v >= 1.4) || (u == "ms" && v >= 1400)) }' same.txt ||
	fail "the first run's trace is not its 1.5 s of CPU: $(sed -n 2p same.txt)"
"$COLLECT_TIMER" -q -o same.raw /bin/true || fail "-o of a run that has ended is refused"

# collect-gdb: the trace, with -o and by default, is 0600, also in place of
# an old 0644 trace; then the refusals.
if command -v gdb >/dev/null; then
	sleep 60 &
	target=$!
	trap 'kill $target 2>/dev/null || true; rm -rf "$WORK"' EXIT
	echo "an old trace" >g.gdb
	chmod 644 g.gdb
	"$COLLECT_GDB" -q -p $target -n 1 -o g.gdb || fail "collect-gdb -o failed"
	grep -q '^# snapshot:' g.gdb || fail "collect-gdb -o wrote no snapshot in place of the old trace"
	[ "$(mode_of g.gdb)" = 600 ] || fail "collect-gdb -o: mode $(mode_of g.gdb)"
	mkdir cg
	(cd cg && "$COLLECT_GDB" -q -p $target -n 1) || fail "collect-gdb without -o failed"
	[ -f "cg/profview-sleep-$target.gdb" ] || fail "collect-gdb wrote no 'profview-sleep-$target.gdb': $(ls cg)"
	[ "$(mode_of "cg/profview-sleep-$target.gdb")" = 600 ] ||
		fail "collect-gdb's default trace has mode $(mode_of "cg/profview-sleep-$target.gdb")"
	check_refusals "collect-gdb" "$COLLECT_GDB" -q -p $target -n 1 -o OUT
else
	note "gdb is not installed: collect-gdb not tried"
fi
exit 0
