#!/usr/bin/env bash
# Python frames in collect-timer's stacks (tests/progs/pywork.py), with
# each CPython 3.9 to 3.13 on the machine (Debian's /usr/bin/python3.11,
# a static interpreter without debug info; pyenv's, with a shared
# libpython or static, one of them started through pyenv's shim script):
#   - shares: the samples of Parser.parse, outer.<locals>.inner and spin
#     (qualified names from 3.11 on, parse and inner before) against the CPU time the program measured of each
#     (time.thread_time), within 5 binomial sigmas (plus 1% for the calls
#     around them): each check fails by chance less than once in 10^6;
#   - the lines (--lines) of spin's samples are in its body;
#   - embed: a C program that loads a shared libpython with dlopen and
#     runs a Python function: its frames read from then on;
#   - --unwind=dwarf (the first interpreter only): the same shares, the
#     Python frames read in the handler beside the stack copy;
#   - the code objects packed (RAW_PYCODES): each names a code object of
#     its file (by name and first line: pylines.py --names); the
#     collector's lookup of an instruction's line gives every instruction
#     of pywork.py's and three library modules' code objects the line the
#     interpreter gives it (pylines.py --tables, rawdump --pylines);
#   - --focus=Parser.parse, and a pprof written and read back, keep the
#     names and files;
#   - callback: keyfn, called back by sorted, under callback; the
#     evaluation loop between them only with --native-frames, and then
#     right above <module> (the calls inlined into it under the Python
#     frames it runs);
#   - deep: every stack through deep_leaf has exactly 50 frames of rec
#     before it, in order, in a trace written as older collectors did
#     (RAW_PYCODE records, whose compact line tables give every
#     instruction the line the interpreter gives it: pylines.py);
#   - zlib: most of compress_work's stacks have zlib's deflate (libz)
#     leafward of it: a C library under its Python caller;
#   - threads: a thread in zlib (without the GIL) beside one running
#     bytecode: no stack mixes one's Python frames with the other's work;
#   - run's names: three child interpreters' code objects written once
#     for the run, and named right in each child;
#   - a damaged chain of frames (the collector's test hook) ends the walk
#     with a marker frame, and the program runs to its end;
#   - gil, --clock=wall: the threads off CPU have their Python frames
#     (read by the sampler); a quarter of gil_sleeper's time at least is "[sleeping]"
#     right under it and at most a tenth of it unmarked; each busy
#     thread waits "[waiting for the GIL]" under gil_busy a fifth of its
#     time at least (two threads running bytecode on the GIL: about
#     half); no "[sleeping]" under a thread that never sleeps;
#   - gil, CPU time: the split of the samples between the two busy
#     threads within 5 binomial sigmas (plus 1%) of their thread_time, in
#     a run of 0.6 s of the process's CPU time (not of wall-clock time:
#     100 samples at least however busy the machine);
#   - gen: gen_values, a generator, right under gen_consumer, whose loop
#     resumes it, in 90% of its time at least;
#   - coro: coro_work right under coro_main, which awaits it, and under
#     the event loop's _run_once, in 90% of its time at least;
#   - exc: exc_handler_work, run by exc_outer's except clause after an
#     exception went through exc_raise and exc_mid, right under
#     exc_outer in 90% of its time and never under the frames the
#     exception left; the program runs to its end;
#   - fork: the child's trace (--pid) has fork_child_work under
#     fork_main, named, in 90% of its time, and no code object it lacks;
#   - sub: another python run by subprocess has its own Python frames
#     (sub_child_work);
#   - --no-python leaves them out;
#   - a CPython of a version not read (3.8): the summary at the end says
#     it once per process ("python 3.8: its frames are not read"), of
#     each of the two processes of a fork too, and profview's header
#     says it; its native profile is as before; a version read is not
#     said so.
# An interpreter the machine does not have is skipped, and said.  The
# interpreters' checks run two at a time (pool_start), but for those of
# two threads' shares (threads, gil): one program at a time.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"
WORKPY="$SRCDIR/tests/progs/pywork.py"

# flat_samples FILE NAME: the cum samples of NAME in a --flat report
flat_samples() {
	flat_column "$1" "$2" 3
}

