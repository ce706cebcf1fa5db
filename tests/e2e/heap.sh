#!/usr/bin/env bash
# Heap profiles and the rest of pprof's legacy formats: pprof's own test
# profiles (Debian's golang-github-google-pprof-dev) read with pprof's
# sample types and totals (`pprof -top` prints the same total); jemalloc's
# heap_v2 dumps of a program with known allocations, unsampled within 5
# sigma of the truth and with jeprof's totals, compared (--diff-base),
# drawn (--svg --focus) and weighed by every sample type in every report;
# gperftools' HEAPPROFILE dumps, exact, with google-pprof's totals.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

TESTDATA=/usr/share/gocode/src/github.com/google/pprof/profile/testdata
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
TCMALLOC=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4
tested=

# ---- pprof's legacy test profiles -------------------------------------
PPROF=
if [ -d "$TESTDATA" ] && command -v go >/dev/null; then
	PPROF=$("$SRCDIR/scripts/install-pprof" "$WORK/tools") || fail "cannot build pprof"
fi
if [ -d "$TESTDATA" ]; then
	tested=1
	# pprof's total in its unit: bytes, nanoseconds or a count
	pprof_total() { # FILE UNIT
		"$PPROF" -top -unit="$2" "$1" 2>/dev/null |
			sed -n 's/.* of \([0-9.]*\)[a-zA-Z]* total$/\1/p' | head -1
	}
	for f in cppbench.heap cppbench.growth gobench.heap java.heap cppbench.contention java.contention \
		 cppbench.thread cppbench.thread.all cppbench.thread.none go.godoc.thread java.cpu cppbench.cpu; do
		[ -f "$TESTDATA/$f" ] || fail "$f is not in $TESTDATA"
		"$PROFVIEW" -q --tree "$TESTDATA/$f" >"$f.txt" 2>err.txt || { cat err.txt; fail "profview cannot read $f"; }
		header=$(sed -n 2p "$f.txt")
		case $header in
		*" 0.0 ms"* | *" 0 threads"*) fail "$f: the header says what the profile does not: $header" ;;
		esac
		[ -n "$PPROF" ] || continue
		# profview's model, written back as profile.proto, has pprof's
		# total to the byte (or nanosecond) ...
		"$PROFVIEW" -q --pprof -o "$f.pb.gz" "$TESTDATA/$f" || fail "profview --pprof of $f failed"
		case $f in
		*.heap | *.growth) unit=B ;;
		*.contention | *.cpu) unit=ns ;;
		*) unit=B ;; # counts: pprof prints them bare
		esac
		want=$(pprof_total "$TESTDATA/$f" $unit)
		got=$(pprof_total "$f.pb.gz" $unit)
		[ -n "$want" ] && [ "$want" = "$got" ] || fail "$f: pprof's total is $want, of profview's reading $got"
		# ... and the header says it in its unit
		case $unit in
		B) shown=$(awk -v b="$want" 'BEGIN { if (b >= 1048576) printf "%.1f MiB", b / 1048576;
			else printf "%.1f KiB", b / 1024 }') ;;
		ns) shown=$(awk -v n="$want" 'BEGIN { if (n >= 1e10) printf "%.1f s", n / 1e9;
			else if (n >= 1e9) printf "%.2f s", n / 1e9; else printf "%.1f ms", n / 1e6 }') ;;
		esac
		case $f in
		*.thread* | *.godoc.thread) shown="$want samples" ;;
		esac
		case $header in
		*"$shown"*) ;;
		*) fail "$f: pprof's total is $want $unit, but profview's header says: $header" ;;
		esac
		note "$f: pprof -top total $want $unit, profview: $header"
	done
	# pprof's sample types, by name in every report
	for idx in alloc_space alloc_objects inuse_space inuse_objects samples alloc_samples; do
		for r in --tree --flat --folded --svg --flame --speedscope "--flat --field-separator=,"; do
			# shellcheck disable=SC2086
			"$PROFVIEW" -q $r --sample-index=$idx -o out.x "$TESTDATA/gobench.heap" ||
				fail "profview $r --sample-index=$idx of gobench.heap failed"
		done
	done
	"$PROFVIEW" -q --flat --sample-index=delay "$TESTDATA/java.contention" | grep -q 'com.example' ||
		fail "java.contention: no Java function named"
	if "$PROFVIEW" -q --flat --sample-index=wall "$TESTDATA/gobench.heap" 2>err.txt; then
		fail "--sample-index=wall of a heap profile did not fail"
	fi
	grep -q "inuse_space" err.txt || fail "an unknown sample type's error does not list the types"
