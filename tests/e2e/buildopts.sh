#!/usr/bin/env bash
# The build options: profview built without libbfd, graphviz and ncurses
# links none of them, says in one line what each missing part would have
# done, and reports the same as the full build on the same trace (C++
# names demangled all the same); a collectors-only build (-Danalyzer=false)
# builds the three collectors on libc alone (and zlib, in their launcher
# only, when found), and they record.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

command -v meson >/dev/null && command -v ninja >/dev/null ||
	fail "meson and ninja are missing (scripts/test installs them)"

# The smallest profview: unoptimized, the three parts left out.
meson setup small "$SRCDIR" -Dbuildtype=plain -Dbfd=disabled -Dgraphviz=disabled -Dtui=disabled \
	>small.log 2>&1 || { tail -20 small.log; fail "meson setup without bfd, graphviz and ncurses failed"; }
ninja -C small cmd/profview >>small.log 2>&1 || { tail -20 small.log; fail "profview without bfd, graphviz and ncurses did not build"; }
SMALL=small/cmd/profview
if ldd "$SMALL" | grep -E 'libbfd|libgvc|libcgraph|libncurses|libtinfo'; then
	fail "profview built without them still links one of libbfd, graphviz, ncurses"
fi

# said, not failed silently: one line each, exit 1, before any input is read
said() { # WHAT ARGS...
	local what=$1 st=0
	shift
	"$SMALL" "$@" nosuch.raw >out.txt 2>err.txt || st=$?
	[ "$st" -eq 1 ] || fail "$what: exit $st, not 1"
	[ "$(wc -l <err.txt)" -eq 1 ] && grep -q "this profview was built without .*$what" err.txt ||
		fail "$what: $(cat err.txt)"
	[ ! -s out.txt ] || fail "$what: wrote $(head -c 200 out.txt)"
}
said graphviz --svg
said "the browser" --tui
said libbfd --symbolizer=bfd --flat

# The same trace reads the same: names (C++ demangled by the C++ runtime
# instead of libbfd), lines, numbers.
"$CXX" -O1 -g -fno-omit-frame-pointer -o cxxnames "$SRCDIR/tests/progs/cxxnames.cc" ||
	fail "cannot build cxxnames"
"$COLLECT_TIMER" -q -o cxx.raw ./cxxnames 0.3 >/dev/null || fail "collect-timer failed on cxxnames"
for r in flat tree folded; do
	"$PROFVIEW" --$r cxx.raw >full.$r || fail "profview --$r failed"
	"$SMALL" --$r cxx.raw >small.$r || fail "the small profview's --$r failed"
	diff full.$r small.$r >d.txt || { head -20 d.txt; fail "--$r differs between the full and the small build"; }
done
grep -q 'shapes::Accumulator<int>::step' small.flat || fail "C++ names are not demangled: $(sed -n 5,9p small.flat)"
# On a terminal the small build prints the tree (no browser to open).
if command -v script >/dev/null; then
	script -qec "$SMALL cxx.raw" /dev/null </dev/null >tty.txt 2>&1 || fail "the small profview on a terminal failed: $(head -3 tty.txt)"
	grep -q 'shapes::' tty.txt || fail "the small profview on a terminal did not print the tree: $(head -5 tty.txt)"
fi

# Collectors only: no analyzer, no protobuf-c, zlib, libdw; libc alone.
meson setup rec "$SRCDIR" -Dbuildtype=plain -Danalyzer=false >rec.log 2>&1 ||
	{ tail -20 rec.log; fail "meson setup -Danalyzer=false failed"; }
ninja -C rec >>rec.log 2>&1 || { tail -20 rec.log; fail "the collectors-only build failed"; }
[ ! -e rec/cmd/profview ] || fail "-Danalyzer=false built profview"
for f in rec/collectors/timer/collect-timer rec/collectors/timer/libprofview-timer.so \
	rec/collectors/heap/collect-heap rec/collectors/heap/libprofview-heap.so rec/collectors/gdb/collect-gdb; do
	[ -x "$f" ] || [ -f "$f" ] || fail "-Danalyzer=false did not build $f"
	# (the launcher of collect-timer and collect-heap deflates the run's
	# Python names with zlib when the build found it; the preload
	# libraries, whose start every process pays, never link it)
	z='|libz'
	case $f in */collect-timer | */collect-heap) z= ;; esac
	if ldd "$f" | grep -E "libdw|libelf|libprotobuf|libbfd|libgvc|libncurses$z"; then
		fail "$f links more than libc"
	fi
done
rec/collectors/timer/collect-timer -q -o rec.raw ./cxxnames 0.2 >/dev/null || fail "the collectors-only collect-timer failed"
"$PROFVIEW" --flat rec.raw >rec.txt || fail "profview cannot read the collectors-only build's trace"
grep -q 'shapes::' rec.txt || fail "the collectors-only trace has no C++ frames: $(head -8 rec.txt)"
exit 0