# shares_within FLAT TRUTH LABEL: the samples of the three functions of
# pywork.py shares in the flat report FLAT against their CPU time in TRUTH
shares_within() {
	local flat=$1 truth=$2 label=$3 total=0 k t sum
	sum=$(awk '$1 == "truth" { s += $3 } END { print s }' "$truth")
	# the names shown: qualified from 3.11 on (co_qualname), before bare
	local -A shown=([Parser.parse]=$PARSE ['outer.<locals>.inner']=$INNER [spin]=spin)
	for q in Parser.parse 'outer.<locals>.inner' spin; do
		k=$(flat_samples "$flat" "${shown[$q]}")
		total=$((total + k))
	done
	[ "$total" -ge 200 ] || fail "$label: $total samples in the three functions: $(head -12 "$flat")"
	for q in Parser.parse 'outer.<locals>.inner' spin; do
		f=${shown[$q]}
		k=$(flat_samples "$flat" "$f")
		t=$(awk -v f="$q" -v s="$sum" '$1 == "truth" && $2 == f { print $3 / s }' "$truth")
		within_sigma "$k" "$total" "$t" 5 ||
			fail "$label: $f has $k of $total samples, its CPU time a share of $t: $(head -14 "$flat")"
		note "$label: $f $k/$total samples, truth $t"
	done
}

# check_dwarf PY LABEL: --unwind=dwarf (the stack copied, unwound by the
# analyzer): the Python frames read in the handler are there, in the
# same shares
check_dwarf() {
	"$COLLECT_TIMER" -q -F 1000 --engine=perf --unwind=dwarf -o d.raw "$1" "$WORKPY" shares 0.6 >dtruth.txt ||
		fail "$2: collect-timer --unwind=dwarf $1 pywork.py shares failed"
	"$PROFVIEW" -q --flat d.raw >dflat.txt
	shares_within dflat.txt dtruth.txt "$2, --unwind=dwarf"
}

# check_shares PY LABEL
# (--engine=perf, here and in check_dwarf: a sample for each period however
# busy the machine; on a loaded one the default engine moves a thread
# that the scheduler switches often to a POSIX timer, whose samples come
# at the kernel's ticks and may each cover several periods at -F 1000,
# too few for the check's 200)
check_shares() {
	local py=$1 label=$2
	"$COLLECT_TIMER" -q -F 1000 --engine=perf -o s.raw "$py" "$WORKPY" shares 0.6 >truth.txt ||
		fail "$label: collect-timer $py pywork.py shares failed"
	"$PROFVIEW" -q --flat s.raw >flat.txt
	shares_within flat.txt truth.txt "$label"
	grep -q 'pywork.py' flat.txt || fail "$label: no file names: $(head -8 flat.txt)"

	# the code objects packed (RAW_PYCODES), their frames' lines looked up
	# by the collector: every instruction's line as the interpreter gives
	# it, in the code objects of pywork.py and of three modules of the
	# library (rawdump --pylines runs the collector's lookup)
	"$RAWDUMP" s.raw | grep -q '^pycodes ' && ! "$RAWDUMP" s.raw | grep -q $'^pycode\t' ||
		fail "$label: not the packed code records: $("$RAWDUMP" s.raw | grep -m2 '^pycode')"
	# their names and files, as the reader makes them of the strings
	# shared, are of real code objects of those files
	"$RAWDUMP" s.raw | "$py" "$SRCDIR/tests/progs/pylines.py" --names 5 >pyn.txt ||
		fail "$label: the code records' names: $(head -6 pyn.txt)"
	note "$label: the code records' names: $(tail -1 pyn.txt)"
	# shellcheck disable=SC2046
	"$py" "$SRCDIR/tests/progs/pylines.py" --tables "$WORKPY" $("$py" -c 'import json.decoder, argparse, tokenize
print(json.decoder.__file__, argparse.__file__, tokenize.__file__)') | "$RAWDUMP" --pylines >pyf.txt ||
		fail "$label: the collector's lines: $(head -6 pyf.txt)"
	awk '$1 == "compared" && $2 >= 100 { ok = 1 } END { exit !ok }' pyf.txt ||
		fail "$label: the collector's lines: $(tail -1 pyf.txt)"
	note "$label: the collector's lines: $(tail -1 pyf.txt)"

	# the lines: spin's def line and the 5 of its body (a sample as a call
	# begins is at the def line: the RESUME instruction from 3.11 on, the
	# first line of the code object before any instruction ran earlier)
	local def
	def=$(grep -n '^def spin' "$WORKPY" | cut -d: -f1)
	"$PROFVIEW" -q --lines --flat s.raw >lines.txt
	awk -v d="$def" '$0 ~ / spin:[0-9]+ / {
		for (i = 1; i <= NF; i++) if ($i ~ /^spin:[0-9]+$/) { split($i, a, ":"); n++
			if (a[2] < d || a[2] > d + 5) { print "spin at line " a[2]; bad = 1 } }
	} END { if (!n) print "no line of spin"; exit bad || !n }' lines.txt >bad.txt ||
		fail "$label: $(cat bad.txt)"

	# --focus by a qualified name; a pprof written and read back
	"$PROFVIEW" -q --flat --focus="^$PARSE\$" s.raw >focus.txt
	[ "$(flat_samples focus.txt "$PARSE")" = "$(flat_samples flat.txt "$PARSE")" ] ||
		fail "$label: --focus=$PARSE: $(head -8 focus.txt)"
	"$PROFVIEW" -q --pprof -o s.pb.gz s.raw
	"$PROFVIEW" -q --flat s.pb.gz >back.txt
	[ "$(flat_samples back.txt "$INNER")" = "$(flat_samples flat.txt "$INNER")" ] &&
		grep -q " $INNER .*pywork.py" back.txt ||
		fail "$label: the pprof read back: $(head -8 back.txt)"

}