else
	note "pprof's legacy test profiles are not installed ($TESTDATA): golang-github-google-pprof-dev"
fi

# ---- jemalloc ---------------------------------------------------------
# by_function FILE: "function total" of a --folded report, by leaf
by_function() {
	awk '{ n = split($1, a, ";"); s[a[n]] += $NF } END { for (k in s) print k, s[k] }' "$1"
}
# value_of FILE FUNCTION
value_of() {
	awk -v f="$2" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}
# unsampled_ok ESTIMATE N SIZE RATE: is an estimate of N blocks of SIZE
# bytes, sampled at RATE, within 5 sigma of N*SIZE?  A block is sampled
# with p = 1-exp(-SIZE/RATE), independently (a Poisson process over the
# bytes): n ~ Binomial(N, p) and the estimate n SIZE/p has the relative
# sigma sqrt((1-p)/(N p)).  5 sigma: 6e-7 of the runs fail by chance.
unsampled_ok() {
	awk -v e="$1" -v n="$2" -v s="$3" -v r="$4" 'BEGIN {
		p = 1 - exp(-s / r); t = n * s; sd = t * sqrt((1 - p) / (n * p))
		d = e - t; if (d < 0) d = -d
		exit !(d <= 5 * sd)
	}'
}

if [ -e "$JEMALLOC" ]; then
	tested=1
	"$CC" -O1 -g -fno-omit-frame-pointer -o heapgrow "$SRCDIR/tests/progs/heapgrow.c" -ldl ||
		fail "cannot compile heapgrow.c"
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_accum:true,lg_prof_sample:12,prof_final:true \
		./heapgrow || fail "heapgrow under jemalloc failed"
	[ -s early.heap ] && [ -s late.heap ] || fail "jemalloc wrote no dumps (prof.dump)"
	ls jeprof.*.heap >/dev/null 2>&1 || fail "jemalloc wrote no final dump (prof_final)"
	head -1 late.heap | grep -q '^heap_v2/4096$' || fail "late.heap is not a heap_v2/4096 dump"

	"$PROFVIEW" --folded ./heapgrow late.heap >inuse.folded || fail "profview --folded of late.heap failed"
	by_function inuse.folded >inuse.txt
	"$PROFVIEW" --folded --sample-index=alloc_space ./heapgrow late.heap >alloc.folded ||
		fail "profview --sample-index=alloc_space failed"
	by_function alloc.folded >alloc.txt
	"$PROFVIEW" --folded --sample-index=inuse_objects ./heapgrow late.heap >objects.folded ||
		fail "profview --sample-index=inuse_objects failed"
	by_function objects.folded >objects.txt
	cat inuse.txt alloc.txt
	steady=$(value_of inuse.txt steady)
	growing=$(value_of inuse.txt growing)
	transient_in=$(value_of inuse.txt transient)
	transient_all=$(value_of alloc.txt transient)
	steady_n=$(value_of objects.txt steady)
	unsampled_ok "$steady" 20000 1024 4096 || fail "steady: $steady bytes in use, not 20000 x 1024 within 5 sigma"
	unsampled_ok "$growing" 25000 2048 4096 || fail "growing: $growing bytes in use, not 25000 x 2048 within 5 sigma"
	unsampled_ok "$transient_all" 10000 1024 4096 ||
		fail "transient: $transient_all bytes allocated, not 10000 x 1024 within 5 sigma"
	[ "$transient_in" = 0 ] || fail "transient freed all it allocated, yet $transient_in bytes are in use"
	# the objects' estimate: n/p, with the sigma of n/p
	awk -v e="$steady_n" 'BEGIN { p = 1 - exp(-1024 / 4096); sd = sqrt(20000 * (1 - p) / p)
		d = e - 20000; if (d < 0) d = -d; exit !(d <= 5 * sd) }' ||
		fail "steady: $steady_n objects in use, not 20000 within 5 sigma"
	note "steady $steady B ($steady_n blocks), growing $growing B, transient $transient_all B allocated, none in use"

	# the header: unsampled bytes, the rate, no duration or threads
	"$PROFVIEW" --tree ./heapgrow late.heap >tree.txt || fail "profview --tree of late.heap failed"
	header=$(sed -n 2p tree.txt)
	case $header in
	"profile: inuse_space "*" MiB in "*" samples (a sample every 4096 bytes on average)") ;;
	*) fail "late.heap's header: $header" ;;
	esac
	# the count column is the sampled blocks': the tree's count column is theirs
	n_steady=$(awk '$NF ~ /heapgrow.c:/ && $(NF-1) == "steady" { print $1; exit }' tree.txt)
	p_steady=$(awk 'BEGIN { print 1 - exp(-1024 / 4096) }')
	within_sigma "$n_steady" 20000 "$p_steady" 5 0 ||
		fail "steady: $n_steady blocks sampled, not 20000 x $p_steady within 5 sigma"

	# jeprof's totals: the same to its 0.1 MB (jeprof sums unrounded
	# estimates, profview each stack's truncated as pprof does)
	if command -v jeprof >/dev/null; then
		jp=$(jeprof --text ./heapgrow late.heap 2>/dev/null | sed -n 's/^Total: \([0-9.]*\) MB$/\1/p')
		pv=$(printf '%s\n' "$header" | sed -n 's/^profile: inuse_space \([0-9.]*\) MiB.*/\1/p')
		awk -v a="$jp" -v b="$pv" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 0.1001) }' ||
			fail "jeprof's total is $jp MB, profview's $pv MiB"
		jo=$(jeprof --text --inuse_objects ./heapgrow late.heap 2>/dev/null |
			sed -n 's/^Total: \([0-9]*\) objects$/\1/p')
		po=$(awk '{ s += $NF } END { print s }' objects.folded)
		# each stack's estimate truncated: at most one object a stack less
		awk -v a="$jo" -v b="$po" 'BEGIN { d = a - b; exit !(a != "" && d >= -1 && d <= 20) }' ||
			fail "jeprof counts $jo objects in use, profview $po"
		note "jeprof --text: $jp MB, $jo objects; profview: $pv MiB, $po objects"
	fi

	# several dumps of one run: what grew
	"$PROFVIEW" --tree --diff-base=early.heap ./heapgrow late.heap >diff.txt || fail "--diff-base of two dumps failed"
	grep -E ' worse +growing ' diff.txt >/dev/null || { cat diff.txt; fail "growing did not grow significantly"; }
	grep -E '^ .* steady ' diff.txt | grep -E 'worse|better' && fail "steady is marked as changed"
	note "diff: $(grep -E ' growing ' diff.txt | head -1 | sed 's/  */ /g')"

	# the guide's jeprof --svg: profview --svg --focus=fn ./app dump
	"$PROFVIEW" --svg --focus=growing ./heapgrow late.heap >focus.svg || fail "--svg --focus=growing failed"
	grep -q '>growing<' focus.svg || fail "the focused call graph does not show growing"
	grep -q '>steady<' focus.svg && fail "the call graph focused on growing shows steady"
	grep -q 'MiB' focus.svg || fail "the call graph does not give bytes"

	# every report, by every sample type of the dump
	for idx in inuse_space inuse_objects alloc_space alloc_objects samples alloc_samples; do
		for r in --tree --flat --folded --svg --flame --speedscope "--tree --field-separator=,"; do
			# shellcheck disable=SC2086
			"$PROFVIEW" -q $r --sample-index=$idx -o out.x ./heapgrow late.heap ||
				fail "profview $r --sample-index=$idx of late.heap failed"
			[ -s out.x ] || fail "profview $r --sample-index=$idx wrote nothing"
		done
	done
	# pprof cannot read jemalloc's dumps: it reads profview's pprof of them
	if [ -n "$PPROF" ]; then
		"$PROFVIEW" -q --pprof -o late.pb.gz ./heapgrow late.heap || fail "profview --pprof of late.heap failed"
		want=$(awk '{ s += $NF } END { print s }' inuse.folded)
		got=$("$PPROF" -top -unit=B -sample_index=inuse_space late.pb.gz 2>/dev/null |
			sed -n 's/.* of \([0-9]*\)B total$/\1/p')
		[ -n "$got" ] && [ "$got" = "$want" ] ||
			fail "pprof reads $got bytes in use from profview's pprof of late.heap, profview $want"
		note "pprof -sample_index=inuse_space of profview's conversion: $got bytes"
	fi
	# the final dump, found by its name as jemalloc writes it
	"$PROFVIEW" -q --flat ./heapgrow jeprof.*.heap | grep -q ' growing ' || fail "the final dump has no growing"
