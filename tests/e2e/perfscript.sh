#!/usr/bin/env bash
# perf script output of real recordings (tests/data/perf, its README says
# how each was made), read as perf report reads the same data: every
# sample kept, weighed by its event's period, each event its own sample
# type, frames perf marks (inlined) folded into their caller by
# --noinlines, kernel frames marked [k], names of JIT maps kept and made
# short, every layout of -F fields read alike, and not a warning on any
# of them.  The expected numbers are computed here from the fixtures' own
# text: a sample's self is its first frame, as perf report --no-children
# --sort sym counts it.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
data=$SRCDIR/tests/data/perf
cd "$WORK"

# perf_leaves FILE EVENT NOINLINE: "FUNCTION PERIODS SAMPLES" a line, of the
# samples of EVENT ("" for all) in perf script's default fields ("COMM
# TID TIME: PERIOD EVENT:" and the frames): each sample's first frame (with
# NOINLINE=1 its first not marked "(inlined)"), its offset dropped; a
# sample without a frame is "[unknown]".  The last line is "TOTAL PERIODS
# SAMPLES".
perf_leaves() {
	awk -v want="$2" -v noinl="$3" '
	function flush() {
		if (!open)
			return
		if (leaf == "")
			leaf = "[unknown]"
		sum[leaf] += period; n[leaf]++; total += period; count++
		open = 0
	}
	/^[^\t]/ && NF {
		flush()
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/)
				break
		period = $(i + 1); ev = $(i + 2)
		sub(/[:\/].*$/, "", ev)
		open = want == "" || ev == want
		leaf = ""
		if (i + 4 <= NF) {
			leaf = $(i + 4)
			sub(/\+0x[0-9a-f]+$/, "", leaf)
		}
		next
	}
	/^\t/ && open && leaf == "" {
		if (noinl && $NF == "(inlined)")
			next
		leaf = $2
		sub(/\+0x[0-9a-f]+$/, "", leaf)
	}
	END {
		flush()
		for (f in sum)
			print f, sum[f], n[f]
		print "TOTAL", total + 0, count + 0
	}' "$1" | sort
}

# pv_leaves FILE INDEX [OPTION...]: "FUNCTION VALUE" a line, profview's
# folded stacks of FILE in sample type INDEX summed by their last frame
# ("_[k]" of a kernel frame dropped); the last line "TOTAL VALUE".
pv_leaves() {
	local f=$1 index=$2
	shift 2
	"$PROFVIEW" --folded --sample-index="$index" "$@" "$f" 2>err.txt >folded.txt ||
		fail "profview --folded --sample-index=$index $* ${f##*/}: $(cat err.txt)"
	[ ! -s err.txt ] || fail "profview warned on ${f##*/}: $(cat err.txt)"
	awk '{ v = $NF; $NF = ""; sub(/ $/, ""); n = split($0, fr, ";"); leaf = fr[n]; sub(/_\[k\]$/, "", leaf)
	       sum[leaf] += v; total += v }
	     END { for (f in sum) print f, sum[f]; print "TOTAL", total + 0 }' folded.txt | sort
}

# same_sums NAME EXPECTED COLUMN ACTUAL: every function's sum in column
# COLUMN (2 periods, 3 samples) of perf_leaves' EXPECTED is ACTUAL's, the
# total too; "[unknown]" leaves only in the total (profview names them by
# their DSO and address).  A clock's periods are nanoseconds, folded
# stacks' microseconds: the fixtures' periods are whole microseconds.
same_sums() {
	local name=$1 want=$2 col=$3 got=$4 scale=1
	case $col:$name in
	2:*clock*|2:*layout-srcline*|2:*layout-side-band*|2:*layout-ns*) scale=1000 ;;
	esac
	awk -v col="$col" -v name="$name" -v scale="$scale" '
		NR == FNR { if ($1 != "[unknown]") w[$1] = $col; next }
		{ g[$1] = $2 * scale }
		END {
			bad = 0
			for (f in w)
				if (g[f] + 0 != w[f] + 0) {
					printf "%s: %s is %s in perf script, %s in profview\n", name, f, w[f], g[f] + 0
					bad = 1
				}
			exit bad
		}' "$want" "$got" >diff.txt || fail "$(cat diff.txt)"
	note "$name: $(grep -c . "$want") leaf functions, total $(awk '$1 == "TOTAL" { print $2 }' "$got")"
}