# check_native PY LABEL: the evaluation loop between callback and keyfn
# (called back by sorted) folded out, unless --native-frames
check_native() {
	"$COLLECT_TIMER" -q -o c.raw "$1" "$WORKPY" callback 0.5 || fail "$2: pywork.py callback failed"
	"$PROFVIEW" -q --folded c.raw >folded.txt
	"$PROFVIEW" -q --folded --native-frames c.raw >native.txt
	grep -Eq ';callback;(.*;)?keyfn' folded.txt && ! grep -q ';callback;.*_PyEval_EvalFrameDefault' folded.txt ||
		fail "$2: the evaluation loop between Python frames: $(grep -m1 ';keyfn' folded.txt)"
	grep -q ';callback;.*_PyEval_EvalFrameDefault.*;keyfn' native.txt ||
		fail "$2: --native-frames: $(grep -m1 ';keyfn' native.txt)"
	# the loop right above the Python frames it runs (the script's
	# <module>: the first after run_eval_code_obj, which runs it), the
	# helpers inlined into it (import_name, a call's vectorcall) under them
	local above
	above=$(awk -F';' '{ r = 0; for (i = 2; i <= NF; i++) {
			if ($i == "run_eval_code_obj") r = i
			else if (r && $i == "<module>") { print $(i - 1); next } } }' native.txt |
		grep -v '^_PyEval_EvalFrameDefault$' | sort | uniq -c | head -3)
	[ -z "$above" ] || fail "$2: --native-frames: the script's <module> under other than the loop: $above"
}

# check_deep PY LABEL
# (written as older collectors did, a RAW_PYCODE record for each code
# object with its compact line table, which the reader still reads: every
# instruction's line in it as the interpreter gives it)
check_deep() {
	PROFVIEW_TEST_PYCODE_RECORDS=1 "$COLLECT_TIMER" -q -o d.raw "$1" "$WORKPY" deep 0.5 ||
		fail "$2: pywork.py deep failed"
	"$RAWDUMP" d.raw | "$1" "$SRCDIR/tests/progs/pylines.py" 3 >pyl.txt ||
		fail "$2: line tables: $(head -6 pyl.txt)"
	note "$2: line tables: $(tail -1 pyl.txt)"
	"$PROFVIEW" -q --folded d.raw >deep.txt
	awk 'BEGIN { for (i = 0; i < 50; i++) want = want ";rec"; want = want ";deep_leaf" }
		/;deep_leaf/ { n++; s = $0; c = gsub(/;rec/, "", s)
		if (c != 50 || !index($0, want)) { print "bad: " $0; bad = 1; exit } }
		END { if (bad) exit 1; if (n < 10) { print n " stacks through deep_leaf"; exit 1 } }' deep.txt >bad.txt ||
		fail "$2: rec 50 deep: $(cut -c1-400 bad.txt)"
}

