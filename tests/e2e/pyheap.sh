#!/usr/bin/env bash
# collect-heap on Python programs (tests/progs/pyheap.py), with each
# CPython 3.9 to 3.13 on the machine (an interpreter it does not have is
# skipped, and said):
#   - the allocations' stacks hold the Python frames: keep_small's 10^6
#     small ints (with the default allocator, PYTHONMALLOC=malloc) and
#     keep_bytes' bytes objects in use at the end, each within 5 sigma of
#     the bytes tracemalloc counts under the function in a run of its own
#     (sigma from the sizes of those blocks: each check fails by chance
#     less than once in 10^6);
#   - with --python-allocator=pymalloc, the ints (pymalloc's, from its
#     mmap'd arenas) are not seen: keep_small holds less than half of its
#     bytes, while keep_bytes' blocks (above 512 bytes: malloc's) are
#     there within 5 sigma;
#   - 41 recursive calls are all in each stack through them, also in
#     3.9 and 3.10, whose calls each add native frames;
#   - two threads allocating at once: each one's blocks under its own
#     Python function, within 5 sigma (and 3%) of their bytes;
#   - zlib's allocations (a C library called by the interpreter) are
#     under their Python caller, compress_work, itself under the native
#     frames that started the interpreter;
#   - dropped's blocks, freed by a del, are not in use at the end, though
#     it allocated 20 MB;
#   - every report (tree, flat, folded by each sample type, flame, pprof
#     read back) names the Python functions;
#   - with --split, every segment names the Python code of its stacks;
#   - --no-python leaves them out.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"
[ -x "$COLLECT_HEAP" ] || fail "no collect-heap next to $COLLECT_TIMER"
PYHEAP="$SRCDIR/tests/progs/pyheap.py"
RATE=16384

# under FOLDED FUNCTION: the total of the stacks through FUNCTION
under() {
	awk -v f="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, a, ";")
		for (i = 1; i <= k; i++) if (a[i] == f) { t += n; break } } END { print t + 0 }' "$1"
}
# near_truth ESTIMATE TRUTH VAR: within 5 sigma (sigma = sqrt(VAR))?
near_truth() {
	awk -v e="$1" -v t="$2" -v v="$3" 'BEGIN { d = e - t; if (d < 0) d = -d; exit !(t > 0 && d <= 5 * sqrt(v)) }'
}
truth_of() { # FUNCTION: "BYTES VAR" from truth.txt
	awk -v f="$1" '$1 == "truth" && $2 == f { print $3, $4 }' truth.txt
}