# Not a word on any of them.
for f in "$data"/*.txt; do
	"$PROFVIEW" --flat "$f" >/dev/null 2>err.txt || fail "profview cannot read ${f##*/}: $(cat err.txt)"
	[ ! -s err.txt ] || fail "profview warned on ${f##*/}: $(cat err.txt)"
done

# Periods and samples, per function and in all, as perf counts them; the
# default is the periods.
check_event() {
	local f=$1 ev=$2 noinl=$3 name=${1##*/}
	local opt=()
	[ "$noinl" = 1 ] && opt=(--noinlines)
	perf_leaves "$f" "$ev" "$noinl" >want.txt
	pv_leaves "$f" "$ev" "${opt[@]}" >got.txt
	same_sums "$name $ev${opt:+ ${opt[*]}} periods" want.txt 2 got.txt
	local counts=samples
	grep -q "^${ev}_samples\$" types.txt && counts=${ev}_samples
	pv_leaves "$f" "$counts" "${opt[@]}" >got.txt
	same_sums "$name $ev${opt:+ ${opt[*]}} samples" want.txt 3 got.txt
}
sample_types() {
	"$PROFVIEW" --flat --sample-index=nothing "$1" 2>&1 | sed -n 's/.*(it has: \(.*\))$/\1/p' | tr -d ' ' | tr ',' '\n' >types.txt
	[ -s types.txt ] || fail "no sample types of ${1##*/}"
}
for f in nocallchain callchain inlined; do
	sample_types "$data/$f.txt"
	ev=$(sed -n 2p types.txt)
	check_event "$data/$f.txt" "$ev" 0
	check_event "$data/$f.txt" "$ev" 1
	# the default: the periods, as perf report
	"$PROFVIEW" --folded "$data/$f.txt" | awk '{ s += $NF } END { print s * 1000 }' >default.txt
	[ "$(cat default.txt)" = "$(perf_leaves "$data/$f.txt" "" 0 | awk '$1 == "TOTAL" { print $2 }')" ] ||
		fail "$f: the default value is not the periods ($(cat default.txt))"
done
# Two events: each its periods and its samples; "samples" all of them.
sample_types "$data/two-events.txt"
for t in task-clock task-clock_samples page-faults page-faults_samples; do
	grep -qx "$t" types.txt || fail "two-events: no sample type $t ($(tr '\n' ' ' <types.txt))"
done
check_event "$data/two-events.txt" task-clock 1
check_event "$data/two-events.txt" page-faults 1
perf_leaves "$data/two-events.txt" "" 1 >want.txt
pv_leaves "$data/two-events.txt" samples --noinlines >got.txt
same_sums "two-events all samples" want.txt 3 got.txt

# pprof: the periods of the first event (page-faults in this file) stay
# what reports weigh by, as pprof's default sample type
"$PROFVIEW" --pprof -o two.pb.gz "$data/two-events.txt" || fail "profview --pprof two-events"
first=$(awk 'NF && !/^\t/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { e = $(i + 2); sub(/[:\/].*$/, "", e); print e; exit } }' "$data/two-events.txt")
[ "$first" = page-faults ] || fail "two-events.txt's first event is $first"
pv_leaves "$data/two-events.txt" "$first" >a.txt
"$PROFVIEW" --folded two.pb.gz | awk '{ v = $NF; $NF = ""; sub(/ $/, ""); n = split($0, fr, ";"); leaf = fr[n]
	sub(/_\[k\]$/, "", leaf); sum[leaf] += v; total += v }
	END { for (f in sum) print f, sum[f]; print "TOTAL", total + 0 }' | sort >b.txt
cmp -s a.txt b.txt || fail "two-events' pprof does not weigh by $first: $(diff a.txt b.txt | head -5)"

