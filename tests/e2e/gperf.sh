#!/usr/bin/env bash
# gperftools CPU profiles made by the real libprofiler.so: profview reads
# them with the same numbers as google-pprof --text and the Go pprof -top,
# given the program first (`profview --flat ./app prof.out`) or finding it
# through the profile's memory map; several runs merge; pprof's -proto
# conversion of the file reads the same; other word layouts and a wrong
# header.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

LIBPROFILER=
for f in /usr/lib/x86_64-linux-gnu/libprofiler.so.0 /usr/lib/x86_64-linux-gnu/libprofiler.so; do
	[ -e "$f" ] && LIBPROFILER=$f
done
[ -n "$LIBPROFILER" ] || { echo "gperf: gperftools' libprofiler.so is not installed" >&2; exit 77; }

build split
# 2.5 s of CPU time: some 620 samples (libprofiler.so's timer is one of the
# process's CPU time; 370 of 375 came in 1.5 s, also beside a CPU hog).
CPUPROFILE=a.prof CPUPROFILE_FREQUENCY=250 LD_PRELOAD=$LIBPROFILER ./split 2.5 >/dev/null ||
	fail "split under libprofiler.so failed"
CPUPROFILE=b.prof CPUPROFILE_FREQUENCY=250 LD_PRELOAD=$LIBPROFILER ./split 1.0 >/dev/null ||
	fail "split under libprofiler.so failed"

# pv_rows ARGS...: "name self cum" of split's own functions in profview --flat.
FUNCS="hot_work cold_work cpu_seconds main"
pv_rows() {
	"$PROFVIEW" --flat "$@" | awk -v want=" $FUNCS " 'go && index(want, " " $6 " ") { print $6, $1, $3 }
		/^ +self / { go = 1 }' | sort
}
pv_total() {
	"$PROFVIEW" --tree "$@" | sed -n 's/.* in \([0-9]*\) samples.*/\1/p' | head -1
}

"$PROFVIEW" --flat ./split a.prof >flat.txt || fail "profview --flat ./split a.prof failed"
cat flat.txt
pv_rows ./split a.prof >pv.txt
grep -q '^hot_work ' pv.txt || fail "hot_work is not in profview's reading"
hot=$(flat_self flat.txt hot_work)
cold=$(flat_self flat.txt cold_work)
note "hot_work $hot, cold_work $cold samples"
# Binomial, as in split.sh: 5 sigma (6e-7 of the runs fail by chance) plus
# 0.02 for the program's own split (0.740 of its time in hot_work): 0.75 +-
# 0.107 with 620 samples.
within_sigma "$hot" $((hot + cold)) 0.75 5 0.02 || fail "hot share $hot/$((hot + cold)) is not 0.75 within 5 sigma"

# google-pprof (perl) on the same file: the same counts.
if command -v google-pprof >/dev/null; then
	google-pprof --text ./split a.prof 2>/dev/null >gp.txt || fail "google-pprof --text failed"
	awk -v want=" $FUNCS " 'NF >= 6 && index(want, " " $6 " ") { print $6, $1, $4 }' gp.txt | sort >gp-rows.txt
	diff gp-rows.txt pv.txt || fail "google-pprof --text and profview --flat differ"
	gp_total=$(sed -n 's/^Total: \([0-9]*\) samples/\1/p' gp.txt)
	[ "$gp_total" = "$(pv_total ./split a.prof)" ] || fail "google-pprof total $gp_total is not profview's"
	note "google-pprof --text and profview agree: $(tr '\n' ',' <pv.txt) of $gp_total samples"
fi

# The program found through the profile's memory map: the same.
pv_rows a.prof >pv-maps.txt
diff pv.txt pv-maps.txt || fail "without the program argument profview reads a.prof differently"

# The Go pprof: the same counts, on one run and on two merged.
PPROF=
if command -v go >/dev/null && [ -d /usr/share/gocode/src/github.com/google/pprof ]; then
	PPROF=$("$SRCDIR/scripts/install-pprof" "$WORK/tools") || fail "cannot build pprof"