# check_zlib PY LABEL
check_zlib() {
	"$COLLECT_TIMER" -q -o z.raw "$1" "$WORKPY" zlib 1 || fail "$2: pywork.py zlib failed"
	"$PROFVIEW" -q --folded z.raw >z.txt
	# (weights: CPU time; a sample is one period, 4 ms)
	read -r ok all < <(awk '/;compress_work/ { n += $NF; if ($0 ~ /;compress_work;.*(deflate|libz\.so|adler32)/) k += $NF }
		END { print k + 0, n + 0 }' z.txt)
	[ "$all" -ge 40000 ] && [ $((ok * 2)) -ge "$all" ] ||
		fail "$2: zlib under compress_work in $ok of $all us: $(grep -m3 compress_work z.txt)"
}

# check_threads PY LABEL
check_threads() {
	"$COLLECT_TIMER" -q -F 1000 -o t.raw "$1" "$WORKPY" threads 0.6 || fail "$2: pywork.py threads failed"
	"$PROFVIEW" -q --folded t.raw >th.txt
	grep -q ';thread_py' th.txt && grep -Eq ';thread_z;.*(deflate|libz\.so)' th.txt ||
		fail "$2: the threads' frames: $(grep -m3 thread_ th.txt)"
	! grep -E ';thread_py.*(deflate|libz\.so)|;thread_z;.*;thread_py' th.txt >bad.txt ||
		fail "$2: one thread's frames on the other's stack: $(head -2 bad.txt)"
	# both run all along, on a CPU each: neither has most of the time
	read -r tpy tz < <(awk '/;thread_py/ { p += $NF } /;thread_z/ { z += $NF } END { print p + 0, z + 0 }' th.txt)
	[ $((tpy * 5)) -ge $((tpy + tz)) ] && [ $((tz * 5)) -ge $((tpy + tz)) ] ||
		fail "$2: thread_py has $tpy us of CPU time, thread_z $tz"
	note "$2: thread_py $tpy us, thread_z $tz us"
}

# gil_weights FOLDED FUNC: "ALL SLEEPING GIL UNMARKED" of the stacks
# through FUNC (wall-clock weights, us): the marks right under FUNC or under
# gil_busy (which gil_busy_a and gil_busy_b call), and the off-CPU ones
# with no mark
gil_weights() {
	awk -v f=";$2;" '{ n = $NF; $NF = ""; s = $0
		if (!index(s, f)) next
		all += n
		if (index(s, f "[sleeping]")) sl += n
		if (index(s, f "[waiting for the GIL]") || index(s, f "gil_busy;[waiting for the GIL]")) g += n
		if (s ~ /\[off-cpu\]/ && s !~ /\[(sleeping|idle|waiting for the GIL)\]/) un += n
	} END { print all + 0, sl + 0, g + 0, un + 0 }' "$1"
}

# check_gil PY LABEL
check_gil() {
	local all sl g un f
	"$COLLECT_TIMER" -q --clock=wall -o gw.raw "$1" "$WORKPY" gil 2 >/dev/null ||
		fail "$2: pywork.py gil --clock=wall failed"
	"$PROFVIEW" -q --folded gw.raw >gw.txt
	read -r all sl g un < <(gil_weights gw.txt gil_sleeper)
	# (a quarter at least: the GIL waited for after each sleep takes the
	# rest, a little on a quiet machine, much more beside other work)
	[ "$all" -gt 1000000 ] && [ $((sl * 4)) -ge "$all" ] && [ $((un * 10)) -le "$all" ] ||
		fail "$2: gil_sleeper: $sl of $all us [sleeping], $un unmarked: $(grep -m3 ';gil_sleeper' gw.txt | cut -c1-300)"
	note "$2: gil_sleeper $all us, [sleeping] $sl, GIL $g, unmarked $un"
	# (a busy thread's time waiting for a processor is in no sample, the
	# kernel calling it running: beside other work its 2 s of life weigh
	# much less, 0.8 s at a load of 12 on 2 processors)
	for f in gil_busy_a gil_busy_b; do
		read -r all sl g un < <(gil_weights gw.txt "$f")
		[ "$all" -gt 300000 ] && [ $((g * 5)) -ge "$all" ] && [ "$sl" = 0 ] ||
			fail "$2: $f: $g of $all us waiting for the GIL, $sl sleeping: $(grep -m3 ";$f;" gw.txt | cut -c1-300)"
		note "$2: $f $all us, waiting for the GIL $g"
	done

	"$COLLECT_TIMER" -q -F 1000 -o gc.raw "$1" "$WORKPY" gilcpu 0.6 >gc-truth.txt || fail "$2: pywork.py gilcpu failed"
	"$PROFVIEW" -q --flat gc.raw >gc.txt
	local ka kb ta tb
	ka=$(flat_samples gc.txt gil_busy_a)
	kb=$(flat_samples gc.txt gil_busy_b)
	ta=$(awk '$2 == "gil_busy_a" { print $3 }' gc-truth.txt)
	tb=$(awk '$2 == "gil_busy_b" { print $3 }' gc-truth.txt)
	[ $((ka + kb)) -ge 100 ] || fail "$2: gil: $ka and $kb samples in the busy threads"
	within_sigma "$ka" $((ka + kb)) "$(awk -v a="$ta" -v b="$tb" 'BEGIN { print a / (a + b) }')" 5 ||
		fail "$2: gil: gil_busy_a $ka, gil_busy_b $kb samples; their CPU times $ta s, $tb s"
	note "$2: gil CPU: gil_busy_a $ka ($ta s), gil_busy_b $kb ($tb s)"
}