# (inlined) frames: in the normal view the inlined functions are the
# leaves (checked above with NOINLINE=0), and some are: the fixture has
# inlined frames at the leaf
perf_leaves "$data/inlined.txt" "" 0 >a.txt
perf_leaves "$data/inlined.txt" "" 1 >b.txt
cmp -s a.txt b.txt && fail "inlined.txt: no sample has an inlined frame at its leaf"
# their source lines (-F +srcline) carry the (inlined) mark: the same
for noinl in "" --noinlines; do
	pv_leaves "$data/inlined.txt" task-clock $noinl >a.txt
	pv_leaves "$data/inlined-srcline.txt" task-clock $noinl >b.txt
	cmp -s a.txt b.txt || fail "inlined-srcline.txt $noinl differs from inlined.txt: $(diff a.txt b.txt | head -5)"
done

# Layouts of -F fields: the same samples, per function, as the default
# fields of the same recording; with periods the same periods.
layout() {
	local f=$1 from=$2 index=$3 col=$4
	perf_leaves "$data/$from.txt" "" 1 >want.txt
	pv_leaves "$data/$f.txt" "$index" --noinlines >got.txt
	same_sums "$f" want.txt "$col" got.txt
}
layout layout-comm-tid-time-event two-events samples 3
layout layout-comm-ip two-events samples 3
layout layout-ip-sym nocallchain samples 3
layout layout-srcline nocallchain samples 3
layout layout-srcline nocallchain task-clock 2
layout layout-side-band nocallchain task-clock 2
layout layout-period-ip-sym callchain samples 3
layout layout-period-ip-sym callchain events 2
layout layout-ns callchain task-clock 2

# Kernel frames: every function perf shows in the kernel's DSO marked [k],
# none of the program's.
"$PROFVIEW" --flat "$data/callchain.txt" >flat.txt
awk '/^\t/ { f = $2; sub(/\+0x[0-9a-f]+$/, "", f); if ($NF == "([kernel.kallsyms])") k[f] = 1; else if ($NF ~ /^\(\//) u[f] = 1 }
     END { for (f in k) print "k", f; for (f in u) if (!(f in k)) print "u", f }' "$data/callchain.txt" >kinds.txt
grep -q '^k ' kinds.txt && grep -q '^u ' kinds.txt || fail "callchain.txt has no kernel and user frames"
awk 'NR == FNR { kind[$2] = $1; next }
     $6 == "[k]" && kind[$7] == "u" { print "user function " $7 " marked [k]"; bad = 1 }
     $6 != "[k]" && kind[$6] == "k" { print "kernel function " $6 " not marked [k]"; bad = 1 }
     END { exit bad }' kinds.txt flat.txt >diff.txt || fail "$(cat diff.txt)"

# Names: Java's from HotSpot's perf map made short, whole with
# --full-names; Python's perf map names kept; C++ shown short.
"$PROFVIEW" --flat "$data/java-jit.txt" >flat.txt
"$PROFVIEW" --flat --full-names "$data/java-jit.txt" >full.txt
grep -q ' Spin\.work$' flat.txt || fail "java-jit: no Spin.work: $(head -n 12 flat.txt)"
grep -q 'long Spin\.work(int)$' full.txt || fail "java-jit --full-names: no 'long Spin.work(int)'"
! grep -q 'Spin\.work(int)' flat.txt || fail "java-jit: Spin.work keeps its parameter list"
"$PROFVIEW" --flat "$data/python-jit.txt" >flat.txt
grep -q ' py::leaf:/tmp/psx/fx/pywork\.py$' flat.txt || fail "python-jit: no py::leaf: $(head -n 12 flat.txt)"
"$PROFVIEW" --flat "$data/cxxnames.txt" >flat.txt
grep -q ' shapes::detail::churn$' flat.txt || fail "cxxnames: no shapes::detail::churn"
# --sample-index=cpu, as for profview's own traces, is a CPU clock event's
"$PROFVIEW" --flat --sample-index=task-clock "$data/callchain.txt" >byname.txt
"$PROFVIEW" --flat --sample-index=cpu "$data/callchain.txt" >bycpu.txt ||
	fail "--sample-index=cpu refused on a task-clock capture"
cmp -s byname.txt bycpu.txt || fail "--sample-index=cpu is not the task-clock event"
exit 0
