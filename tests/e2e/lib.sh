# lib.sh - shared by the end-to-end tests.  Usage from a test:
#   . "$(dirname "$0")/lib.sh"  with PROFVIEW, COLLECT_TIMER and SRCDIR set
# (meson passes them as arguments: the test calls e2e_init "$@").
set -eu

e2e_init() {
	PROFVIEW=$1
	COLLECT_TIMER=$2
	SRCDIR=$3
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/profview-e2e.XXXXXX")
	trap 'rm -rf "$WORK"' EXIT
	CC=${CC:-cc}
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

note() {
	echo "# $*"
}

# build NAME [extra cflags...]: compile tests/progs/NAME.c into $WORK/NAME
build() {
	local name=$1
	shift
	"$CC" -O1 -g -fno-omit-frame-pointer "$@" -o "$WORK/$name" "$SRCDIR/tests/progs/$name.c" -lpthread ||
		fail "cannot compile $name.c"
}

# flat_self FILE FUNCTION: self samples of FUNCTION in a --flat report (0 if absent)
flat_self() {
	awk -v f="$2" '$6 == f { print $1; found = 1; exit } END { if (!found) print 0 }' "$1"
}

# flat_cum FILE FUNCTION
flat_cum() {
	awk -v f="$2" '$6 == f { print $3; found = 1; exit } END { if (!found) print 0 }' "$1"
}

# within_sigma OBSERVED_K N EXPECTED_P K: is k/n within K binomial sigmas
# (plus 0.01 for the rounding of the program's own split) of p?
within_sigma() {
	awk -v k="$1" -v n="$2" -v p="$3" -v z="$4" 'BEGIN {
		if (n <= 0) exit 1
		s = sqrt(p * (1 - p) / n)
		d = k / n - p; if (d < 0) d = -d
		exit !(d <= z * s + 0.01)
	}'
}