# share_of FOLDED INSIDE RIGHT: "K N": N the time of the stacks that hold
# INSIDE (a regular expression), K of those that match RIGHT too
share_of() {
	awk -v a="$2" -v b="$3" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s !~ a) next
		all += n; if (s ~ b) k += n }
		END { print k + 0, all + 0 }' "$1"
}

# at_least_90 LABEL WHAT K N: fails unless K >= 90% of N, N > 100 ms
at_least_90() {
	[ "$4" -ge 100000 ] && [ $(($3 * 10)) -ge $(($4 * 9)) ] ||
		fail "$1: $2: $3 of $4 us"
	note "$1: $2: $3 of $4 us"
}

# check_cases PY LABEL: generators, coroutines, exceptions, fork, subprocess
check_cases() {
	local k n child
	"$COLLECT_TIMER" -q -o gen.raw "$1" "$WORKPY" gen 0.5 || fail "$2: pywork.py gen failed"
	"$PROFVIEW" -q --folded gen.raw >gen.txt
	read -r k n < <(share_of gen.txt ';gen_values(;|$)' ';gen_consumer;gen_values(;|$)')
	at_least_90 "$2" "gen_values under gen_consumer" "$k" "$n"

	"$COLLECT_TIMER" -q -o coro.raw "$1" "$WORKPY" coro 0.5 || fail "$2: pywork.py coro failed"
	"$PROFVIEW" -q --folded coro.raw >coro.txt
	read -r k n < <(share_of coro.txt ';coro_work(;|$)' '_run_once;(.*;)?coro_main;coro_work(;|$)')
	at_least_90 "$2" "coro_work under coro_main under _run_once" "$k" "$n"

	"$COLLECT_TIMER" -q -o exc.raw "$1" "$WORKPY" exc 0.5 || fail "$2: pywork.py exc failed"
	"$PROFVIEW" -q --folded exc.raw >exc.txt
	read -r k n < <(share_of exc.txt ';exc_handler_work(;|$)' ';exc_outer;exc_handler_work(;|$)')
	at_least_90 "$2" "exc_handler_work under exc_outer" "$k" "$n"
	! grep -E ';exc_(mid|raise);(.*;)?exc_handler_work' exc.txt >bad.txt ||
		fail "$2: exc_handler_work under the frames the exception left: $(head -1 bad.txt)"

	"$COLLECT_TIMER" -q -o fork.raw "$1" "$WORKPY" fork 0.5 >fork.out || fail "$2: pywork.py fork failed"
	child=$(awk '$1 == "child" { print $2 }' fork.out)
	[ -n "$child" ] || fail "$2: fork: no child pid: $(cat fork.out)"
	"$PROFVIEW" -q --folded --pid="$child" fork.raw >fork.txt
	read -r k n < <(share_of fork.txt '.' ';fork_main;fork_child_work(;|$)')
	at_least_90 "$2" "the child's fork_child_work under fork_main" "$k" "$n"
	! grep -q '\[python: ' fork.txt || fail "$2: fork: $(grep -m1 '\[python: ' fork.txt)"

	"$COLLECT_TIMER" -q -o sub.raw "$1" "$WORKPY" sub 0.5 || fail "$2: pywork.py sub failed"
	"$PROFVIEW" -q --folded sub.raw >sub.txt
	read -r k n < <(share_of sub.txt '.' ';sub_child_work;fork_child_work(;|$)')
	[ "$k" -ge 100000 ] || fail "$2: sub: $k us in sub_child_work: $(grep -m2 sub_ sub.txt)"
	note "$2: sub: $k us in sub_child_work"
}

