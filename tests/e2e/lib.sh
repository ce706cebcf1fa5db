# lib.sh - shared by the end-to-end tests.  Usage from a test:
#   . "$(dirname "$0")/lib.sh"  with PROFVIEW, COLLECT_TIMER and SRCDIR set
# (meson passes them as arguments: the test calls e2e_init "$@").
set -eu

# e2e_err_trap: a command that fails under set -e says where (e2e_init;
# again in a job of pool_start, whose subshell starts without the trap)
e2e_err_trap() {
	trap 'case $- in *e*) echo "FAIL: ${0##*/}: line $LINENO: a command failed (status $?)" >&2 ;; esac' ERR
}

e2e_init() {
	PROFVIEW=$1
	COLLECT_TIMER=$2
	SRCDIR=$3
	# A test whose last checks need an optional tool is two meson tests:
	# NAME (its own checks) and NAME-PART, which runs them again and then
	# the checks of PART, and alone skips when the tool is missing
	# (part_needs, part_starts).
	PART=${4:-}
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/profview-e2e.XXXXXX")
	trap 'rm -rf "$WORK" || true' EXIT
	# A command that fails outside a test ends the script (set -e): say
	# where, or a failure that happens once in a while leaves no trace.
	# (Not under set +e, where a test looks at the status itself.  The trap
	# sets no variable: a test's own would be overwritten.)
	e2e_err_trap
	# profview keeps the kernel's symbols of this boot in a cache: the
	# test's own, not the user's
	export XDG_CACHE_HOME="$WORK/cache"
	CC=${CC:-cc}
	CXX=${CXX:-c++}
	# collect-heap: meson says where; else next to collect-timer's build
	COLLECT_HEAP=${COLLECT_HEAP:-${COLLECT_TIMER%/*}/../heap/collect-heap}
}

# part_needs PART TOOL WHY: in the test's part PART, skip at once (before
# any work) when TOOL is not installed.
part_needs() {
	if [ "$PART" = "$1" ] && ! command -v "$2" >/dev/null; then
		echo "SKIP: $2 is not installed: $3" >&2
		exit 77
	fi
}

# part_starts PART: the checks after it are those of PART: the test's own
# part ends here.
part_starts() {
	[ "$PART" = "$1" ] || exit 0
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

note() {
	echo "# $*"
}

# chrome ARGS...: headless Chromium (Debian's chromium) with a profile of
# its own under $WORK and its messages in $WORK/chrome.log, for at most
# TIMEOUT seconds (120 unless given in the environment).
chrome() {
	timeout "${CHROME_TIMEOUT:-120}" chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$WORK/chrome.XXXXXX")" "$@" 2>>"$WORK/chrome.log"
}

# build NAME [extra cflags...]: compile tests/progs/NAME.c into $WORK/NAME
build() {
	local name=$1
	shift
	"$CC" -O1 -g -fno-omit-frame-pointer "$@" -o "$WORK/$name" "$SRCDIR/tests/progs/$name.c" -lpthread ||
		fail "cannot compile $name.c"
}

# flat_column FILE FUNCTION COLUMN: a number column of FUNCTION's line in a
# --flat report (0 if absent).  The function is the first field after the
# numbers (a heap profile's have units: "12.3 MiB").
flat_column() {
	awk -v f="$2" -v c="$3" '{
		i = 6
		while (i < NF && ($i ~ /^-?[0-9.]+%?$/ || $i ~ /^(B|KiB|MiB|GiB|TiB)$/))
			i++
		if ($i == f) { print $c; found = 1; exit }
	} END { if (!found) print 0 }' "$1"
}

# flat_self FILE FUNCTION: self samples of FUNCTION in a --flat report (0 if absent)
flat_self() {
	flat_column "$1" "$2" 1
}

# flat_cum FILE FUNCTION
flat_cum() {
	flat_column "$1" "$2" 3
}

# wait_lines FILE PATTERN [COUNT]: FILE holds COUNT (default 1) lines with
# PATTERN (grep's), within 10 s; else the test fails
wait_lines() {
	local i n
	for i in $(seq 200); do
		n=$(grep -c -- "$2" "$1" 2>/dev/null) || true
		[ "${n:-0}" -ge "${3:-1}" ] && return 0
		sleep 0.05
	done
	fail "no '$2' in $1: $(cat "$1")"
}

# await_file FILE PATTERN LOG: FILE exists (and holds PATTERN, when not
# empty), within a minute; else the process $launcher (when set) is killed
# and the test fails with LOG
await_file() {
	for _ in $(seq 6000); do
		[ -e "$1" ] && { [ -z "$2" ] || grep -q -- "$2" "$1"; } && return 0
		sleep 0.01
	done
	[ -z "${launcher:-}" ] || kill "$launcher" 2>/dev/null
	fail "no $1${2:+ saying '$2'}: $(cat "$3")"
}

# within_sigma OBSERVED_K N EXPECTED_P K [MARGIN]: is k/n within K binomial
# sigmas, plus MARGIN (0.01 unless given) for how far the program's own
# split may be from p, of p?  Two-sided, the chance that a binomial k/n
# falls outside K sigmas: 2.7e-3 at K=3, 6.3e-5 at 4, 5.7e-7 at 5.
within_sigma() {
	awk -v k="$1" -v n="$2" -v p="$3" -v z="$4" -v m="${5:-0.01}" 'BEGIN {
		if (n <= 0) exit 1
		s = sqrt(p * (1 - p) / n)
		d = k / n - p; if (d < 0) d = -d
		exit !(d <= z * s + m)
	}'
}

# chain_share FOLDED EXACT|SUBSEQ FRAME...: among the samples whose leaf is
# the last FRAME, print "MATCHING TOTAL": MATCHING counts the stacks that,
# from the first occurrence of the first FRAME on, are exactly the FRAMEs
# (EXACT), or hold them in that order with anything between (SUBSEQ).
# A FRAME is an extended regular expression for the whole name.
chain_share() {
	local file=$1 how=$2
	shift 2
	local IFS=$'\t'
	awk -v how="$how" -v want="$*" '
	BEGIN { n = split(want, w, "\t") }
	{
		count = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		if (f[k] !~ "^(" w[n] ")$") next
		total += count
		start = 0
		for (i = 1; i <= k; i++) if (f[i] ~ "^(" w[1] ")$") { start = i; break }
		if (!start) next
		if (how == "EXACT") {
			if (k - start + 1 != n) next
			for (i = 1; i <= n; i++) if (f[start + i - 1] !~ "^(" w[i] ")$") next
			ok += count
		} else {
			j = 1
			for (i = start; i <= k && j <= n; i++) if (f[i] ~ "^(" w[j] ")$") j++
			if (j > n) ok += count
		}
	}
	END { print ok + 0, total + 0 }' "$file"
}

# at_least MATCHING TOTAL FRACTION: is MATCHING/TOTAL >= FRACTION (and TOTAL > 0)?
at_least() {
	awk -v m="$1" -v t="$2" -v f="$3" 'BEGIN { exit !(t > 0 && m / t >= f) }'
}

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

# early_control_signal COLLECTOR: the control signal (SIGUSR2) never kills
# a run of COLLECTOR however early it comes: sent to the collector 0 to
# 10 ms after it has begun (30 runs), to the program as soon as it is
# forked (30 runs), and to the children a program forks and execs, right
# after the fork (300: a late sampling signal of the image before its exec,
# which at its default action ended the new image, did in about one child
# of 200 before it was held across the exec).  Needs ./pauser in the
# working directory.
early_control_signal() {
	local collector=$1 i bad launcher child st
	bad=0
	for i in $(seq 30); do
		"$collector" -q -o early-a.raw ./pauser window 0.05 >/dev/null 2>early-a.err &
		launcher=$!
		for _ in $(seq 20000); do
			usr2_held "$launcher" 2>/dev/null && break
		done
		sleep "0.00$((RANDOM % 10))"
		kill -USR2 "$launcher" 2>/dev/null || true
		st=0
		wait "$launcher" || st=$?
		[ "$st" = 0 ] || { bad=$((bad + 1)); note "run $i: status $st: $(cat early-a.err)"; }
	done
	[ "$bad" = 0 ] || fail "$bad of 30 runs with an early signal to ${collector##*/} did not end with the program's status"
	bad=0
	for i in $(seq 30); do
		"$collector" -q -o early-b.raw ./pauser window 0.05 >/dev/null 2>early-b.err &
		launcher=$!
		child=
		for _ in $(seq 20000); do
			read -r child _ <"/proc/$launcher/task/$launcher/children" 2>/dev/null || true
			[ -n "$child" ] && break
		done
		[ -n "$child" ] && kill -USR2 "$child" 2>/dev/null || true
		st=0
		wait "$launcher" || st=$?
		[ "$st" = 0 ] || { bad=$((bad + 1)); note "run $i: status $st: $(cat early-b.err)"; }
	done
	[ "$bad" = 0 ] || fail "$bad of 30 runs: the program died of the signal sent right after its start"
	"$collector" -q -o early-c.raw ./pauser execkill 300 >early-c.out 2>early-c.err ||
		fail "pauser execkill failed: $(cat early-c.err)"
	note "$(tail -1 early-c.out)"
	grep -qx 'killed 0 of 300' early-c.out || fail "children died of the control signal: $(tail -1 early-c.out)"
}

# pythons: the CPython 3.9 to 3.13 interpreters on the machine, one a line
# (Debian's, then pyenv's), each one absent said as a note on standard
# error.
pythons() {
	local py
	for py in /usr/bin/python3.11 /usr/bin/python3.12 /usr/bin/python3.13 \
		/root/.pyenv/versions/3.9.*/bin/python3.9 /root/.pyenv/versions/3.10.*/bin/python3.10 \
		/root/.pyenv/versions/3.11.*/bin/python3.11 /root/.pyenv/versions/3.12.*/bin/python3.12 \
		/root/.pyenv/versions/3.13.*/bin/python3.13; do
		if [ -x "$py" ]; then
			echo "$py"
		else
			case $py in *'*'*) note "SKIP: no ${py%/bin/*}: not on this machine" >&2 ;; *) note "SKIP: no $py" >&2 ;; esac
		fi
	done
}