else
	note "jemalloc is not installed ($JEMALLOC): libjemalloc2"
fi

# ---- gperftools' heap profiler ------------------------------------------
if [ -e "$TCMALLOC" ]; then
	tested=1
	[ -x heapgrow ] || "$CC" -O1 -g -fno-omit-frame-pointer -o heapgrow "$SRCDIR/tests/progs/heapgrow.c" -ldl ||
		fail "cannot compile heapgrow.c"
	HEAPPROFILE=$WORK/hp LD_PRELOAD=$TCMALLOC ./heapgrow 2>/dev/null || fail "heapgrow under tcmalloc failed"
	dump=$(ls hp.*.heap 2>/dev/null | tail -1)
	[ -n "$dump" ] || fail "HEAPPROFILE wrote no dump"
	head -1 "$dump" | grep -q '@ heapprofile' || fail "$dump is not a heapprofile dump"
	# every allocation recorded: the bytes exactly
	"$PROFVIEW" --folded ./heapgrow "$dump" >tc.folded || fail "profview of $dump failed"
	by_function tc.folded >tc.txt
	[ "$(value_of tc.txt steady)" = 20480000 ] || fail "tcmalloc: steady holds $(value_of tc.txt steady) bytes, not 20480000"
	[ "$(value_of tc.txt growing)" = 51200000 ] || fail "tcmalloc: growing holds $(value_of tc.txt growing) bytes"
	"$PROFVIEW" --folded --sample-index=alloc_space ./heapgrow "$dump" | by_function /dev/stdin >tca.txt
	[ "$(value_of tca.txt transient)" = 10240000 ] || fail "tcmalloc: transient allocated $(value_of tca.txt transient) bytes"
	header=$(
		"$PROFVIEW" --tree ./heapgrow "$dump" | sed -n 2p
	)
	case $header in
	*"(every allocation)"*) ;;
	*) fail "$dump's header: $header" ;;
	esac
	if command -v google-pprof >/dev/null; then
		gp=$(google-pprof --text ./heapgrow "$dump" 2>/dev/null | sed -n 's/^Total: \([0-9.]*\) MB$/\1/p')
		pv=$(printf '%s\n' "$header" | sed -n 's/^profile: inuse_space \([0-9.]*\) MiB.*/\1/p')
		[ -n "$gp" ] && [ "$gp" = "$pv" ] || fail "google-pprof's total is $gp MB, profview's $pv MiB"
		note "google-pprof --text: $gp MB; profview: $header"
	fi
	tc_dump=$dump