# check_run_names PY LABEL: a program that runs three interpreters of
# pywork.py one after the other; the code objects of their Python frames
# are the run's names, deflated, each written once (rawdump: each code object of
# the run's names once, no child's code record with a name of its own),
# and the names the children's codes get from them are of real code
# objects of their files (pylines.py --names) and make their frames
# (fork_child_work under sub_child_work, in pywork.py); the children's
# parts are the run's parts, and their stacks are the same read from the
# run as from copies of their own traces taken before the join
check_run_names() {
	rm -rf rnkept
	"$COLLECT_TIMER" -q -o rn.raw "$1" -c 'import os, shutil, subprocess, sys
for _ in range(3):
	subprocess.run([sys.executable, sys.argv[1], "sub_child", "0.1"], check=True)
os.mkdir("rnkept")
for f in os.listdir("."):
	if f.startswith("rn.") and f.endswith(".raw") and f != "rn.raw":
		shutil.copy(f, "rnkept/" + f)' "$WORKPY" ||
		fail "$2: the three interpreters failed"
	"$RAWDUMP" rn.raw >rn.txt || fail "$2: rawdump of the run: $(head -3 rn.txt)"
	# (four images at least: a child sampled between its fork and its
	# exec is one more)
	[ "$(grep -c '^part ' rn.txt)" -ge 4 ] && grep -q '^pynames ' rn.txt ||
		fail "$2: not a run of four processes with the run's names: $(grep -E '^(part|pynames) ' rn.txt)"
	# (deflated: smaller so; what follows reads them inflated)
	grep -q '^pynames [0-9]* [0-9]* deflated$' rn.txt && ! grep -q '^pynames-damaged' rn.txt ||
		fail "$2: the run's names are not deflated: $(grep '^pynames' rn.txt)"
	# the children's codes: all named from the run's names (none of
	# their own; none at all when only the run's parts name them), each
	# code of the run's names once
	awk -F'\t' '$1 ~ /^part / { np++ } np >= 2 && $1 ~ /^pycodes / { own++ }
		np >= 2 && $1 ~ /^pyentry / { split($1, w, " "); if (w[4] !~ /^run:/) own++; kids++
			used[w[4]] = 1 }
		$1 ~ /^runentry / { split($1, w, " "); k = w[3] "\t" $2 "\t" $3; if (k in seen) twice++
			seen[k] = 1; nrun++ }
		END { nused = 0; for (c in used) nused++
			printf "%d %d %d %d %d\n", own, twice, kids, nrun, nused
			exit !(own == 0 && twice == 0 && nrun > 0 && nused <= nrun) }' rn.txt >rn.count ||
		fail "$2: the run's names: (own, twice, codes, run codes, used) $(cat rn.count)"
	note "$2: the run's names: $(cat rn.count) (own, twice, children's codes, run codes, used)"
	# the children's parts: all named from the run's parts (none of
	# their own), the run's parts naming the run's codes
	awk '$1 == "part" { np++ } np >= 2 && $1 == "pyparts" { own++ }
		np >= 2 && $1 == "pyrunparts" { named++ }
		END { printf "%d %d\n", own, named; exit !(own == 0 && named >= 2) }' rn.txt >rn.parts ||
		fail "$2: the children's parts: (own, named from the run's) $(cat rn.parts)"
	"$1" "$SRCDIR/tests/progs/pylines.py" --names 5 <rn.txt >rnn.txt ||
		fail "$2: the names of the run: $(head -6 rnn.txt)"
	"$PROFVIEW" -q --flat rn.raw >rnflat.txt
	grep -Eq ' fork_child_work +[^ ]*pywork\.py:[0-9]+$' rnflat.txt ||
		fail "$2: the children's fork_child_work in pywork.py: $(grep -m3 'child_work' rnflat.txt)"
	"$PROFVIEW" -q --folded rn.raw >rnf.txt
	! grep -q '\[python: ' rnf.txt || fail "$2: the run's names: $(grep -m1 '\[python: ' rnf.txt)"
	# the children's frames, made of the run's parts: those of their own
	# traces, frame by frame and line by line
	local kids
	# (rn.PID.raw, rn.PID.N.raw for an image after the first)
	kids=$(find rnkept -name 'rn.*.raw' | sed -n 's/.*rn\.\([0-9]*\)\(\.[0-9]*\)\{0,1\}\.raw$/\1/p' |
		sort -u | paste -sd, -)
	[ -n "$kids" ] || fail "$2: no child's own trace was kept"
	"$PROFVIEW" -q --folded --lines rnkept/rn.*.raw | sort >rnk-own.txt
	"$PROFVIEW" -q --folded --lines --pid="$kids" rn.raw | sort >rnk-run.txt
	grep -q 'fork_child_work' rnk-own.txt && cmp -s rnk-own.txt rnk-run.txt ||
		fail "$2: the children's stacks in the run are not those of their traces: $(diff rnk-own.txt rnk-run.txt | head -4)"
	# each Python frame of a file (--lines: its line, from the frame's own
	# word) is in the lines of a code object of that file by the name its
	# code got: a code named from the wrong one of the run's names is not
	"$PROFVIEW" -q --flat --lines rn.raw >rnl.txt
	"$1" -c 'import dis, os, sys
def codes(c, pre, out):
    name = getattr(c, "co_qualname", c.co_name)
    ls = [l for _, l in dis.findlinestarts(c) if l is not None] + [c.co_firstlineno]
    out.setdefault(name, []).append((min(ls), max(ls)))
    for k in c.co_consts:
        if hasattr(k, "co_code"):
            codes(k, pre, out)
seen, n, bad = {}, 0, 0
for row in open(sys.argv[1]):
    f = row.split()
    if len(f) < 7 or ":" not in f[-1] or not f[-1].split(":")[0].endswith(".py"):
        continue
    path, line = f[-1].rsplit(":", 1)
    if not os.path.isfile(path) or not line.isdigit() or line == "0":
        continue  # (0: an instruction on no line)
    if path not in seen:
        seen[path] = {}
        codes(compile(open(path, "rb").read(), path, "exec"), "", seen[path])
    n += 1
    # (self, cpu%, cum, cpu%, noise; the name, which may have spaces)
    name = " ".join(f[5:-1]).rsplit(":", 1)[0]
    if not any(lo <= int(line) <= hi for lo, hi in seen[path].get(name, [])):
        bad += 1
        print("not in", name, "of", path, ":", row.strip())
print("frames", n, "bad", bad)
sys.exit(1 if bad or n < 3 else 0)' rnl.txt >rnl.check ||
		fail "$2: the run's names of the children's frames: $(head -4 rnl.check)"
}

