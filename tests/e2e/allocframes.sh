#!/usr/bin/env bash
# The allocator's frames trimmed from heap stacks, as pprof trims them:
# programs that keep blocks allocated through malloc, calloc, realloc,
# posix_memalign, aligned_alloc, strdup (tests/progs/allocvia.c) and each
# form of C++'s operator new (allocviacxx.cc), profiled by collect-heap
# and by gperftools' heap profiler.  Every stack's leaf is the function
# that asked for the block, in every report; --keep-alloc-frames keeps
# the allocator's frames (strdup, operator new) at the leaf.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"
[ -x "$COLLECT_HEAP" ] || fail "no collect-heap next to $COLLECT_TIMER"
TCMALLOC=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4

build allocvia
"$CXX" -O1 -g -o allocviacxx "$SRCDIR/tests/progs/allocviacxx.cc" || fail "cannot compile allocviacxx.cc"
C_FUNCS="via_malloc via_calloc via_realloc via_posix_memalign via_aligned_alloc via_strdup"
CXX_FUNCS="via_new via_new_array via_new_nothrow via_new_aligned"

# leaves FILE: "leaf bytes" of a --folded report
leaves() {
	awk '{ v = $NF; $NF = ""; sub(/ $/, ""); n = split($0, fr, ";"); s[fr[n]] += v }
		END { for (k in s) print k "\t" s[k] }' "$1"
}

# check WHAT FUNCS PROFILE...: every leaf of the profile is one of FUNCS,
# each of FUNCS holds bytes; the flat profile agrees; with
# --keep-alloc-frames the leaves are the allocator's (KEPT, a pattern;
# "": none to keep, the profiler left them out itself)
check() {
	local what=$1 funcs=$2 kept=$3
	shift 3
	"$PROFVIEW" -q --folded "$@" >trim.folded || fail "$what: profview --folded failed"
	leaves trim.folded >trim.txt
	while IFS=$'\t' read -r leaf bytes; do
		case " $funcs " in
		*" $leaf "*) ;;
		*) fail "$what: '$leaf' is a leaf ($bytes bytes), not the function that allocated: $(cat trim.txt)" ;;
		esac
	done <trim.txt
	for f in $funcs; do
		awk -F'\t' -v f="$f" '$1 == f && $2 > 0 { ok = 1 } END { exit !ok }' trim.txt ||
			fail "$what: $f holds no bytes as the leaf: $(cat trim.txt)"
	done
	"$PROFVIEW" -q --flat "$@" >flat.txt || fail "$what: profview --flat failed"
	for f in $funcs; do
		[ "$(flat_self flat.txt "$f")" -gt 0 ] || fail "$what: $f has no self samples in --flat: $(cat flat.txt)"
	done
	[ -n "$kept" ] || return 0
	"$PROFVIEW" -q --folded --keep-alloc-frames "$@" >keep.folded ||
		fail "$what: profview --keep-alloc-frames failed"
	leaves keep.folded >keep.txt
	grep -qE "^($kept)" keep.txt || fail "$what: --keep-alloc-frames keeps no $kept leaf: $(cat keep.txt)"
}

# 16 MiB kept by each function, sampled once every 512 KiB on average:
# none of its 256 blocks sampled has the probability e^-32
"$COLLECT_HEAP" -q -o c.raw ./allocvia || fail "collect-heap ./allocvia failed"
check "collect-heap allocvia" "$C_FUNCS" "__strdup|strdup" c.raw
"$COLLECT_HEAP" -q -o cxx.raw ./allocviacxx || fail "collect-heap ./allocviacxx failed"
check "collect-heap allocviacxx" "$CXX_FUNCS" "operator new" cxx.raw

# gperftools: every allocation recorded; its dumps name no program
if [ -e "$TCMALLOC" ]; then
	HEAPPROFILE=$WORK/c LD_PRELOAD=$TCMALLOC ./allocvia 2>/dev/null || fail "allocvia under tcmalloc failed"
	HEAPPROFILE=$WORK/cxx LD_PRELOAD=$TCMALLOC ./allocviacxx 2>/dev/null || fail "allocviacxx under tcmalloc failed"
	c=$(ls c.*.heap | tail -n 1) cxx=$(ls cxx.*.heap | tail -n 1)
	check "gperftools allocvia" "$C_FUNCS" "__strdup|strdup" ./allocvia "$c"
	# (gperftools skips operator new's frames itself)
	check "gperftools allocviacxx" "$CXX_FUNCS" "" ./allocviacxx "$cxx"
else
	note "gperftools' libtcmalloc is not installed: its dumps are not checked"
fi

exit 0
