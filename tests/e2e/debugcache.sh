#!/usr/bin/env bash
# A separate debug file with compressed sections (libc's, from libc6-dbg)
# is decompressed once and its copy kept in $XDG_CACHE_HOME/profview: every
# report must be the same, byte for byte, whether the copy is made (the
# first report), used (the next), made anew because it is damaged or
# holds too little, or not kept at all (PROFVIEW_CACHE=off).  The kept file
# is the user's alone (mode 0600), and a link in its place is not
# followed.  sortcmp's samples are in its own code under glibc's qsort;
# without libc6-dbg no copy is made and the test skips.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

cd "$WORK" || fail "cannot enter $WORK"
"$CC" -O2 -g -fomit-frame-pointer -o sortcmp "$SRCDIR/tests/progs/sortcmp.c" ||
	fail "cannot build sortcmp"
"$COLLECT_TIMER" -q -o sort.raw ./sortcmp sort 0.5 >/dev/null || fail "collect-timer failed on sortcmp"
KINDS=("--flat" "--tree" "--folded --addresses" "--tree --noinlines")

# reports NAME: each kind's report and warnings in NAME.K.out, NAME.K.err
reports() {
	local k=0
	for r in "${KINDS[@]}"; do
		# shellcheck disable=SC2086
		"$PROFVIEW" $r sort.raw >"$1.$k.out" 2>"$1.$k.err" || fail "$1: profview $r failed"
		k=$((k + 1))
	done
}

# same NAME: NAME's reports are the uncached ones
same() {
	for ((k = 0; k < ${#KINDS[@]}; k++)); do
		cmp -s "off.$k.out" "$1.$k.out" ||
			fail "$1: profview ${KINDS[$k]} differs: $(diff "off.$k.out" "$1.$k.out" | head -5)"
		cmp -s "off.$k.err" "$1.$k.err" || fail "$1: profview ${KINDS[$k]} warns otherwise"
	done
}

PROFVIEW_CACHE=off reports off
[ -z "$(ls -A "$XDG_CACHE_HOME" 2>/dev/null)" ] || fail "PROFVIEW_CACHE=off wrote to the cache"
reports miss
kept=$(find "$XDG_CACHE_HOME/profview" -name 'debug-*' 2>/dev/null | head -1)
[ -n "$kept" ] || { echo "SKIP: no debug file with compressed sections here (libc6-dbg)" >&2; exit 77; }
same miss
[ "$(stat -c %a "$kept")" = 600 ] || fail "the kept copy has mode $(stat -c %a "$kept"), not 600"
inode=$(stat -c %i "$kept")
reports hit
same hit
[ "$(stat -c %i "$kept")" = "$inode" ] || fail "the kept copy was made again though it was good"

# a byte changed in the middle: not used, made anew
size=$(stat -c %s "$kept")
printf 'X' | dd of="$kept" bs=1 seek=$((size / 2)) conv=notrunc status=none
reports damaged
same damaged
[ "$(stat -c %i "$kept")" != "$inode" ] || fail "a damaged copy was kept"
# cut short
truncate -s $((size / 2)) "$kept"
reports short
same short
[ "$(stat -c %s "$kept")" = "$size" ] || fail "a copy cut short was not made anew"
# a link in its place, to a file of garbage: neither followed nor written through
mv "$kept" good
head -c 4096 /dev/urandom >garbage
cp garbage garbage.was
ln -s "$WORK/garbage" "$kept"
reports link
same link
[ -L "$kept" ] && fail "the link in the copy's place is still there"
cmp -s garbage garbage.was || fail "the link's target was written to"
exit 0