# pool_start NAME COMMAND...: COMMAND (a function of the test, say) run in
# the background in a directory of its own, $WORK/NAME, its output kept in
# $WORK/NAME.log; at most two such jobs at once (the machine's processors:
# CPU-bound jobs beyond them only wait).  For the independent runs of a
# test whose checks hold whatever else runs beside them (the samples of
# one thread against that thread's own CPU time, names, stacks), never for
# those of CPU time shared between threads or of wall-clock time.
# Only the pool's own jobs are counted and waited for: a background process
# the test started itself (a server, a hog) neither takes a place nor is
# waited for.
# pool_wait: waits for every job, shows each one's output in the order they
# were started, and fails the test if any failed.
POOL_PIDS=()
POOL_NAMES=()
declare -A POOL_STATUS=()
# the pool's jobs still running, one pid a line
pool_running() {
	local pid
	for pid in $(jobs -rp); do
		case " ${POOL_PIDS[*]} " in *" $pid "*) echo "$pid" ;; esac
	done
}
pool_start() {
	local name=$1 done st running
	shift
	while running=($(pool_running)); [ "${#running[@]}" -ge 2 ]; do
		st=0 done=
		wait -n -p done "${running[@]}" || st=$?
		[ -z "${done:-}" ] || POOL_STATUS[$done]=$st
	done
	mkdir -p "$WORK/$name"
	(
		e2e_err_trap
		cd "$WORK/$name"
		"$@"
	) >"$WORK/$name.log" 2>&1 &
	POOL_PIDS+=($!)
	POOL_NAMES+=("$name")
}

