#!/usr/bin/env bash
# --focus, --ignore, --hide, --show, --show-from and --prune-from on a real
# trace: what each does to the folded stacks, the header that reports them,
# bad expressions; then, with the Go pprof, the same filters give the same
# stacks as pprof's on the same profile, and profview's filtered --pprof
# output is what pprof's filters make of the unfiltered one.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

build demo
"$COLLECT_TIMER" -q -o demo.raw ./demo >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --folded --sample-index=samples demo.raw | sort >all.txt
total=$(awk '{ n += $NF } END { print n + 0 }' all.txt)
# 460 expected, 300 or so on a loaded machine, where the sweeper paces
# the samples of threads that read their CPU clock (ACCURACY in
# collect-timer(1)); every check below compares exact counts.
[ "$total" -gt 50 ] || fail "too few samples ($total) to test filters"

# folded OPTIONS...: the filtered folded stacks, sorted.
folded() {
	"$PROFVIEW" --folded --sample-index=samples "$@" demo.raw 2>err.txt | sort || fail "profview --folded --sample-index=samples $* failed"
}
# sum_where AWK_CONDITION: samples of the unfiltered stacks for which the
# condition on the frames f[1..n] (outermost first) holds.
sum_where() {
	awk -v cond="$1" '{
		c = $NF; s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";")
		ok = 0
		if (cond == "has_checksum") { for (i = 1; i <= n; i++) if (f[i] == "checksum") ok = 1 }
		else if (cond == "has_worker") { for (i = 1; i <= n; i++) if (f[i] == "worker") ok = 1 }
		else if (cond == "has_either") { for (i = 1; i <= n; i++) if (f[i] == "checksum" || f[i] == "insert_key") ok = 1 }
		if (ok) t += c
	} END { print t + 0 }' all.txt
}
count() { awk '{ n += $NF } END { print n + 0 }' "$1"; }

want=$(sum_where has_checksum)
# checksum has 11% of the samples: none of 300 is 2e-15 likely
[ "$want" -gt 0 ] || fail "the trace has no checksum samples"

# --focus: only the stacks through checksum, all of them.
folded --focus='^checksum$' >focus.txt
awk '!/(^|;)checksum(;| )/ { exit 1 }' focus.txt || fail "--focus kept a stack without checksum"
[ "$(count focus.txt)" -eq "$want" ] || fail "--focus kept $(count focus.txt) samples, not $want"
# Several: any of them.
folded --focus='^checksum$' --focus='^insert_key$' >focus2.txt
[ "$(count focus2.txt)" -eq "$(sum_where has_either)" ] || fail "two --focus are not their alternation"

# --ignore: the others.
folded --ignore='^checksum$' >ignore.txt
grep -q '\(^\|;\)checksum\( \|;\)' ignore.txt && fail "--ignore kept checksum"
[ "$(count ignore.txt)" -eq $((total - want)) ] || fail "--ignore kept $(count ignore.txt) of $total"

# --hide: every sample stays, the frame goes.
folded --hide='^process_batch$' >hide.txt
grep -q 'process_batch' hide.txt && fail "--hide left process_batch"
[ "$(count hide.txt)" -eq "$total" ] || fail "--hide changed the sample count"
sed -e 's/;process_batch;/;/' -e 's/;process_batch \([0-9]*\)$/ \1/' all.txt | awk '{ c = $NF; sub(/ [0-9]+$/, ""); s[$0] += c }
	END { for (k in s) print k, s[k] }' | sort >hide-want.txt
diff hide-want.txt hide.txt >/dev/null || fail "--hide did more than remove process_batch"

# --show: only the named frames.
folded --show='^(worker|checksum|main)$' >show.txt
awk '{ s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";")
	for (i = 1; i <= n; i++) if (f[i] !~ /^(worker|checksum|main)$/) exit 1 }' show.txt ||
	fail "--show left other frames"

# --show-from: the worker's stacks, re-rooted at worker.
folded --show-from='^worker$' >from.txt
awk '!/^worker(;| )/ { exit 1 }' from.txt || fail "--show-from left a stack not rooted at worker"
[ "$(count from.txt)" -eq "$(sum_where has_worker)" ] || fail "--show-from kept the wrong samples"

