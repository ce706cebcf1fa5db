#!/usr/bin/env bash
# profview --pprof writes a profile.proto that the real pprof reads with the
# same numbers: `pprof -top` against `profview --flat` and `pprof -traces`
# against the call tree (`profview --folded`), exactly, on a collect-timer
# trace and on a CPU profile the Go runtime wrote.  Then bad input.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

# The Go pprof, built offline from Debian's sources (scripts/test installs
# them), for the part "go" (the test pprof-go), which skips without it.
PPROF=
if [ "$PART" = go ]; then
	part_needs go go "pprof's own reading is not compared (Debian packages golang-go, golang-github-google-pprof-dev)"
	[ -d /usr/share/gocode/src/github.com/google/pprof ] ||
		{ echo "SKIP: Debian's pprof sources (golang-github-google-pprof-dev) are not installed" >&2; exit 77; }
	PPROF=$("$SRCDIR/scripts/install-pprof" "$WORK/tools") || fail "cannot build pprof"
fi

# top_of FILE...: "name flat cum" per function, from pprof -top in samples.
top_of() {
	"$PPROF" -top -sample_index=samples -symbolize=none -nodecount=1000000 -nodefraction=0 \
		-edgefraction=0 "$@" 2>/dev/null |
		awk 'go { name = $6; for (i = 7; i <= NF; i++) name = name " " $i
			  # pprof marks a function seen only as an inlined frame
			  sub(/ \(inline\)$/, "", name); print name, $1, $4 }
		     /^ *flat  flat%/ { go = 1 }' | sort
}

# flat_of ARGS...: the same from profview --flat (names seen once only; see
# same_top); a kernel frame's "[k] " mark is profview's, not the name's.
flat_of() {
	"$PROFVIEW" --flat "$@" |
		awk 'go && NF >= 6 { n = $6 == "[k]" ? $7 : $6; print n, $1, $3 } /^ +self / { go = 1 }' | sort
}

# folded_of_traces FILE: pprof -traces as folded stacks, summed.  pprof
# marks some inlined frames " (inline)" (a function inlined into another of
# the same name); profview's folded stacks do not.
folded_of_traces() {
	"$PPROF" -traces -sample_index=samples -symbolize=none "$1" 2>/dev/null | awk '
	function flush() {
		if (n) {
			for (i = 1; i <= n; i++) sub(/ \(inline\)$/, "", f[i])
			s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; sum[s] += v
		}
		n = 0
	}
	/^-+\+-+$/ { flush(); go = 1; next }
	!go { next }
	/^ *[0-9]+   / { flush(); v = $1; sub(/^ *[0-9]+   /, ""); f[++n] = $0; next }
	/^             [^ ]/ && n { sub(/^ +/, ""); f[++n] = $0; next }
	END { flush(); for (s in sum) print s, sum[s] }' | sort
}

# same_top PPROF_TOP PROFVIEW_FLAT WHAT: every function pprof lists, with
# the same self and cumulative samples, and no other.
same_top() {
	local dup
	# pprof sums functions of the same name: compare those profview shows once.
	dup=$(awk '{ print $1 }' "$2" | sort | uniq -d | tr '\n' ' ')
	[ -z "$dup" ] || note "$3: names seen twice, left out: $dup"
	awk -v d=" $dup " 'index(d, " " $1 " ") == 0' "$1" >a.cmp
	awk -v d=" $dup " 'index(d, " " $1 " ") == 0' "$2" >b.cmp
	[ -s a.cmp ] || fail "$3: pprof -top shows nothing"
	diff a.cmp b.cmp >diff.txt || { cat diff.txt; fail "$3: pprof -top and profview --flat differ"; }
	note "$3: pprof -top and profview --flat agree on $(wc -l <a.cmp) functions"
}