pool_wait() {
	local i pid st bad=""
	for i in "${!POOL_PIDS[@]}"; do
		pid=${POOL_PIDS[i]}
		if [ -n "${POOL_STATUS[$pid]+set}" ]; then
			st=${POOL_STATUS[$pid]}
		else
			st=0
			wait "$pid" || st=$?
		fi
		cat "$WORK/${POOL_NAMES[i]}.log"
		[ "$st" = 0 ] || bad="$bad ${POOL_NAMES[i]}"
	done
	POOL_PIDS=()
	POOL_NAMES=()
	POOL_STATUS=()
	[ -z "$bad" ] || fail "failed (their output above):$bad"
}

# first_cpu: the first CPU this test may run on.  hogs_start CPU: two busy
# loops on CPU, beside which a test runs a program pinned there (taskset -c)
# to make its scheduler ticks miss; hogs_stop ends them (call it from the
# test's EXIT trap too).
HOGS=()
first_cpu() {
	taskset -cp $$ | sed 's/.*: *//; s/[-,].*//'
}
hogs_start() {
	for _ in 1 2; do
		taskset -c "$1" sh -c 'while :; do :; done' &
		HOGS+=($!)
	done
}
hogs_stop() {
	local h
	for h in "${HOGS[@]}"; do kill "$h" 2>/dev/null || true; done
	for h in "${HOGS[@]}"; do wait "$h" 2>/dev/null || true; done
	HOGS=()
}