fi
if [ -n "$PPROF" ]; then
	go_rows() {
		"$PPROF" -top -sample_index=samples -nodecount=1000000 -nodefraction=0 -edgefraction=0 "$@" 2>/dev/null |
			awk -v want=" $FUNCS " 'go && index(want, " " $6 " ") { print $6, $1, $4 } /^ *flat  flat%/ { go = 1 }' | sort
	}
	go_rows ./split a.prof >go.txt
	diff go.txt pv.txt || fail "pprof -top and profview --flat differ on a.prof"
	go_rows ./split a.prof b.prof >go2.txt
	pv_rows ./split a.prof b.prof >pv2.txt
	diff go2.txt pv2.txt || fail "pprof -top and profview --flat differ on a.prof + b.prof"
	note "pprof -top and profview agree on two merged runs: $(tr '\n' ',' <pv2.txt)"
	# pprof's conversion of the file to profile.proto reads the same.
	"$PPROF" -proto ./split a.prof >conv.pb.gz 2>/dev/null || fail "pprof -proto failed"
	pv_rows conv.pb.gz >pv-conv.txt
	diff pv.txt pv-conv.txt || fail "profview reads pprof's -proto conversion differently"
	# And what profview writes from it, pprof reads the same again.
	"$PROFVIEW" --pprof -o ours.pb.gz ./split a.prof || fail "profview --pprof ./split a.prof failed"
	"$PPROF" -top -sample_index=samples -symbolize=none -nodecount=1000000 -nodefraction=0 \
		-edgefraction=0 ours.pb.gz 2>/dev/null |
		awk -v want=" $FUNCS " 'go && index(want, " " $6 " ") { print $6, $1, $4 } /^ *flat  flat%/ { go = 1 }' |
		sort >go-ours.txt
	diff pv.txt go-ours.txt || fail "pprof reads profview's --pprof copy of a.prof differently"
else
	note "no Go toolchain: pprof comparisons skipped"
fi

# Merged runs add up.
a_hot=$(pv_rows ./split a.prof | awk '$1 == "hot_work" { print $2 }')
b_hot=$(pv_rows ./split b.prof | awk '$1 == "hot_work" { print $2 }')
ab_hot=$(pv_rows ./split a.prof b.prof | awk '$1 == "hot_work" { print $2 }')
[ "$ab_hot" -eq $((a_hot + b_hot)) ] || fail "merged hot_work $ab_hot is not $a_hot + $b_hot"

# The same profile with big-endian words reads the same.
perl -e 'local $/; my $d = <STDIN>; my $i = 0; my $out = "";
	my @w;
	while (1) { my $x = unpack("Q<", substr($d, $i, 8)); push @w, $x; $i += 8;
		last if @w >= 5 + 3 && $w[-3] == 0 && $w[-2] == 1 && $w[-1] == 0 && scalar(@w) > 5 && check(@w); }
	sub check { my @v = @_; my $k = 5; while ($k < @v) { my $n = $v[$k + 1]; return 1 if $v[$k] == 0 && $n == 1 && $k + 3 == @v; $k += 2 + $n; } return 0 }
	print pack("Q>*", @w), substr($d, $i);' <a.prof >a-be.prof || fail "cannot rewrite a.prof big-endian"
pv_rows ./split a-be.prof >pv-be.txt
diff pv.txt pv-be.txt || fail "the big-endian copy of a.prof reads differently"

# A wrong header: one line, with where.
cp a.prof badver.prof
printf '\002' | dd of=badver.prof bs=1 seek=16 conv=notrunc 2>/dev/null
set +e
"$PROFVIEW" --flat ./split badver.prof >/dev/null 2>err.txt
st=$?
set -e
[ "$st" -eq 1 ] || fail "a wrong gperftools header exited $st"
[ "$(wc -l <err.txt)" -eq 1 ] || fail "a wrong gperftools header gave more than one line: $(cat err.txt)"
grep -q "'badver.prof': gperftools profile header at byte 16: format version 2" err.txt ||
	fail "wrong header message: $(cat err.txt)"
note "$(cat err.txt)"
head -c 100 a.prof >cut.prof
set +e
"$PROFVIEW" --flat cut.prof >/dev/null 2>err.txt
st=$?
set -e
[ "$st" -eq 1 ] && grep -q "'cut.prof': gperftools profile is cut off at byte" err.txt ||
	fail "a cut gperftools profile: exit $st, $(cat err.txt)"
note "$(cat err.txt)"
exit 0
