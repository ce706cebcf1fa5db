#!/usr/bin/env bash
# meson install: the three commands, the preload library where
# collect-timer finds it, and the man pages.  The build tree is installed
# under a DESTDIR in a temporary directory (no second build): the installed
# collect-timer, found by name on PATH, profiles a program with the
# installed library, the installed profview reads its trace, and man
# renders the installed pages, by file and by name with MANPATH.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

builddir=$(cd "$(dirname "$PROFVIEW")/.." && pwd)
[ -f "$builddir/build.ninja" ] || fail "no build directory above $PROFVIEW"
build split
cd "$WORK"
dest=$WORK/dest
meson install -C "$builddir" --destdir "$dest" --no-rebuild --quiet >install.log 2>&1 ||
	fail "meson install failed: $(tail -n 5 install.log)"
prefix=$(meson introspect --buildoptions "$builddir" |
	python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
root=$dest$prefix
for c in profview collect-timer collect-gdb collect-heap; do
	[ -x "$root/bin/$c" ] || fail "$c is not installed in $root/bin: $(find "$dest" -type f | head)"
done
lib=$(find "$root" -name libprofview-timer.so -type f)
[ -n "$lib" ] || fail "the preload library is not installed under $root"
note "installed under $root; library $lib"
# What scripts/install says it installed names every command, library and
# man page meson installed, and where.
. "$SRCDIR/scripts/common.sh"
grep -q '^install_summary "$dir"$' "$SRCDIR/scripts/install" || fail "scripts/install does not print install_summary's message"
install_summary "$builddir" >summary.txt || fail "install_summary failed"
while read -r f; do
	name=$(basename "$f") where=$(dirname "${f#"$dest"}")
	case $where in */man/man*) where=$(dirname "$where") ;; esac
	grep -E "(^| )${name//./\\.}(,| and | in )" summary.txt | grep -qF -- " in $where" ||
		fail "the install message does not say $name went to $where: $(cat summary.txt)"
done < <(find "$root" -type f \( -path '*/bin/*' -o -name '*.so' -o -path '*/man/man*' \))

# By name, from PATH: the installed commands, not the build tree's, with
# no PROFVIEW_PRELOAD to point the way.
export PATH=$root/bin:$PATH
unset PROFVIEW_PRELOAD
[ "$(command -v collect-timer)" = "$root/bin/collect-timer" ] || fail "collect-timer on PATH is $(command -v collect-timer)"
# the library the program was given is the installed one
collect-timer -q -o env.raw sh -c 'echo "$LD_PRELOAD"' >preload.txt 2>err.txt ||
	fail "the installed collect-timer failed: $(cat err.txt)"
[ "$(realpath "$(cat preload.txt)")" = "$(realpath "$lib")" ] ||
	fail "the installed collect-timer preloads '$(cat preload.txt)', not $lib"
collect-timer -q -o split.raw ./split 0.5 >/dev/null 2>err.txt || fail "collect-timer ./split failed: $(cat err.txt)"
profview --flat split.raw >flat.txt 2>err.txt || fail "the installed profview failed: $(cat err.txt)"
[ "$(flat_self flat.txt hot_work)" -gt 0 ] || fail "no hot_work in the installed profview's report: $(cat flat.txt)"
# collect-heap the same way, with its own library
hlib=$(find "$root" -name libprofview-heap.so -type f)
[ -n "$hlib" ] || fail "the heap library is not installed under $root"
collect-heap -q -o henv.raw sh -c 'echo "$LD_PRELOAD"' >hpreload.txt 2>err.txt ||
	fail "the installed collect-heap failed: $(cat err.txt)"
[ "$(realpath "$(cat hpreload.txt)")" = "$(realpath "$hlib")" ] ||
	fail "the installed collect-heap preloads '$(cat hpreload.txt)', not $hlib"

# The man pages: every one renders from its file; by name with MANPATH.
mandir=$(dirname "$(find "$root" -name collect-timer.1 -type f)")
[ -d "$mandir" ] || fail "collect-timer.1 is not installed"
for page in "$mandir"/*.1 "$(dirname "$mandir")"/man5/*.5; do
	MANWIDTH=80 man -l "$page" >page.txt 2>err.txt || fail "man -l $page failed: $(cat err.txt)"
	grep -q NAME page.txt || fail "man -l $page renders no NAME section"
done
for page in profview collect-timer collect-gdb collect-heap profview-formats; do
	MANPATH=$(dirname "$mandir") MANWIDTH=80 man "$page" >page.txt 2>err.txt ||
		fail "man $page with MANPATH failed: $(cat err.txt)"
	grep -q "^NAME" page.txt || fail "man $page renders no NAME section"
done
exit 0