# check_garbage PY LABEL
check_garbage() {
	PROFVIEW_TEST_PYGARBAGE=1 "$COLLECT_TIMER" -q -o g.raw "$1" "$WORKPY" shares 0.5 >g-truth.txt ||
		fail "$2: with a damaged chain of frames, the program failed"
	[ "$(grep -c '^truth' g-truth.txt)" = 3 ] || fail "$2: with a damaged chain, the program did not end"
	"$PROFVIEW" -q --folded g.raw >g.txt
	grep -q '\[python: ' g.txt || fail "$2: no marker of a damaged chain: $(head -3 g.txt)"
}

# check_embed: a C program that dlopen's a shared libpython
# (tests/progs/pyembed.c; pyenv's 3.9 to 3.13) and runs embedded_spin in
# it: the interpreter is found when loaded, and embedded_spin is in most
# samples (it is nearly all of the run: at least half, never by chance)
check_embed() {
	local lib n all k
	"$CC" -O1 -g -o pyembed "$SRCDIR/tests/progs/pyembed.c" -ldl || fail "cannot build pyembed"
	n=0
	for lib in /root/.pyenv/versions/3.9.*/lib/libpython3.9.so /root/.pyenv/versions/3.1[0-3].*/lib/libpython3.1[0-3].so; do
		[ -f "$lib" ] || continue
		n=$((n + 1))
		"$COLLECT_TIMER" -q -o e.raw ./pyembed "$lib" 1 || fail "collect-timer pyembed $lib failed"
		"$PROFVIEW" -q --flat e.raw >eflat.txt
		all=$(sed -n 's/.* in \([0-9]*\) samples.*/\1/p' eflat.txt | head -1)
		k=$(flat_samples eflat.txt embedded_spin)
		[ "${all:-0}" -ge 100 ] && [ $((${k:-0} * 2)) -ge "$all" ] ||
			fail "$lib loaded by dlopen: embedded_spin in ${k:-0} of ${all:-0} samples: $(head -9 eflat.txt)"
		note "$lib loaded by dlopen: embedded_spin in $k of $all samples"
	done
	[ "$n" -gt 0 ] || note "SKIP: a libpython loaded by dlopen: no shared libpython3.9 to 3.13 under /root/.pyenv/versions"
}

