#!/usr/bin/env bash
# The man pages are valid roff and document exactly the options each
# command's --help lists; the README names every command and man page.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

for page in "$SRCDIR"/man/*.in; do
	out=$(sed 's/@VERSION@/0/' "$page" | groff -t -man -ww -z 2>&1) || fail "groff failed on $page"
	[ -z "$out" ] || fail "groff warns about $(basename "$page"): $out"
	# Alternating-font macros (.RI, .BR...) join their arguments with no
	# space: two plain words in a row are prose that renders as one word
	# ("which" "holds" reads "whichholds"), which groff does not warn of.
	out=$(awk '/^\.(BI|BR|IB|IR|RB|RI)[ \t]/ {
		line = substr($0, 5); n = 0
		while (length(line) > 0) {
			sub(/^[ \t]+/, "", line)
			if (line == "")
				break
			if (substr(line, 1, 1) == "\"") {
				line = substr(line, 2); i = index(line, "\"")
				if (i == 0)
					i = length(line) + 1
				arg[++n] = substr(line, 1, i - 1); line = substr(line, i + 1)
			} else {
				match(line, /^[^ \t]+/); arg[++n] = substr(line, 1, RLENGTH)
				line = substr(line, RLENGTH + 1)
			}
		}
		for (i = 1; i < n; i++)
			if (arg[i] ~ /^[A-Za-z]+[,.;:]?$/ && arg[i + 1] ~ /^[A-Za-z]+[,.;:]?$/) {
				printf "line %d: %s\n", FNR, $0
				break
			}
	}' "$page")
	[ -z "$out" ] || fail "$(basename "$page") runs words together in a font macro: $out"
	# and what it renders has no such run of words
	out=$(sed 's/@VERSION@/0/' "$page" | groff -t -man -Tutf8 -P-cbu 2>/dev/null | grep -E '[a-z]{25,}' || true)
	[ -z "$out" ] || fail "$(basename "$page") renders a run of words as one: $out"
done

# check_options COMMAND PAGE
check_options() {
	local cmd=$1 page=$2 opt
	local help_opts man_opts
	help_opts=$("$cmd" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u)
	man_opts=$(sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$page" | grep -oE -- '\\-\\-[a-z][a-z\\-]*' |
		sed 's/\\//g' | sort -u)
	for opt in $help_opts; do
		grep -qx -- "$opt" <<<"$man_opts" || fail "$(basename "$cmd") --help lists $opt, $(basename "$page") does not"
	done
	for opt in $man_opts; do
		grep -qx -- "$opt" <<<"$help_opts" || fail "$(basename "$page") documents $opt, $(basename "$cmd") --help does not"
	done
}
check_options "$PROFVIEW" "$SRCDIR/man/profview.1.in"
check_options "$COLLECT_TIMER" "$SRCDIR/man/collect-timer.1.in"
check_options "$COLLECT_HEAP" "$SRCDIR/man/collect-heap.1.in"
# The README: every command's synopsis in "Using it", and every man page
# in the list of them
for cmd in collect-timer collect-heap collect-gdb profview; do
	sed -n '/^## Using it/,/^## /p' "$SRCDIR/README.md" | grep -qE "^$cmd +\[" ||
		fail "README's 'Using it' has no synopsis of $cmd"
done
pages=$(sed -n '/^The man pages say everything/,/^$/p' "$SRCDIR/README.md" | tr '\n' ' ')
for page in "$SRCDIR"/man/*.in; do
	name=$(basename "$page" .in)
	grep -qF "man/$name\`" <<<"$pages" || fail "README's list of the man pages leaves out $name: $pages"
done
# docs/ARCHITECTURE.md: its table of the rooms has a row for each folder
# of code, and each row names every file of its folder (a header by the
# source of its name, when there is one): a file added, moved or renamed
# without the map is a failure.
arch=$SRCDIR/docs/ARCHITECTURE.md
dirs=$(cd "$SRCDIR" && find trace profile formats collectors analyzer tui cmd -name '*.c' -printf '%h\n' | sort -u)
[ -n "$dirs" ] || fail "no folders of code found under $SRCDIR"
for dir in $dirs; do
	row=$(grep -F "| \`$dir/\` |" "$arch" || true)
	[ -n "$row" ] || fail "ARCHITECTURE.md's table of the rooms has no row for $dir/"
	for f in "$SRCDIR/$dir"/*; do
		[ -f "$f" ] || continue
		name=${f##*/}
		case $name in
		*.c | *.js | *.py | *.proto) ;;
		*.h) [ ! -e "${f%.h}.c" ] || continue ;;
		*) continue ;;
		esac
		grep -qF "\`$name\`" <<<"$row" || fail "ARCHITECTURE.md's row of $dir/ does not name $name"
	done
done
# Every header's include guard is named after its file (PROFVIEW_..._NAME_H),
# so that a header moved or copied says where it came from.
for h in $(cd "$SRCDIR" && find trace profile formats collectors analyzer tui cmd -name '*.h'); do
	want=$(basename "$h" | tr 'a-z.-' 'A-Z__')
	guard=$(sed -n 's/^#ifndef \(PROFVIEW_[A-Z0-9_]*\)$/\1/p' "$SRCDIR/$h" | head -n 1)
	case $guard in
	PROFVIEW_*"$want") ;;
	*) fail "$h: include guard '$guard' does not end in $want" ;;
	esac
done
"$COLLECT_HEAP" --version | grep -q '^collect-heap (profview) [0-9]' || fail "collect-heap --version"
"$PROFVIEW" --version | grep -q '^profview [0-9]' || fail "profview --version"
"$COLLECT_TIMER" --version | grep -q '[0-9]\.[0-9]' || fail "collect-timer --version"
exit 0
