#!/usr/bin/env bash
# Inputs written to cost memory: a small gzip file holding millions of
# empty or repeated records, folded stacks of a million distinct names.
# Each is read in the memory profview(1) promises (LIMITS): the input and
# its decompressed data, and for the profile at most --max-input (or the
# input's size, when larger) and 16 MiB more; repeated records are counted,
# not stored one by one.  The peak is the kernel's count (getrusage).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

# Under AddressSanitizer memory is not what it costs.
if grep -q __asan_init "$PROFVIEW"; then
	note "profview is built with AddressSanitizer: memory is not measured"
	exit 77
fi

LIMIT_MIB=32
# peak FILE ARGS...: run profview ARGS under maxrss; the peak in KiB is
# written to FILE, the status to $st.
peak() {
	local out=$1
	shift
	st=0
	"$MAXRSS" "$out" "$PROFVIEW" "$@" >run.out 2>run.err || st=$?
	[ "$st" -le 1 ] || fail "profview $* exited $st: $(cat run.err)"
}

# repeat FILE N: FILE doubled N times over.
repeat() {
	for _ in $(seq "$2"); do
		cat "$1" "$1" >rep.tmp
		mv rep.tmp "$1"
	done
}

# What profview takes with nothing to read.
printf 'main;f 1\n' >tiny.folded
peak base.kib --flat --max-input=${LIMIT_MIB}M tiny.folded
base=$(cat base.kib)

# check NAME INPUT_BYTES: the peak of the last run within the base, the
# input (and its decompressed data: INPUT_BYTES), the profile's
# budget, and 32 MiB for what a report and the allocator add.
check() {
	local rss budget bound
	rss=$(cat "$1.kib")
	budget=$(( (LIMIT_MIB + 16) * 1024 ))
	bound=$((base + $2 / 1024 + budget + 32 * 1024))
	[ "$rss" -le "$bound" ] ||
		fail "$1: profview held $((rss / 1024)) MiB at its peak, more than the $((bound / 1024)) MiB allowed: $(cat run.err)"
	note "$1: $((rss / 1024)) MiB at the peak (at most $((bound / 1024)) MiB): $(head -c 200 run.err)"
}

# profile.proto, by hand: field numbers and wire types of profile.proto.
# A profile of one function, then 4 Mi samples of it, each 6 bytes:
# {location_id 1, value 1}.
{
	printf '\x0a\x04\x08\x01\x10\x02'                  # sample_type {type 1, unit 2}
	printf '\x32\x00\x32\x07samples\x32\x05count\x32\x04main' # string_table
	printf '\x2a\x04\x08\x01\x10\x03'                  # function {id 1, name 3}
	printf '\x22\x06\x08\x01\x22\x02\x08\x01'          # location {id 1, line {function_id 1}}
} >head.pb
printf '\x12\x04\x08\x01\x10\x01' >samples.pb
repeat samples.pb 22
cat head.pb samples.pb | gzip -c >same.pb.gz
rm samples.pb
peak same.kib --flat --max-input=${LIMIT_MIB}M same.pb.gz
[ "$st" -eq 0 ] || fail "4 Mi identical samples: $(cat run.err)"
grep -qE "(in |profile: )4194304 samples" run.out || fail "4 Mi identical samples: not all counted: $(head -n 5 run.out)"
[ "$(flat_self run.out main)" = 4194304 ] || fail "4 Mi identical samples: $(cat run.out)"
check same $((6 << 22))

# 8 Mi empty samples and no string table: 16 MiB in a gzip file of 16 KiB.
printf '\x12\x00' >empty.pb
repeat empty.pb 23
gzip -c empty.pb >empty.pb.gz
rm empty.pb
peak empty.kib --flat --max-input=${LIMIT_MIB}M empty.pb.gz
[ "$st" -eq 1 ] || fail "8 Mi empty samples exited $st"
grep -qxF "profview: 'empty.pb.gz': the profile has no string table (is the file cut off?)" run.err ||
	fail "8 Mi empty samples: $(cat run.err)"
check empty $((2 << 23))

# 8 Mi empty strings in the string table.
printf '\x32\x00' >strings.pb
repeat strings.pb 23
gzip -c strings.pb >strings.pb.gz
rm strings.pb
peak strings.kib --flat --max-input=${LIMIT_MIB}M strings.pb.gz
check strings $((2 << 23))

# 8 Mi empty locations: refused before anything is unpacked.
printf '\x32\x00\x22\x00' >locs.pb
printf '\x22\x00' >l.pb
repeat l.pb 23
cat l.pb >>locs.pb
gzip -c locs.pb >locs.pb.gz
rm locs.pb l.pb
peak locs.kib --flat --max-input=${LIMIT_MIB}M locs.pb.gz
[ "$st" -eq 1 ] || fail "8 Mi empty locations exited $st"
grep -qF "a location without an id" run.err || fail "8 Mi empty locations: $(cat run.err)"
check locs $((2 << 23))

# 4 Mi locations, all with id 1: unpacked until the budget is spent.
printf '\x22\x02\x08\x01' >i.pb
repeat i.pb 22
{ printf '\x32\x00'; cat i.pb; } | gzip -c >ids.pb.gz
rm i.pb
peak ids.kib --flat --max-input=${LIMIT_MIB}M ids.pb.gz
[ "$st" -eq 1 ] || fail "4 Mi locations of one id exited $st"
grep -qxF "profview: 'ids.pb.gz': the profile needs more than $((LIMIT_MIB + 16)) MiB of memory; stopped reading (raise the limit with --max-memory)" run.err ||
	fail "4 Mi locations of one id: $(cat run.err)"
check ids $((4 << 22))

# A million and a half distinct folded stacks, 14 MB: a function, a
# location and a name each, refused when they pass the budget.
awk 'BEGIN { for (i = 0; i < 1500000; i++) printf "f%x 1\n", i }' >distinct.folded
size=$(stat -c %s distinct.folded)
peak distinct.kib --flat --max-input=${LIMIT_MIB}M distinct.folded
[ "$st" -eq 1 ] || fail "1.5 M distinct stacks exited $st"
grep -qxF "profview: 'distinct.folded': the profile needs more than $((LIMIT_MIB + 16)) MiB of memory; stopped reading (raise the limit with --max-memory)" run.err ||
	fail "1.5 M distinct stacks: $(cat run.err)"
check distinct "$size"
# a fifteenth of them fit (the budget is what the allocator gave: past
# 131,072 entries the profile's arrays hold room for twice as many)
head -n 100000 distinct.folded >tenth.folded
"$PROFVIEW" --flat --max-input=${LIMIT_MIB}M tenth.folded >tenth.flat 2>run.err ||
	fail "100,000 distinct stacks: $(cat run.err)"
grep -qE "(in |profile: )100000 samples" tenth.flat || fail "100,000 distinct stacks: $(head -n 3 tenth.flat)"