# check_rest: the interpreter started through pyenv's shim, --no-python,
# a version whose frames are not read
check_rest() {
	# through pyenv's shim (a bash script that execs the interpreter)
	if command -v pyenv >/dev/null && [ -x /root/.pyenv/shims/python3 ] &&
		ls -d /root/.pyenv/versions/3.12.* >/dev/null 2>&1; then
		v=$(basename "$(ls -d /root/.pyenv/versions/3.12.* | head -1)")
		PYENV_VERSION=$v "$COLLECT_TIMER" -q -o shim.raw /root/.pyenv/shims/python3 "$WORKPY" deep 0.5 ||
			fail "pyenv's shim: pywork.py deep failed"
		"$PROFVIEW" -q --folded shim.raw | grep -q '(;rec){50};deep_leaf' -E ||
			fail "pyenv's shim: no deep_leaf under rec"
	else
		note "SKIP: no pyenv shim with a 3.12"
	fi

	# --no-python: the native profile alone
	py=$(command -v python3.11 || command -v python3 || true)
	if [ -n "$py" ]; then
		"$COLLECT_TIMER" -q --no-python -o n.raw "$py" "$WORKPY" deep 0.3 || fail "--no-python: pywork.py failed"
		"$PROFVIEW" -q --folded n.raw >n.txt
		! grep -q 'deep_leaf\|\[python' n.txt && grep -q '_PyEval_EvalFrameDefault\|python3' n.txt ||
			fail "--no-python: $(head -2 n.txt)"
	fi

	# a version whose frames are not read: said once, the native profile kept
	old=$(ls -d /root/.pyenv/versions/3.8.*/bin/python3.8 2>/dev/null | head -1 || true)
	if [ -n "$old" ]; then
		"$COLLECT_TIMER" -o o.raw "$old" "$WORKPY" deep 0.3 >/dev/null 2>o.err || fail "$old: pywork.py failed"
		[ "$(grep -c 'pid [0-9]* (python3.8): python 3.8: its frames are not read' o.err)" = 1 ] ||
			fail "$old: the summary does not say once that its frames are not read: $(cat o.err)"
		"$PROFVIEW" -q --folded o.raw >o.txt
		grep -q '_PyEval_EvalFrameDefault' o.txt && ! grep -q 'deep_leaf' o.txt ||
			fail "$old: the native profile: $(head -2 o.txt)"
		"$PROFVIEW" --flat o.raw 2>&1 | grep -q '^warning: python 3.8: its frames are not read' ||
			fail "$old: profview's header: $("$PROFVIEW" --flat o.raw 2>&1 | head -6)"
		# each process of a fork, once
		"$COLLECT_TIMER" -o of.raw "$old" "$WORKPY" fork 0.3 >of.out 2>of.err || fail "$old: pywork.py fork failed"
		sed -n 's/.*pid \([0-9]*\) (python3.8): python 3.8: its frames are not read.*/\1/p' of.err | sort >of.pids
		[ "$(wc -l <of.pids)" = 2 ] && [ "$(sort -u of.pids | wc -l)" = 2 ] &&
			grep -qx "$(awk '$1 == "child" { print $2 }' of.out)" of.pids ||
			fail "$old: fork: not said once of each process: $(cat of.err)"
		"$PROFVIEW" --flat of.raw 2>&1 | grep -q '^warning: python 3.8: its frames are not read in 2 processes' ||
			fail "$old: fork: profview's header: $("$PROFVIEW" --flat of.raw 2>&1 | head -6)"
	else
		note "SKIP: no CPython 3.8"
	fi
	# a version read: not said to be unread
	if [ -n "$py" ]; then
		"$COLLECT_TIMER" -o r.raw "$py" "$WORKPY" deep 0.2 >/dev/null 2>r.err || fail "$py: pywork.py failed"
		! grep -q 'frames are not read' r.err && ! "$PROFVIEW" --flat r.raw 2>&1 | grep -q 'frames are not read' ||
			fail "$py: said to be unread: $(cat r.err)"
	fi
}

# check_one PY LABEL: the checks of one interpreter that hold beside other
# work (run two at a time: pool_start): one thread's samples against its
# own CPU time, names, stacks, lines
check_one() {
	check_shares "$1" "$2"
	if [ "$3" = 1 ]; then
		check_dwarf "$1" "$2"
	fi
	check_native "$1" "$2"
	check_deep "$1" "$2"
	check_zlib "$1" "$2"
	check_garbage "$1" "$2"
	check_cases "$1" "$2"
	check_run_names "$1" "$2"
}

# set_names PY: the names the three functions of the shares are shown by
set_names() {
	if "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
		PARSE=Parser.parse INNER='outer.<locals>.inner'
	else
		PARSE=parse INNER=inner
	fi
}

found=0
labels=()
while read -r py <&3; do
	label="$py ($("$py" -c 'import platform; print(platform.python_version())'))"
	labels+=("$py" "$label")
	found=$((found + 1))
	set_names "$py"
	pool_start "py$found" check_one "$py" "$label" "$found"
done 3< <(pythons)
[ "$found" -gt 0 ] || { echo "SKIP: no CPython 3.9 to 3.13 on this machine" >&2; exit 77; }
pool_start embed check_embed
pool_start rest check_rest
pool_wait
# Two threads' shares of CPU time and of wall-clock time: one program at a
# time, with nothing of this test beside it
for ((i = 0; i < ${#labels[@]}; i += 2)); do
	set_names "${labels[i]}"
	check_threads "${labels[i]}" "${labels[i + 1]}"
	check_gil "${labels[i]}" "${labels[i + 1]}"
	note "${labels[i + 1]}: ok"
done