# --prune-from: nothing below process_batch, nothing dropped.
folded --prune-from='^process_batch$' >prune.txt
grep -q 'process_batch;' prune.txt && fail "--prune-from left callees of process_batch"
grep -q 'process_batch ' prune.txt || fail "--prune-from removed process_batch itself"
[ "$(count prune.txt)" -eq "$total" ] || fail "--prune-from changed the sample count"

# The header says what is in force and what it kept.
"$PROFVIEW" --focus='^checksum$' --hide=clone demo.raw >tree.txt 2>err.txt || fail "--tree with filters failed"
pctw=$(awk -v a="$want" -v b="$total" 'BEGIN { printf "%.1f", 100 * a / b }')
grep -qF "filters: focus=^checksum$ hide=clone; kept $want of $total samples ($pctw%)" tree.txt ||
	fail "header: $(grep filters: tree.txt)"
"$PROFVIEW" --flat --ignore=zzz_nowhere demo.raw >flat.txt 2>err.txt || fail "--flat with --ignore failed"
grep -q "kept $total of $total samples (100.0%)" flat.txt || fail "flat header: $(grep filters: flat.txt)"
grep -q "ignore.*matched no" err.txt || fail "no warning for an --ignore that matched nothing: $(cat err.txt)"
"$PROFVIEW" --folded --sample-index=samples --focus=zzz_nowhere demo.raw >none.txt 2>err.txt || fail "a focus that keeps nothing failed"
[ ! -s none.txt ] || fail "a focus that matched nothing kept stacks"
grep -q "focus.*matched no" err.txt || fail "no warning for a --focus that matched nothing"

# A bad expression: one line naming the option, exit 2.
st=0
"$PROFVIEW" --show-from='(' demo.raw >/dev/null 2>err.txt || st=$?
[ "$st" -eq 2 ] || fail "a bad expression exited $st"
grep -q "invalid --show-from '(': " err.txt || fail "bad expression message: $(cat err.txt)"

# --tid selects the threads before the filters: their share is of that
# thread's samples.
"$PROFVIEW" --threads --folded --sample-index=samples demo.raw >threads.txt
read -r wtid wn < <(sed -n 's/^\[thread \([0-9]*\) "worker-1"\];.* \([0-9]*\)$/\1 \2/p' threads.txt |
	awk '{ t = $1; n += $2 } END { print t, n }')
[ -n "$wtid" ] || fail "no worker-1 thread in the trace"
wk=$(awk -v t="$wtid" 'index($0, "[thread " t " ") == 1 && / checksum;|;checksum[; ]/ { n += $NF } END { print n + 0 }' threads.txt)
"$PROFVIEW" --tid="$wtid" --focus=^checksum$ demo.raw >tid.txt || fail "--tid with --focus failed"
grep -q "^filters: focus=\^checksum\$; kept $wk of $wn samples" tid.txt ||
	fail "--tid=$wtid --focus: want kept $wk of $wn: $(grep '^filters:' tid.txt)"

# --reverse: every stack upside down, after the filters; with --focus and
# --prune-from on one function, its callers under it.
reversed_all() { awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";")
	r = f[n]; for (i = n - 1; i >= 1; i--) r = r ";" f[i]; print r, c }' "$@" | sort; }
folded --reverse >rev.txt
reversed_all all.txt >want.txt
cmp -s rev.txt want.txt || { diff want.txt rev.txt | head >&2; fail "--reverse is not the folded stacks reversed"; }
folded --hide=^process_batch$ --reverse >rev.txt
folded --hide=^process_batch$ | reversed_all >want.txt
cmp -s rev.txt want.txt || fail "--hide then --reverse is not the hidden stacks reversed"
folded --focus=^process_batch$ --prune-from=^process_batch$ --reverse >callers.txt
awk '{ split($1, f, ";"); if (f[1] != "process_batch" || f[2] != "worker") bad = 1 }
	END { exit bad || NR == 0 }' callers.txt || fail "callers of process_batch: $(head -3 callers.txt)"
