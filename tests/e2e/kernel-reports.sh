#!/usr/bin/env bash
# Kernel frames through the command line, from folded stacks whose kernel
# frames end in _[k] (FlameGraph's mark):
#   - the tree, the flat profile and the tables mark them [k];
#   - --folded writes them back with _[k], and reading that again gives the
#     same folded stacks;
#   - --hide-kernel gives the kernel's time to the user frame that entered
#     it (a function's self: its own and its kernel callees'), and applies
#     to a comparison too;
#   - the flame graph and the call graph colour them apart (and only them),
#     with hostile names escaped;
#   - --pprof keeps them in a [kernel.kallsyms] mapping, which profview
#     and the Go pprof (when it can be built) read back.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

# 100 samples: read enters the kernel 35 times (30 down to ksys_read, 5
# in unknown kernel code), work computes 55; ksys_read is also a user
# function (3 samples), which must stay apart from the kernel's.
cat >k.folded <<'EOF'
main;do_read;read;entry_SYSCALL_64_[k];do_syscall_64_[k];ksys_read_[k] 30
main;do_read;read;entry_SYSCALL_64_[k];[kernel]_[k] 5
main;do_read 7
main;work 55
main;ksys_read 3
EOF

"$PROFVIEW" --tree k.folded >tree.txt || fail "profview --tree failed"
grep -q '^       30   30.0%      5          \[k\] do_syscall_64$' tree.txt ||
	fail "the tree does not mark do_syscall_64 [k]: $(cat tree.txt)"
grep -q '^        5    5.0%      2          \[k\] \[kernel\]$' tree.txt ||
	fail "the tree does not mark the unknown kernel code: $(cat tree.txt)"
grep -q '^        3    3.0%      2    ksys_read$' tree.txt ||
	fail "the user function ksys_read is not apart from the kernel's: $(cat tree.txt)"
! grep -q '\[k\] \(main\|read\|work\|do_read\)$' tree.txt || fail "a user frame marked [k]: $(cat tree.txt)"

"$PROFVIEW" --flat k.folded >flat.txt || fail "profview --flat failed"
grep -q '^       30  30.0%       30  30.0%      5  \[k\] ksys_read$' flat.txt ||
	fail "the flat profile does not mark the kernel's ksys_read: $(cat flat.txt)"
grep -q '^       55  55.0%       55  55.0%      7      work$' flat.txt ||
	fail "the flat profile's user names do not start where the kernel's do: $(cat flat.txt)"
"$PROFVIEW" --flat -t ';' k.folded >flat.tab || fail "profview --flat -t failed"
grep -q '^30;30.0;30;30.0;5.48;\[k\] ksys_read;$' flat.tab || fail "the flat table does not mark [k]: $(cat flat.tab)"
grep -q '^3;3.0;3;3.0;1.73;ksys_read;$' flat.tab || fail "the flat table marks or pads a user frame: $(cat flat.tab)"
"$PROFVIEW" --tree -t ';' k.folded >tree.tab || fail "profview --tree -t failed"
grep -q ';\[k\] entry_SYSCALL_64;$' tree.tab || fail "the tree table does not mark [k]: $(cat tree.tab)"

# Folded stacks, there and back.
"$PROFVIEW" --folded k.folded >out.folded || fail "profview --folded failed"
grep -qx 'main;do_read;read;entry_SYSCALL_64_\[k\];do_syscall_64_\[k\];ksys_read_\[k\] 30' out.folded ||
	fail "--folded does not end kernel frames in _[k]: $(cat out.folded)"
grep -qx 'main;ksys_read 3' out.folded || fail "--folded marks a user frame: $(cat out.folded)"
"$PROFVIEW" --folded out.folded >again.folded || fail "profview --folded of its own output failed"
diff out.folded again.folded || fail "folded stacks with kernel frames do not read back the same"
sort k.folded >a.sorted
sort out.folded >b.sorted
diff a.sorted b.sorted || fail "--folded of folded stacks with kernel frames is not the input"

# --hide-kernel: read's self is its own (none) and its kernel callees' (35).
"$PROFVIEW" --flat --hide-kernel k.folded >hide.txt || fail "profview --flat --hide-kernel failed"
[ "$(flat_self hide.txt read)" = 35 ] || fail "--hide-kernel: read's self is not 35: $(cat hide.txt)"
[ "$(flat_self hide.txt do_read)" = 7 ] || fail "--hide-kernel: do_read's self is not 7: $(cat hide.txt)"
[ "$(flat_self hide.txt ksys_read)" = 3 ] || fail "--hide-kernel: the user ksys_read changed: $(cat hide.txt)"
! grep -q '\[k\]\|entry_SYSCALL' hide.txt || fail "--hide-kernel left kernel frames: $(cat hide.txt)"
grep -q '^filters: hide-kernel; kept 100 of 100 samples' hide.txt || fail "the header does not say hide-kernel: $(head -4 hide.txt)"
"$PROFVIEW" --folded --hide-kernel k.folded >hide.folded || fail "profview --folded --hide-kernel failed"
grep -qx 'main;do_read;read 35' hide.folded || fail "--hide-kernel --folded: $(cat hide.folded)"
# after the filters: the samples through the kernel's read, their time read's
"$PROFVIEW" --flat --hide-kernel --focus='^ksys_read$' k.folded >hf.txt || fail "profview --hide-kernel --focus failed"
[ "$(flat_self hf.txt read)" = 30 ] || fail "--focus then --hide-kernel: read's self is not 30: $(cat hf.txt)"
[ "$(flat_self hf.txt ksys_read)" = 3 ] || fail "--focus then --hide-kernel: ksys_read's self is not 3: $(cat hf.txt)"

