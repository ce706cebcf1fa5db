#!/usr/bin/env bash
# The value columns of a heap profile's --flat and --tree: the bytes (or
# objects) of each line in its unit, "12.3 MiB" as pprof and jeprof give
# them, each the same number the --folded report sums for that function,
# under every sample type; the filters' line counts the samples the header
# counts under each; a CPU profile keeps its columns.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"
[ -x "$COLLECT_HEAP" ] || fail "no collect-heap next to $COLLECT_TIMER"

build heapcases
"$COLLECT_HEAP" -q --rate=64k -o known.raw ./heapcases known || fail "collect-heap ./heapcases known failed"

# human VALUE UNIT: VALUE as the reports write it (bytes: B, KiB, MiB, GiB)
human() {
	awk -v v="$1" -v u="$2" 'BEGIN {
		if (u != "bytes") { printf "%d\n", v; exit }
		a = v < 0 ? -v : v
		if (a >= 1073741824) printf "%.2f GiB\n", v / 1073741824
		else if (a >= 1048576) printf "%.1f MiB\n", v / 1048576
		else if (a >= 1024) printf "%.1f KiB\n", v / 1024
		else printf "%d B\n", v
	}'
}

for idx in inuse_space alloc_space peak_space inuse_objects alloc_objects; do
	case $idx in *_space) unit=bytes ;; *) unit=objects ;; esac
	"$PROFVIEW" -q --folded --sample-index=$idx known.raw >f.folded || fail "--folded --sample-index=$idx failed"
	"$PROFVIEW" -q --flat --sample-index=$idx known.raw >flat.txt || fail "--flat --sample-index=$idx failed"
	"$PROFVIEW" -q --tree --sample-index=$idx known.raw >tree.txt || fail "--tree --sample-index=$idx failed"
	grep -Eq "± +self $unit +cum $unit  function" flat.txt || fail "--flat $idx: no self/cum $unit columns: $(sed -n 3p flat.txt)"
	grep -Eq "± +$unit  function" tree.txt || fail "--tree $idx: no $unit column: $(sed -n 3p tree.txt)"
	# the filters' line counts the samples the header counts
	"$PROFVIEW" --flat --sample-index=$idx --ignore=no_such_function known.raw >filt.txt ||
		fail "--flat --sample-index=$idx --ignore failed"
	n=$(sed -n 's/^profile: .* in \([0-9]*\) samples.*/\1/p' filt.txt)
	[ "${n:-0}" -gt 0 ] || fail "--flat $idx: no count of samples in the header: $(sed -n 2p filt.txt)"
	grep -q "^filters: ignore=no_such_function; kept $n of $n samples (100.0%)" filt.txt ||
		fail "--flat $idx: the filters' line does not count the header's $n samples: $(grep filters: filt.txt)"
	for f in kept transient peak; do
		v=$(awk -v f="$f" '{ n = split($1, a, ";"); if (a[n] == f) s += $NF } END { print s + 0 }' f.folded)
		[ "$v" -gt 0 ] || [ "$idx" != alloc_space ] || fail "$f allocated nothing: $(cat f.folded)"
		want=$(human "$v" $unit)
		# the flat line: self and cum (a leaf: the same)
		got=$(awk -v f="$f" -v u="$unit" '$0 ~ " " f "  " {
			sub(/^ *[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+% +[0-9]+ +/, "")
			n = u == "bytes" ? 2 : 1; split($0, w, " ")
			print (n == 2 ? w[1] " " w[2] : w[1]) "|" (n == 2 ? w[3] " " w[4] : w[2]); exit }' flat.txt)
		if [ "$v" = 0 ] && [ -z "$got" ]; then
			continue
		fi
		[ "$got" = "$want|$want" ] || fail "--flat $idx: $f's self|cum is '$got', not '$want' ($v)"
		# the tree's line of f
		got=$(awk -v f="$f" 'NF > 2 && $(NF-1) == f { sub(/^ *[0-9]+ +[0-9.]+% +[0-9]+ +/, ""); sub(/ +[^ ]+ +[^ ]+$/, ""); print; exit }' tree.txt)
		[ "$got" = "$want" ] || fail "--tree $idx: $f holds '$got', not '$want' ($v)"
	done
done

# a CPU profile: no such columns, its time in ms
build split
"$COLLECT_TIMER" -q -o cpu.raw ./split 0.3 >/dev/null || fail "collect-timer ./split failed"
"$PROFVIEW" -q --flat cpu.raw | grep -q '      ±  function' || fail "a CPU profile's --flat has other columns"
"$PROFVIEW" -q --tree cpu.raw | grep -q '      ±    CPU ms  function' || fail "a CPU profile's --tree has other columns"
exit 0
