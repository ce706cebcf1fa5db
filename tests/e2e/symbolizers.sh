#!/usr/bin/env bash
# The two symbolizers (libdw, the default, and libbfd) and binutils'
# addr2line agree on the same addresses: function names (C++ demangled, with
# their parameter lists), inlined frames, file and line.
#
# Programs: tests/progs/inlines.c at -O2 (an always_inline helper inside a
# static inline one inside a real function), tests/progs/cxxnames.cc
# (namespaces, a class template, overloads, an inlined member, functions
# with internal linkage, inlined or not) and tests/progs/pltcall.c (a PLT
# stub).
#
# The addresses do not come from profiling, where which ones are sampled is
# chance: every instruction inside a function of the program (by its
# symbols' sizes) and of its PLT stubs gets a sample of its own, in a trace
# written by tests/tools/rawsynth.
#
# What is compared, for every address: the list of frames, innermost first,
# as (ELF address, depth, function, file, line).  profview's hidden
# --dump-locations prints it with the ELF virtual address each runtime
# address maps to (the conversion modules.c does for both symbolizers),
# which is what addr2line is given:
#   profview --symbolizer=dw   --dump-locations   vs
#   profview --symbolizer=bfd  --dump-locations   vs
#   addr2line -a -f -i -C -e PROGRAM ADDRESS...
# The reports are compared too: the --lines and --addresses trees of the
# two symbolizers, on the rows of the program's functions.
# Known differences, normalized before comparing:
# - addr2line appends " (discriminator N)" to a line: dropped;
# - for a C function cloned by gcc (foo.constprop.0) libdw shows the source
#   name (foo) and libbfd/addr2line the symbol's: the clone suffix is
#   dropped (also C++'s " [clone .constprop.0]");
# - libbfd gives no line where a function starts, so the location column
#   of the reports (function's file:start line) is not compared.
# Known differences, accepted (libbfd's own, which addr2line shares), after
# which the reports are not compared:
# - an inlined innermost frame of a function with no linkage name (a C
#   function inlined into C++, a C++ function with internal linkage) is
#   named after the ELF symbol holding it;
# - an inlined C++ function with internal linkage is named by its bare
#   DWARF name ("mix_in" for "(anonymous namespace)::mix_in(int)").
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

CXX=${CXX:-c++}
command -v addr2line >/dev/null || fail "addr2line not found (Debian package binutils)"
command -v "$CXX" >/dev/null || fail "$CXX not found (Debian package g++)"

[ -x "${RAWSYNTH:-}" ] || fail "RAWSYNTH is not set to tests/tools/rawsynth (meson test sets it)"
"$CC" -O2 -g -fno-omit-frame-pointer -o "$WORK/inlines" "$SRCDIR/tests/progs/inlines.c" ||
	fail "cannot compile inlines.c"
"$CXX" -O2 -g -fno-omit-frame-pointer -o "$WORK/cxxnames" "$SRCDIR/tests/progs/cxxnames.cc" ||
	fail "cannot compile cxxnames.cc"
"$CXX" -O2 -g -fno-omit-frame-pointer -DOUTLINE -o "$WORK/cxxnames-outline" "$SRCDIR/tests/progs/cxxnames.cc" ||
	fail "cannot compile cxxnames.cc -DOUTLINE"

cd "$WORK" || fail "cannot enter $WORK"

# normalize: drop clone suffixes from the function field ($3) of
# "vaddr<TAB>depth<TAB>function<TAB>file<TAB>line" rows.
normalize() {
	awk -F'\t' -v OFS='\t' '{
		sub(/ \[clone [^]]*\]$/, "", $3)
		while (match($3, /\.(constprop|isra|part|cold|lto_priv)(\.[0-9]+)?$/))
			$3 = substr($3, 1, RSTART - 1)
		print
	}'
}

# frames SYMBOLIZER TRACE PROGRAM: the program's own frames, one row each.
frames() {
	"$PROFVIEW" -q --symbolizer="$1" --dump-locations "$2" >"dump-$1.txt" ||
		fail "profview --symbolizer=$1 --dump-locations $2 failed"
	awk -F'\t' -v OFS='\t' -v exe="$(realpath "$3")" '$2 == exe { print $3, $4, $5, $7, $8 }' "dump-$1.txt" |
		normalize | sort -u
}