# A comparison: the base spends half as long in the kernel.
sed -e 's/ 30$/ 15/' -e 's/ 55$/ 70/' k.folded >base.folded
"$PROFVIEW" --flat --hide-kernel --diff-base=base.folded k.folded >diff.txt ||
	fail "profview --hide-kernel --diff-base failed"
grep -q '^filters: hide-kernel' diff.txt || fail "a comparison does not say hide-kernel: $(head -5 diff.txt)"
! grep -q '\[k\]' diff.txt || fail "a comparison with --hide-kernel shows kernel frames: $(cat diff.txt)"
grep -q ' read$' diff.txt || fail "a comparison with --hide-kernel has no read: $(cat diff.txt)"

# The pictures: kernel frames apart, only they.
"$PROFVIEW" --flame -o k-flame.svg k.folded || fail "profview --flame failed"
[ "$(grep -c '<g class="f k"><title>\[k\] ' k-flame.svg)" = 4 ] ||
	fail "the flame graph does not draw the 4 kernel frames apart: $(grep -c 'class="f k"' k-flame.svg)"
! grep -q '<g class="f k"><title>\(main\|read\|work\|do_read\|ksys_read\)' k-flame.svg ||
	fail "the flame graph draws a user frame as the kernel's"
"$PROFVIEW" --flame --hide-kernel -o h-flame.svg k.folded || fail "profview --flame --hide-kernel failed"
! grep -q 'class="f k"\|\[k\]' h-flame.svg || fail "the flame graph of --hide-kernel has kernel frames"
"$PROFVIEW" --svg -o k-graph.svg k.folded || fail "profview --svg failed"
[ "$(grep -c '<g id="N[0-9]*" class="node kernel">' k-graph.svg)" = 4 ] ||
	fail "the call graph does not draw the 4 kernel frames apart: $(grep -c 'node kernel' k-graph.svg)"
grep -q '\[k\], rounded, blue: kernel frames' k-graph.svg || fail "the call graph's legend says nothing of kernel frames"
"$PROFVIEW" --svg --hide-kernel -o h-graph.svg k.folded || fail "profview --svg --hide-kernel failed"
! grep -q 'node kernel\|\[k\]' h-graph.svg || fail "the call graph of --hide-kernel has kernel frames"

# Hostile kernel names: escaped everywhere.
printf 'main;evil\033[2J\007<script>&_[k] 5\nmain 1\n' >evil.folded
"$PROFVIEW" --tree evil.folded >evil.txt || fail "profview --tree of a hostile kernel name failed"
grep -q '\[k\] evil^\[\[2J^G<script>&$' evil.txt || fail "the hostile kernel name is not escaped: $(cat -v evil.txt)"
! grep -q "$(printf '\033')" evil.txt || fail "an escape sequence reached the tree"
"$PROFVIEW" --flame -o evil.svg evil.folded || fail "profview --flame of a hostile kernel name failed"
grep -q '<g class="f k"><title>\[k\] evil^\[\[2J^G&lt;script&gt;&amp;' evil.svg ||
	fail "the flame graph does not escape the hostile kernel name"
! grep -q '<script>&' evil.svg || fail "a hostile kernel name reached the flame graph unescaped"
"$PROFVIEW" --svg -o evil-graph.svg evil.folded || fail "profview --svg of a hostile kernel name failed"
! grep -q '<script>&' evil-graph.svg || fail "a hostile kernel name reached the call graph unescaped"

# pprof: the kernel's mapping kept, read back the same.
"$PROFVIEW" --pprof -o k.pb.gz k.folded || fail "profview --pprof failed"
"$PROFVIEW" --folded k.pb.gz >pb.folded || fail "profview cannot read its pprof output"
diff out.folded pb.folded || fail "the pprof output with kernel frames does not read back the same"
if command -v go >/dev/null && [ -d /usr/share/gocode/src/github.com/google/pprof ]; then
	PPROF=$("$SRCDIR/scripts/install-pprof" "$WORK/tools") || fail "cannot build pprof"
	"$PPROF" -raw k.pb.gz >raw.txt 2>&1 || fail "pprof cannot read the profile: $(cat raw.txt)"
	grep -q '^1: .* \[kernel\.kallsyms\] ' raw.txt || fail "pprof sees no [kernel.kallsyms] mapping: $(cat raw.txt)"
	grep -q 'M=1 ksys_read' raw.txt || fail "pprof does not put ksys_read in the kernel mapping: $(cat raw.txt)"
	grep -q '^ *[0-9]*: 0x[0-9a-f]* main ' raw.txt || fail "pprof puts main in a mapping: $(cat raw.txt)"
	"$PPROF" -top -nodecount=100 k.pb.gz >top.txt 2>&1 || fail "pprof -top failed: $(cat top.txt)"
	grep -q ' 35 .* entry_SYSCALL_64$' top.txt || fail "pprof -top: entry_SYSCALL_64 not 35 cum: $(cat top.txt)"
	note "the Go pprof reads the kernel mapping"
else
	note "no Go pprof sources: the real pprof is not tried"
fi
exit 0