through=$(awk '/(^|;)process_batch(;| )/ { n += $NF } END { print n + 0 }' all.txt)
[ "$(count callers.txt)" -eq "$through" ] || fail "callers of process_batch: $(count callers.txt) samples, $through through it"
"$PROFVIEW" --reverse --tree demo.raw | grep -q "^filters: reverse; kept $total of $total" ||
	fail "the header does not say --reverse"

# The same against the Go pprof (built offline from Debian's sources).
if ! command -v go >/dev/null || [ ! -d /usr/share/gocode/src/github.com/google/pprof ]; then
	echo "filters: no Go toolchain: pprof comparisons skipped" >&2
	exit 0
fi
PPROF=$("$SRCDIR/scripts/install-pprof" "$WORK/tools") || fail "cannot build pprof"
"$PROFVIEW" --pprof -o demo.pb.gz demo.raw || fail "profview --pprof failed"

# traces FILE [PPROF OPTIONS...]: pprof -traces as sorted folded stacks.
# pprof marks some inlined frames " (inline)" (a function inlined into
# another of the same name: glibc's __futex_abstimed_wait_common64, where a
# sample now and then lands at the program's exit); profview's folded
# stacks do not (as in pprof.sh).
traces() {
	local file=$1
	shift
	"$PPROF" -traces -sample_index=samples -symbolize=none "$@" "$file" 2>/dev/null | awk '
	function flush() {
		if (n) {
			for (i = 1; i <= n; i++) sub(/ \(inline\)$/, "", f[i])
			s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; sum[s] += v
		}
		n = 0
	}
	/^-+\+-+$/ { flush(); go = 1; next }
	!go { next }
	/^ *[0-9]+   / { flush(); v = $1; sub(/^ *[0-9]+   /, ""); f[++n] = $0; next }
	/^             [^ ]/ && n { sub(/^ +/, ""); f[++n] = $0; next }
	END { flush(); for (s in sum) print s, sum[s] }' | sort
}

# pprof names kernel frames without folded stacks' _[k].
traces demo.pb.gz >traces-all.txt
sed 's/_\[k\]//g' all.txt | sort | diff - traces-all.txt >/dev/null || fail "pprof -traces and profview disagree before any filter"
# compare "PROFVIEW OPTIONS" "PPROF OPTIONS": same stacks from both, and
# pprof reads profview's filtered profile as the filtered stacks.
compare() {
	local ours theirs
	# shellcheck disable=SC2086
	"$PROFVIEW" --folded --sample-index=samples $1 demo.pb.gz 2>/dev/null | sed 's/_\[k\]//g' | sort >ours.txt
	# shellcheck disable=SC2086
	traces demo.pb.gz $2 >theirs.txt
	diff ours.txt theirs.txt >diff.txt || { head -20 diff.txt; fail "'$1' differs from pprof's '$2'"; }
	# shellcheck disable=SC2086
	"$PROFVIEW" --pprof -o filtered.pb.gz $1 demo.pb.gz 2>/dev/null || fail "--pprof $1 failed"
	traces filtered.pb.gz >again.txt
	diff theirs.txt again.txt >/dev/null || fail "pprof reads profview's --pprof $1 differently"
	note "'$1' = pprof '$2' on $(wc -l <ours.txt) stacks, $(count ours.txt) samples"
}
compare "--focus=checksum" "-focus=checksum"
compare "--focus=checksum --focus=insert" "-focus=checksum|insert"
compare "--ignore=parse_record" "-ignore=parse_record"
compare "--focus=worker --ignore=checksum" "-focus=worker -ignore=checksum"
compare "--hide=^_?_?(libc|clone|start)" "-hide=^_?_?(libc|clone|start)"
compare "--show=^(main|worker|parse_record|checksum|insert_key)$" \
	"-show=^(main|worker|parse_record|checksum|insert_key)$"
compare "--show-from=^process_batch$" "-show_from=^process_batch$"
compare "--prune-from=^(process_batch|build_index)$" "-prune_from=^(process_batch|build_index)$"
compare "--hide=^process_batch$ --show-from=^worker$ --prune-from=^parse" \
	"-hide=^process_batch$ -show_from=^worker$ -prune_from=^parse"
compare "--focus=demo\\.c --hide=libc" "-focus=demo\\.c -hide=libc"
compare "--ignore=demo$" "-ignore=demo$"