# check_python PY LABEL
check_python() {
	local py=$1 label=$2 t v est
	env PYTHONMALLOC=malloc "$py" "$PYHEAP" truth $RATE >truth.txt || fail "$label: pyheap.py truth failed"
	env -u PYTHONMALLOC "$COLLECT_HEAP" -q --rate=$RATE -o m.raw "$py" "$PYHEAP" run ||
		fail "$label: collect-heap $py pyheap.py failed"
	"$PROFVIEW" -q --folded --sample-index=inuse_space m.raw >inuse.txt || fail "$label: profview of m.raw failed"
	for f in keep_small keep_bytes; do
		read -r t v < <(truth_of $f)
		est=$(under inuse.txt $f)
		near_truth "$est" "$t" "$v" ||
			fail "$label: $f holds $est bytes in use, tracemalloc's truth $t (sigma $(awk -v v="$v" 'BEGIN { printf "%.0f", sqrt(v) }'))"
		note "$label: $f $est bytes in use, truth $t"
	done

	# zlib's allocations under compress_work, every one (its state's four
	# blocks of 64 KiB, 50 times: some 200 samples)
	"$PROFVIEW" -q --folded --sample-index=alloc_samples m.raw >asamples.txt
	read -r ok all < <(awk '/deflate|libz\.so/ { n += $NF; if ($0 ~ /^_start;.*;run;compress_work;.*(deflate|libz\.so)/) k += $NF }
		END { print k + 0, n + 0 }' asamples.txt)
	[ "$all" -ge 100 ] && [ "$ok" = "$all" ] ||
		fail "$label: $ok of $all samples in zlib are under compress_work: $(grep -m2 'deflate' asamples.txt)"
	"$PROFVIEW" -q --folded --sample-index=alloc_space m.raw >alloc.txt

	# dropped's 20 MB freed
	[ "$(under alloc.txt dropped)" -ge 10000000 ] ||
		fail "$label: dropped allocated $(under alloc.txt dropped) bytes, not some 20 MB"
	[ "$(under inuse.txt dropped)" -le 200000 ] ||
		fail "$label: dropped freed its blocks, yet $(under inuse.txt dropped) bytes are in use"

	# every report names them
	"$PROFVIEW" -q --folded --sample-index=peak_space m.raw | grep -q '(^|;)keep_bytes;' -E ||
		fail "$label: keep_bytes is not at the peak"
	for r in --tree --flat; do
		"$PROFVIEW" -q $r m.raw | grep -q ' keep_small .*pyheap\.py' || fail "$label: $r does not name keep_small"
	done
	"$PROFVIEW" -q --flame -o m.html m.raw && grep -q 'keep_small' m.html || fail "$label: --flame does not name keep_small"
	"$PROFVIEW" -q --pprof -o m.pb.gz m.raw && "$PROFVIEW" -q --folded --sample-index=inuse_space m.pb.gz >back.txt ||
		fail "$label: --pprof and back failed"
	[ "$(under back.txt keep_small)" = "$(under inuse.txt keep_small)" ] ||
		fail "$label: the pprof read back has $(under back.txt keep_small) bytes under keep_small, not $(under inuse.txt keep_small)"

	# 41 calls of rec, each its own C call before 3.11: every stack has
	# them all, in order, with their native frames
	"$COLLECT_HEAP" -q -o d.raw "$py" "$PYHEAP" deep || fail "$label: pyheap.py deep failed"
	"$PROFVIEW" -q --folded --sample-index=alloc_samples d.raw >deep.txt
	awk 'BEGIN { for (i = 0; i < 41; i++) want = want ";rec"; want = want ";deep_alloc" }
		/;deep_alloc/ { n += $NF; s = $0; c = gsub(/;rec/, "", s)
		if (c != 41 || !index($0, want)) { print "bad: " $0; bad = 1; exit } }
		END { if (bad) exit 1; if (n < 10) { print n + 0 " samples through deep_alloc"; exit 1 } }' deep.txt >bad.txt ||
		fail "$label: rec 41 deep: $(cut -c1-400 bad.txt)"

	# two threads allocating at once: each one's blocks under its own
	# Python frames, within 5 sigma (of N blocks of S bytes at RATE) and
	# 3% for the lists and the objects' sizes in each version of thread_a's
	# 40,000 bytes objects of 1033 bytes and thread_b's 20,000 bytearrays
	# of 6001 (and their 56 bytes)
	"$COLLECT_HEAP" -q --rate=$RATE -o th.raw "$py" "$PYHEAP" threads || fail "$label: pyheap.py threads failed"
	"$PROFVIEW" -q --folded --sample-index=inuse_space th.raw >th.txt
	awk -v a="$(under th.txt thread_a)" -v b="$(under th.txt thread_b)" -v r=$RATE '
		function sd(n, s, p) { p = 1 - exp(-s / r); return sqrt(n * s * s * (1 - p) / p) }
		function near(e, t, v) { d = e - t; if (d < 0) d = -d; return d <= 5 * v + 0.03 * t }
		BEGIN { exit !(near(a, 40000 * 1033, sd(40000, 1033)) &&
			near(b, 20000 * 6057, sqrt(sd(20000, 6001)^2 + sd(20000, 56)^2))) }' ||
		fail "$label: thread_a holds $(under th.txt thread_a) bytes (some 41.3 MB), thread_b $(under th.txt thread_b) (some 121 MB)"
	! grep -q 'thread_a.*thread_b\|thread_b.*thread_a' th.txt || fail "$label: one thread's frames in the other's stacks"

	# pymalloc: the small ints are not seen, the bytes objects are
	"$COLLECT_HEAP" -q --rate=$RATE --python-allocator=pymalloc -o p.raw "$py" "$PYHEAP" run ||
		fail "$label: collect-heap --python-allocator=pymalloc failed"
	"$PROFVIEW" -q --folded --sample-index=inuse_space p.raw >pinuse.txt
	read -r t v < <(truth_of keep_bytes)
	near_truth "$(under pinuse.txt keep_bytes)" "$t" "$v" ||
		fail "$label: pymalloc: keep_bytes holds $(under pinuse.txt keep_bytes) bytes, truth $t"
	read -r t v < <(truth_of keep_small)
	[ "$(under pinuse.txt keep_small)" -lt $((t / 2)) ] ||
		fail "$label: pymalloc: keep_small holds $(under pinuse.txt keep_small) bytes of $t: its ints were seen"
	note "$label: ok"
}

# (the interpreters two at a time, pool_start: the samples are drawn by
# bytes allocated, which nothing beside a program changes)
found=0
while read -r py <&3; do
	found=$((found + 1))
	pool_start "py$found" check_python "$py" "$py ($("$py" -c 'import platform; print(platform.python_version())'))"
done 3< <(pythons)
[ "$found" -gt 0 ] || { echo "SKIP: no CPython 3.9 to 3.13 on this machine" >&2; exit 77; }
pool_wait

py=$(command -v python3.11 || command -v python3)

# --split: each segment names the Python code its stacks run (the code
# objects written once in the trace are in every segment)
"$COLLECT_HEAP" -q --split=0.2 -o sp.raw "$py" "$PYHEAP" rounds || fail "--split: pyheap.py rounds failed"
n=0
for f in sp.seg*.raw; do
	"$PROFVIEW" -q --folded "$f" >seg.txt
	! grep -q 'not recorded' seg.txt || fail "$f: Python code not recorded: $(grep -m1 'not recorded' seg.txt)"
	grep -q ';grow;' seg.txt && n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "--split: grow is in $n segments, not in each of its 4 rounds"

# --no-python: the native stacks alone
"$COLLECT_HEAP" -q --rate=1M --no-python -o n.raw "$py" "$PYHEAP" run || fail "--no-python: pyheap.py failed"
"$PROFVIEW" -q --folded n.raw >n.txt
! grep -q 'keep_\|\[python' n.txt && grep -q '_PyEval_EvalFrameDefault\|python3' n.txt ||
	fail "--no-python: Python frames: $(grep -m1 'keep_' n.txt)"