else
	tc_dump=
	note "tcmalloc is not installed ($TCMALLOC): libgoogle-perftools4"
fi

# ---- dumps cut short: read up to their last whole record, and said -----
# truncated_dump DUMP [PROGRAM]: DUMP cut in the middle of a record
# halfway through its records (before its memory map) reads those
# before it, and the warning names the blocks in use its header promises
# and those read; the whole DUMP draws no such warning
truncated_dump() {
	local dump=$1 prog=${2:-} want_n got_n read_n read_b cut
	"$PROFVIEW" -q --flat $prog "$dump" >/dev/null 2>whole.err || fail "profview of $dump failed"
	grep -q 'truncated' whole.err && fail "the whole $dump is said to be truncated: $(cat whole.err)"
	# the records: gperftools' lines "N: B [N: B] @ ...", jemalloc's
	# "t*:" lines after a stack; the cut in the middle of record half
	awk '
		NR == 1 && /^heap profile:/ { gsub(/[:\[\]]/, " "); print "header", $3, $4; fmt = "g"; next }
		NR == 1 { fmt = "j"; next }
		/^MAPPED_LIBRARIES:/ { exit }
		fmt == "j" && /^ *t\*:/ && !stack { gsub(/[:\[\]]/, " "); print "header", $2, $3; next }
		fmt == "j" && /^@/ { stack = 1; start = off }
		fmt == "j" && /^ *t\*:/ && stack { gsub(/[:\[\]]/, " "); print "record", start, off + length($0) + 1, $2, $3; stack = 0 }
		fmt == "g" && /@/ { line = $0; gsub(/[:\[\]]/, " "); print "record", off, off + length(line) + 1, $1, $2 }
		{ off += length($0) + 1 }
	' off=0 "$dump" >records.txt
	want_n=$(awk '$1 == "header" { print $2 }' records.txt)
	set -- $(awk '$1 == "record" { r[++n] = $0 } END {
		h = int((n + 1) / 2); split(r[h], f, " ")
		for (i = 1; i < h; i++) { split(r[i], g, " "); cn += g[4]; cb += g[5] }
		print int((f[2] + f[3]) / 2), cn + 0, cb + 0 }' records.txt)
	cut=$1 read_n=$2 read_b=$3
	[ -n "$want_n" ] && [ "$cut" -gt 0 ] || fail "cannot find the records of $dump: $(head -3 records.txt)"
	head -c "$cut" "$dump" >cut.heap
	"$PROFVIEW" --flat $prog cut.heap >cut.txt 2>cut.err || fail "profview of $dump cut at $cut bytes failed: $(cat cut.err)"
	got_n=$(sed -n 's/.*heap dump truncated: its header promises \([0-9]*\) blocks \/ .* in use, read \([0-9]*\) \/ .*/\1 \2/p' cut.err)
	[ "$got_n" = "$want_n $read_n" ] ||
		fail "$dump cut at $cut bytes: the warning says '$got_n', not '$want_n $read_n' blocks promised and read: $(cat cut.err)"
	[ "$(grep -c 'truncated' cut.err)" = 1 ] || fail "$dump cut: not one line about it: $(cat cut.err)"
	# what was read is what the report holds (every block sampled)
	"$PROFVIEW" -q --folded --sample-index=inuse_objects $prog cut.heap >cut.folded ||
		fail "profview --folded of $dump cut failed"
	[ "$(awk '{ s += $NF } END { print s + 0 }' cut.folded)" = "$read_n" ] ||
		fail "$dump cut: the report holds $(awk '{ s += $NF } END { print s + 0 }' cut.folded) blocks, not the $read_n of the whole records"
	note "$dump cut at $cut bytes: $(grep truncated cut.err)"
}

# a jemalloc dump made here (its stacks are data: no program needed),
# every block sampled (heap_v2/1), the header's totals the records' sum
{
	echo "heap_v2/1"
	echo "  t*: 60: 6144 [0: 0]"
	for i in 1 2 3 4 5 6; do
		printf '@ 0x%x 0x%x 0x%x\n' $((0x401000 + i * 16)) $((0x402000 + i)) 0x403000
		echo "  t*: 10: 1024 [0: 0]"
		echo "  t0: 10: 1024 [0: 0]"
	done
	echo
	echo "MAPPED_LIBRARIES:"
} >made.heap
truncated_dump made.heap
[ -z "${tc_dump:-}" ] || truncated_dump "$tc_dump" ./heapgrow

[ -n "$tested" ] || { echo "heap: neither pprof's test profiles, jemalloc nor tcmalloc is installed" >&2; exit 77; }
exit 0