# addr2line_frames PROGRAM ADDRESS...: the same rows from addr2line.
addr2line_frames() {
	local prog=$1
	shift
	addr2line -a -f -i -C -e "$prog" "$@" | awk -v OFS='\t' '
		/^0x[0-9a-f]+$/ {
			addr = $0; sub(/^0x0*/, "0x", addr); if (addr == "0x") addr = "0x0"
			depth = 0; next
		}
		{
			name = $0
			if ((getline loc) <= 0) exit 1
			sub(/ \(discriminator [0-9]+\)$/, "", loc)
			i = match(loc, /:[0-9?]+$/)
			file = substr(loc, 1, i - 1); line = substr(loc, i + 1)
			if (line == "?") line = 0
			if (file == "??") file = ""
			print addr, depth++, name, file, line
		}' | normalize | sort -u
}

# report_rows SYMBOLIZER TRACE FUNCTIONS_FILE OPTIONS...: the report's rows
# whose function is one of the program's (named whole, as the dump names
# them), without the location column.
report_rows() {
	local sym=$1 trace=$2 names=$3
	shift 3
	"$PROFVIEW" -q --symbolizer="$sym" --color=never --full-names "$@" "$trace" |
		awk -v names="$names" '
		BEGIN { while ((getline n <names) > 0) want[n] = 1 }
		/^ *[0-9]+ +[0-9.]+% / {
			row = $0; sub(/^ *[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+  /, "", row)
			match(row, /^ */); indent = RLENGTH
			split(substr(row, indent + 1), parts, "  "); node = parts[1]
			fn = node; sub(/ @0x[0-9a-f]+$/, "", fn); sub(/:[0-9]+$/, "", fn)
			if (fn in want) printf "%s %d %s\n", $1, indent, node
		}'
}

# compare PROGRAM A B LABEL: the frames in files A and B agree, but for the
# known libbfd difference (below); prints the differences and fails.
# Exit status 3: they agree but for known differences.
compare() {
	awk -F'\t' -v prog="$1" -v label="$4" '
		FNR == 1 { f++ }
		{
			k = $1 SUBSEP $2; row[f, k] = $3 "\t" $4 "\t" $5
			name[f, k] = $3; where[f, k] = $4 ":" $5; keys[k] = 1
			if ($2 + 0 > maxd[f, $1] + 0) maxd[f, $1] = $2
			if (f == 2) outer[$1, $2] = $3
		}
		END {
			for (k in keys) {
				if (row[1, k] == row[2, k]) continue
				split(k, ka, SUBSEP)
				# libbfd names an inlined innermost frame of a
				# function with no linkage name (a static C++
				# function) after the ELF symbol holding it.
				if (ka[2] == 0 && maxd[2, ka[1]] > 0 && where[1, k] == where[2, k] &&
				    name[2, k] == outer[ka[1], maxd[2, ka[1]]]) {
					printf "# %s: known difference at %s: %s, libbfd says %s\n",
						prog, ka[1], name[1, k], name[2, k]
					known++
					continue
				}
				# libbfd, as addr2line, names an inlined function
				# with internal linkage by its bare DWARF name:
				# no scope, no parameter list.
				base = name[1, k]; gsub(/\(anonymous namespace\)/, "@", base)
				sub(/\(.*$/, "", base); sub(/^.*::/, "", base)
				if (where[1, k] == where[2, k] && name[2, k] == base && base != name[1, k]) {
					printf "# %s: known difference at %s depth %s: %s, libbfd says %s\n",
						prog, ka[1], ka[2], name[1, k], name[2, k]
					known++
					continue
				}
				printf "%s: %s depth %s: %s | %s\n", prog, ka[1], ka[2], row[1, k], row[2, k] >"/dev/stderr"
				bad++
			}
			if (bad) { printf "FAIL: %s: %d frames differ (%s)\n", prog, bad, label >"/dev/stderr"; exit 1 }
			exit known ? 3 : 0
		}' "$2" "$3"
}

# addresses PROGRAM: the ELF address (hex) of every instruction inside a
# function of PROGRAM, by its symbols' sizes (so not the padding between
# functions, where no sample can be), and of its PLT stubs.
addresses() {
	nm -S --defined-only "$1" >"$1.syms" || fail "nm $1 failed"
	objdump -d --no-show-raw-insn "$1" | awk '
		function hex(s,   i, n) {
			n = 0; s = tolower(s)
			for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return n
		}
		FNR == NR { if (NF == 4 && $3 ~ /^[tTwWi]$/) { lo[++ns] = hex($1); hi[ns] = hex($1) + hex($2) } next }
		/^[0-9a-f]+ <[^>]*@plt>:$/ { plt = 1; next }
		/^[0-9a-f]+ <[^>]*>:$/ { plt = 0; next }
		/^ +[0-9a-f]+:/ {
			a = $1; sub(/:$/, "", a); v = hex(a); ok = plt
			for (i = 1; i <= ns && !ok; i++) ok = v >= lo[i] && v < hi[i]
			if (ok) print a
		}' "$1.syms" - || fail "objdump $1 failed"
}

# check PROGRAM: a sample at every address of the program, then compare
# the three.
check() {
	local prog=$1 trace=$1.raw
	addresses "$prog" >"$prog.addrs"
	[ "$(wc -l <"$prog.addrs")" -ge 20 ] || fail "$prog: only $(wc -l <"$prog.addrs") instructions found"
	"$RAWSYNTH" "$trace" "./$prog" <"$prog.addrs" || fail "rawsynth $prog failed"
	frames dw "$trace" "$prog" >"$prog.dw"
	frames bfd "$trace" "$prog" >"$prog.bfd"
	local addrs
	addrs=$(cut -f1 "$prog.dw" | sort -u)
	[ "$(wc -w <<<"$addrs")" -eq "$(wc -l <"$prog.addrs")" ] ||
		fail "$prog: $(wc -w <<<"$addrs") of $(wc -l <"$prog.addrs") addresses symbolized"
	# shellcheck disable=SC2086
	addr2line_frames "$prog" $addrs >"$prog.a2l" || fail "$prog: cannot read addr2line's output"
	note "$prog: $(wc -w <<<"$addrs") addresses, $(wc -l <"$prog.dw") frames"
	# The libbfd symbolizer reads exactly what addr2line reads, but for
	# the names given where no symbol is: addr2line says "??" for a PLT
	# stub ("labs@plt" here) and for an address outside any function
	# ("inlines+0x1020").
	awk -F'\t' -v OFS='\t' -v p="$prog" '$4 == "" && ($3 ~ /@plt$/ || index($3, p "+0x") == 1) { $3 = "??" } 1' \
		"$prog.bfd" | diff -u - "$prog.a2l" >&2 ||
		fail "$prog: libbfd and addr2line disagree (- bfd, + addr2line)"
	local rc=0
	compare "$prog" "$prog.dw" "$prog.bfd" "dw | bfd" || rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || exit 1
	if [ $rc -eq 3 ]; then
		note "$prog: the reports differ where the frames do: not compared"
		return 0
	fi

	cut -f3 "$prog.dw" | sort -u >"$prog.names"
	local g
	for g in --lines --addresses; do
		report_rows dw "$trace" "$prog.names" --tree "$g" >"$prog$g.dw"
		report_rows bfd "$trace" "$prog.names" --tree "$g" >"$prog$g.bfd"
		[ -s "$prog$g.dw" ] || fail "$prog: no rows of the program in the $g tree"
		diff -u "$prog$g.dw" "$prog$g.bfd" >&2 ||
			fail "$prog: the $g trees of libdw and libbfd differ (- dw, + bfd)"
	done
}

# has FILE DEPTH FUNCTION [CALLER]: a frame of FUNCTION at DEPTH, and
# CALLER right outside it at the same address.
has() {
	awk -F'\t' -v d="$2" -v f="$3" -v c="${4-}" '
		{ fn[$1 "/" $2] = $3 }
		$2 == d && $3 == f { cand[$1] = 1 }
		END {
			for (a in cand) if (c == "" || fn[a "/" (d + 1)] == c) exit 0
			exit 1
		}' "$1"
}

check inlines
has inlines.dw 0 mix_step mix_round || fail "inlines: no mix_step inlined in mix_round"
has inlines.dw 1 mix_round hash_block || fail "inlines: no mix_round inlined in hash_block"

check cxxnames
spin='shapes::Accumulator<unsigned long>::spin(int)'
has cxxnames.dw 0 'shapes::Accumulator<unsigned long>::step(unsigned long, int)' "$spin" ||
	fail "cxxnames: no demangled step inlined in $spin"
has cxxnames.dw 0 'shapes::detail::churn(double, int)' ||
	fail "cxxnames: no shapes::detail::churn(double, int)"
has cxxnames.dw 0 'shapes::detail::churn(unsigned long, int)' ||
	fail "cxxnames: the overload churn(unsigned long, int) is not kept apart"
# A function with internal linkage, out of line: named as its symbol
# demangles, with its parameter list, by both symbolizers.
has cxxnames.dw 0 'cpu_seconds()' || fail "cxxnames: libdw does not name the static cpu_seconds() with its ()"
has cxxnames.bfd 0 'cpu_seconds()' || fail "cxxnames: libbfd does not name the static cpu_seconds() with its ()"
# The system name keeps the symbol.
awk -F'\t' '$5 == "shapes::detail::churn(double, int)" && $6 == "_ZN6shapes6detail5churnEdi" { f = 1 }
	END { exit !f }' dump-dw.txt || fail "cxxnames: system name of churn(double, int) is not its symbol"

# Functions with internal linkage have no linkage name in DWARF.  Out of
# line, their symbols name them; inlined, libdw writes the name from their
# DWARF: it must be the same name, letter for letter.
check cxxnames-outline
internal='mix_in\(|fold\(|halve\('
cut -f3 cxxnames-outline.dw | grep -E "$internal" | sort -u >outline.internal
cut -f3 cxxnames.dw | grep -E "$internal" | sort -u >inline.internal
[ "$(wc -l <outline.internal)" -eq 3 ] || fail "cxxnames-outline: want mix_in, fold, halve: $(cat outline.internal)"
diff -u outline.internal inline.internal >&2 ||
	fail "the inlined internal functions are named otherwise than their symbols demangle (- symbols, + DWARF)"
has cxxnames.dw 0 "$(grep mix_in outline.internal)" main ||
	fail "cxxnames: no $(grep mix_in outline.internal) inlined in main"

# --no-demangle: names as in the binary, with both symbolizers.
for sym in dw bfd; do
	"$PROFVIEW" -q --symbolizer=$sym --no-demangle --flat cxxnames.raw >nodem.txt ||
		fail "profview --no-demangle failed"
	grep -q '_ZN6shapes6detail5churnEdi' nodem.txt || fail "--symbolizer=$sym --no-demangle: no mangled churn"
	grep -q 'shapes::' nodem.txt && fail "--symbolizer=$sym --no-demangle: demangled names remain"
done

# PLT stubs are named after the function they jump to, by both
# symbolizers, as objdump names them: every instruction of labs's stub.
"$CC" -O2 -g -fno-builtin -fno-omit-frame-pointer -o "$WORK/pltcall" "$SRCDIR/tests/progs/pltcall.c" ||
	fail "cannot compile pltcall.c"
objdump -d pltcall | grep -q '<labs@plt>:' || fail "pltcall: objdump shows no labs@plt stub"
stub=$(objdump -d --no-show-raw-insn pltcall | awk '/<labs@plt>:$/ { on = 1; next } /^$/ { on = 0 } on && /^ +[0-9a-f]+:/ { n++ } END { print n + 0 }')
[ "$stub" -ge 1 ] || fail "pltcall: no instruction in labs@plt"
check pltcall
for sym in dw bfd; do
	n=$(awk -F'\t' '$2 == 0 && $3 == "labs@plt"' "pltcall.$sym" | wc -l)
	note "pltcall ($sym): $n of the stub's $stub instructions named labs@plt"
	[ "$n" -eq "$stub" ] || fail "pltcall ($sym): $n of the stub's $stub instructions named labs@plt"
	"$PROFVIEW" -q --symbolizer=$sym --flat pltcall.raw | grep -q ' labs@plt$' ||
		fail "pltcall ($sym): no labs@plt row in the flat report"
done

rc=0
"$PROFVIEW" --symbolizer=gdb cxxnames.raw >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "--symbolizer=gdb is not a usage error (exit $rc)"
exit 0