build demo
"$COLLECT_TIMER" -q -o demo.raw ./demo >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --pprof -o demo.pb.gz demo.raw || fail "profview --pprof failed"
[ "$(head -c 2 demo.pb.gz | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "--pprof output is not gzip"
"$PROFVIEW" --pprof demo.raw >stdout.pb.gz || fail "profview --pprof to standard output failed"
cmp -s demo.pb.gz stdout.pb.gz || fail "--pprof output differs between -o and standard output"

# Read back by profview: the same flat profile and tree as the trace.
# (The trace's warnings about how it was taken, such as a sample whose
# stack was cut now and then, and what the collector cost, are not part
# of a pprof profile; nor is that its threads' CPU time is exact, which
# makes the trace's ± the smaller, binomial one: the flat profile is
# compared without it.)
"$PROFVIEW" --flat demo.raw | sed '1,2d; /^warning: /d; /^collector: /d' | awk '{ $5 = ""; print }' >flat-raw.txt
"$PROFVIEW" --flat demo.pb.gz | sed '1,2d; /^warning: /d; /^collector: /d' | awk '{ $5 = ""; print }' >flat-pb.txt
diff flat-raw.txt flat-pb.txt || fail "profview reads its pprof output differently from the trace"
"$PROFVIEW" --folded --sample-index=samples demo.raw | sort >folded.txt
"$PROFVIEW" --folded --sample-index=samples demo.pb.gz | sort >folded-pb.txt
diff folded.txt folded-pb.txt || fail "the tree of the pprof output differs from the trace's"

# Several inputs are one profile: each stack counted twice.
"$PROFVIEW" --folded --sample-index=samples demo.raw demo.pb.gz | sort >twice.txt
awk '{ n = $NF; sub(/ [0-9]+$/, ""); print $0, 2 * n }' folded.txt | sort >twice-want.txt
diff twice-want.txt twice.txt || fail "two inputs are not merged into one profile"

# Bad input: one line saying what and where, exit status 1.
# bad PATTERN FILE: profview FILE fails so.
bad() {
	local st
	set +e
	"$PROFVIEW" --flat "$2" >/dev/null 2>err.txt
	st=$?
	set -e
	[ "$st" -eq 1 ] || fail "profview on $2 exited $st, not 1: $(cat err.txt)"
	[ "$(wc -l <err.txt)" -eq 1 ] || fail "profview on $2 said more than one line: $(cat err.txt)"
	grep -Eq -- "$1" err.txt || fail "profview on $2 does not say /$1/: $(cat err.txt)"
	note "$(cat err.txt)"
}
gzip -dc demo.pb.gz >demo.pb
size=$(wc -c <demo.pb)
# Cut the profile at 24 places from its middle on: every cut is one error
# line and exit 1; a cut inside a field says where and that the file is cut
# off.  (A cut between two fields still parses, since protobuf has no end
# marker: then what went missing is named instead.)
cutoff=0
for i in $(seq 0 23); do
	head -c $((size / 2 + i)) demo.pb >cut.pb
	bad "'cut.pb': " cut.pb
	if grep -Eq "'cut.pb': corrupt profile.proto at byte [0-9]+: .*cut off" err.txt; then
		cutoff=$((cutoff + 1))
		cp cut.pb midfield.pb
	fi
done
[ "$cutoff" -ge 12 ] || fail "only $cutoff of 24 cut profiles were reported as cut off"
{ cat demo.pb; printf '\007'; } >junk.pb
bad "'junk.pb': corrupt profile.proto at byte $size: field number 0" junk.pb
head -c $(($(wc -c <demo.pb.gz) - 20)) demo.pb.gz >cut.pb.gz
bad "'cut.pb.gz': gzip data ends early at byte [0-9]+" cut.pb.gz
gzip -c midfield.pb >inner-cut.pb.gz
bad "'inner-cut.pb.gz': corrupt profile.proto at byte [0-9]+ of the decompressed data" inner-cut.pb.gz
printf 'main;f 3\nmain;g\n' >nocount.folded
bad "'nocount.folded': line 2: no count after the stack" nocount.folded

# The part "go": the real pprof reads the same numbers.
part_starts go

# pprof agrees with profview.
top_of demo.pb.gz >top.txt
flat_of demo.raw >flat.txt
same_top top.txt flat.txt "collect-timer trace"
folded_of_traces demo.pb.gz >traces.txt
# profview marks kernel frames _[k] in folded stacks, pprof does not.
sed 's/_\[k\]//g' folded.txt | sort >folded-names.txt
diff folded-names.txt traces.txt >diff.txt || { cat diff.txt; fail "pprof -traces and profview's tree differ"; }
note "pprof -traces and the tree agree on $(wc -l <traces.txt) stacks"
# The threads are labels pprof knows.
"$PPROF" -tags -symbolize=none demo.pb.gz 2>/dev/null >tags.txt
for t in worker-1 worker-2 demo; do
	grep -q "$t" tags.txt || fail "thread '$t' is not a thread_name label: $(cat tags.txt)"
done
"$PPROF" -raw -symbolize=none demo.pb.gz 2>/dev/null >raw.txt
grep -q 'Period: 4000000' raw.txt || fail "the period is not 4 ms: $(head raw.txt)"
grep -q 'samples/count cpu/nanoseconds' raw.txt || fail "sample types are not samples/count, cpu/nanoseconds"
# The CPU values add up to what profview says.
cpu_pprof=$("$PPROF" -top -sample_index=cpu -unit=ms -symbolize=none demo.pb.gz 2>/dev/null |
	sed -n 's/.*Total samples = \([0-9.]*\)ms.*/\1/p')
cpu_pv=$("$PROFVIEW" --tree demo.raw | sed -n 's/.*CPU \([0-9.]*\) s[ (].*/\1/p' | head -1)
awk -v a="$cpu_pprof" -v b="$cpu_pv" 'BEGIN { exit !(a > 0 && (a / 1000 - b) ^ 2 < 0.01 ^ 2) }' ||
	fail "pprof's CPU total ${cpu_pprof}ms is not profview's ${cpu_pv}s"

# A CPU profile the Go runtime wrote: profview reads pprof's numbers, and
# what profview writes from it pprof reads the same again.
cp "$SRCDIR/tests/progs/gospin.go" .
GO111MODULE=off GOPATH="$WORK/gopath" GOCACHE="$WORK/tools/gocache" GOFLAGS= GOPROXY=off \
	go build -o gospin gospin.go || fail "cannot build gospin.go"
./gospin go.prof 1.5 || fail "gospin failed"
top_of go.prof >go-top.txt
flat_of go.prof >go-flat.txt
same_top go-top.txt go-flat.txt "Go CPU profile"
grep -q '^main.hotWork ' go-flat.txt || fail "main.hotWork is not in the Go profile"
"$PROFVIEW" --pprof -o go2.pb.gz go.prof || fail "profview --pprof of a Go profile failed"
top_of go2.pb.gz >go2-top.txt
diff go-top.txt go2-top.txt || fail "pprof reads profview's copy of the Go profile differently"
folded_of_traces go.prof >go-traces.txt
"$PROFVIEW" --folded --sample-index=samples go.prof | sort >go-folded.txt
diff go-traces.txt go-folded.txt || fail "pprof -traces and profview's tree differ on the Go profile"

# pprof's own -proto output of our file reads the same.
"$PPROF" -proto -symbolize=none demo.pb.gz >again.pb.gz 2>/dev/null || fail "pprof -proto failed"
"$PROFVIEW" --flat again.pb.gz | sed 1,2d | awk '{ $5 = ""; print }' >flat-again.txt
diff flat-pb.txt flat-again.txt || fail "profview reads pprof's re-encoding differently"

# Merging profiles of different kinds is refused, clearly.
printf 'main;f 3\n' >f.folded
set +e
"$PROFVIEW" --flat demo.pb.gz f.folded >/dev/null 2>err.txt
st=$?
set -e
[ "$st" -eq 1 ] || fail "merging a CPU profile with folded stacks exited $st"
grep -q "cannot merge 'f.folded'" err.txt || fail "merge error: $(cat err.txt)"
exit 0
