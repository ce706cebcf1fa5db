#!/usr/bin/env bash
# The control signal never kills the program, however early it comes:
# sent to collect-timer, or to the program between its fork and its
# library's start, or to a process of the run between its exec and its
# library's start, it is held until the library takes it.  Without that
# hold some of these runs die of SIGUSR2 (status 140); with it none may.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
build pauser
cd "$WORK"

# usr2_held PID: PID blocks or catches SIGUSR2 (bit 11 of its masks).
usr2_held() {
	local k v
	while read -r k v; do
		case $k in
		SigBlk: | SigCgt:) (((16#$v >> 11) & 1)) && return 0 ;;
		esac
	done <"/proc/$1/status"
	return 1
}

# 1. To collect-timer, 0 to 10 ms after it has begun (its main: before,
# it is the shell's child exec'ing it, with the default action).
bad=0
for i in $(seq 30); do
	"$COLLECT_TIMER" -q -o a.raw ./pauser window 0.05 >/dev/null 2>a.err &
	launcher=$!
	for _ in $(seq 20000); do
		usr2_held "$launcher" 2>/dev/null && break
	done
	sleep "0.00$((RANDOM % 10))"
	kill -USR2 "$launcher" 2>/dev/null || true
	st=0
	wait "$launcher" || st=$?
	[ "$st" = 0 ] || { bad=$((bad + 1)); note "run $i: status $st: $(cat a.err)"; }
done
[ "$bad" = 0 ] || fail "$bad of 30 runs did not end with the program's own status"

# 2. To the program itself, as soon as collect-timer has forked it.
bad=0
for i in $(seq 30); do
	"$COLLECT_TIMER" -q -o b.raw ./pauser window 0.05 >/dev/null 2>b.err &
	launcher=$!
	child=
	for _ in $(seq 20000); do
		read -r child _ <"/proc/$launcher/task/$launcher/children" 2>/dev/null || true
		[ -n "$child" ] && break
	done
	[ -n "$child" ] && kill -USR2 "$child" 2>/dev/null || true
	st=0
	wait "$launcher" || st=$?
	[ "$st" = 0 ] || { bad=$((bad + 1)); note "run $i: status $st: $(cat b.err)"; }
done
[ "$bad" = 0 ] || fail "$bad of 30 runs: the program died of the signal sent right after its start"

# 3. To the children the program forks and execs, right after the fork.
"$COLLECT_TIMER" -q -o c.raw ./pauser execkill 100 >c.out 2>c.err || fail "pauser execkill failed: $(cat c.err)"
note "$(tail -1 c.out)"
grep -qx 'killed 0 of 100' c.out || fail "children died of the control signal: $(tail -1 c.out)"
exit 0
