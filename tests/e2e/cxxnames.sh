#!/usr/bin/env bash
# C++ functions are named short by default (parameter lists and template
# arguments dropped, as pprof's default demangling), whole with
# --full-names; functions the short name would merge stay apart.
#
# tests/progs/cxxnames.cc has a class template instantiated twice
# (Accumulator<unsigned long> and <int>, each with a spin and an inlined
# step), two overloads of churn, functions with internal linkage (one with
# many kinds of parameters) and main.  The samples do not come from
# profiling: every instruction of the program's functions gets one (a
# trace written by tests/tools/rawsynth), so every function is there.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

[ -x "${RAWSYNTH:-}" ] || fail "RAWSYNTH is not set to tests/tools/rawsynth (meson test sets it)"
command -v "$CXX" >/dev/null || fail "$CXX not found (Debian package g++)"
"$CXX" -O2 -g -fno-omit-frame-pointer -o "$WORK/cxxnames" "$SRCDIR/tests/progs/cxxnames.cc" ||
	fail "cannot compile cxxnames.cc"
cd "$WORK" || fail "cannot enter $WORK"
objdump -d --no-show-raw-insn --section=.text cxxnames |
	awk '/^[0-9a-f]+ <[^>]*>:$/ { on = $2 !~ /^<(_start|deregister_tm_clones|register_tm_clones|__do_global_dtors_aux|frame_dummy)>:$/; next }
	     on && /^ +[0-9a-f]+:/ { a = $1; sub(/:$/, "", a); print a }' >addrs
[ "$(wc -l <addrs)" -ge 50 ] || fail "only $(wc -l <addrs) instructions found"
"$RAWSYNTH" cxx.raw ./cxxnames <addrs || fail "rawsynth failed"

T=$'\t'
# rows FILE: the function column of a flat table, one a line
rows() {
	awk -F'\t' 'NR > 1 { print $8 }' "$1"
}
"$PROFVIEW" -q --flat -t "$T" cxx.raw >short.txt || fail "profview --flat failed"
"$PROFVIEW" -q --flat -t "$T" --full-names cxx.raw >full.txt || fail "profview --flat --full-names failed"
rows short.txt | sort >short.rows
rows full.txt | sort >full.rows

want_short='shapes::Accumulator<unsigned long>::spin
shapes::Accumulator<int>::spin
shapes::Accumulator<unsigned long>::step
shapes::Accumulator<int>::step
shapes::detail::churn(double, int)
shapes::detail::churn(unsigned long, int)
(anonymous namespace)::mix_in
fold
cpu_seconds
main'
want_full='shapes::Accumulator<unsigned long>::spin(int)
shapes::Accumulator<int>::spin(int)
shapes::Accumulator<unsigned long>::step(unsigned long, int)
shapes::Accumulator<int>::step(int, int)
shapes::detail::churn(double, int)
shapes::detail::churn(unsigned long, int)
(anonymous namespace)::mix_in(unsigned long, char const*, (anonymous namespace)::Blob const&, double (*)(double), unsigned short, long long, shapes::Accumulator<int>*)
fold(unsigned long, int)
cpu_seconds()
main'
while IFS= read -r name; do
	grep -qxF -- "$name" short.rows || { cat short.rows >&2; fail "default: no row '$name'"; }
done <<<"$want_short"
while IFS= read -r name; do
	grep -qxF -- "$name" full.rows || { cat full.rows >&2; fail "--full-names: no row '$name'"; }
done <<<"$want_full"
# Nothing merged, nothing split: as many rows, the same self samples.
[ "$(wc -l <short.rows)" -eq "$(wc -l <full.rows)" ] ||
	fail "$(wc -l <short.rows) rows with short names, $(wc -l <full.rows) with whole ones"
cmp -s <(cut -f1 short.txt | sort -n) <(cut -f1 full.txt | sort -n) ||
	fail "the self samples of the rows differ between short and whole names"
# A parameter list only where another row has the same name before it
# (overloads, constructors of two instantiations).
awk '{ n = $0; gsub(/\(anonymous namespace\)/, "", n) }
	n ~ /\(/ { b = n; sub(/\(.*/, "", b); with[b] = with[b] "\n" $0 }
	{ b = n; sub(/\(.*/, "", b); count[b]++ }
	END { for (b in with) if (count[b] < 2) print substr(with[b], 2) }' short.rows >paren.rows
[ ! -s paren.rows ] || { cat paren.rows >&2; fail "short names with a parameter list they do not need"; }
wide=$(awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' short.rows)
wide_full=$(awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' full.rows)
note "widest function name: $wide characters short, $wide_full whole"

# The other reports name them the same way.
"$PROFVIEW" -q --folded cxx.raw >short.folded || fail "profview --folded failed"
"$PROFVIEW" -q --folded --full-names cxx.raw >full.folded || fail "profview --folded --full-names failed"
grep -q '^shapes::Accumulator<int>::spin [0-9]' short.folded || fail "--folded: no short Accumulator<int>::spin"
grep -q '^shapes::Accumulator<int>::spin(int) [0-9]' full.folded || fail "--folded --full-names: no whole spin(int)"
"$PROFVIEW" -q --tree cxx.raw >short.tree || fail "profview --tree failed"
grep -q '  (anonymous namespace)::mix_in  ' short.tree || fail "--tree: no short mix_in"
grep -q 'mix_in(unsigned long' short.tree && fail "--tree: mix_in with its parameter list"
"$PROFVIEW" -q --speedscope -o short.json cxx.raw || fail "profview --speedscope failed"
grep -q '"shapes::detail::churn(double, int)"' short.json || fail "--speedscope: no churn(double, int)"
grep -q 'Accumulator<int>::spin(int)' short.json && fail "--speedscope: a whole name"

# Filters match the short names too: both overloads of churn, nothing else.
"$PROFVIEW" -q --flat -t "$T" --focus='^shapes::detail::churn$' cxx.raw >focus.txt ||
	fail "profview --focus failed"
[ "$(rows focus.txt | sort | tr '\n' '|')" = "shapes::detail::churn(double, int)|shapes::detail::churn(unsigned long, int)|" ] ||
	fail "--focus=^shapes::detail::churn$: $(rows focus.txt | tr '\n' '|')"
# and the whole ones
"$PROFVIEW" -q --flat -t "$T" --focus='churn\(double' cxx.raw >focus2.txt || fail "profview --focus failed"
[ "$(rows focus2.txt)" = "shapes::detail::churn(double, int)" ] || fail "--focus='churn\\(double': $(rows focus2.txt)"

# --no-demangle: the symbols' names, not shortened.
"$PROFVIEW" -q --flat -t "$T" --no-demangle cxx.raw >mangled.txt || fail "profview --no-demangle failed"
rows mangled.txt | grep -qx '_ZN6shapes6detail5churnEdi' || fail "--no-demangle: no _ZN6shapes6detail5churnEdi"
exit 0
