#!/usr/bin/env bash
# Frame pointers at -O2: a leaf with no frame of its own must still show
# its caller (the analyzer checks the leaf's CFI and takes the return
# address from the stack pointer), and a leaf with a frame must not get a
# made-up extra caller.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

"$CC" -O2 -g -fno-omit-frame-pointer -o "$WORK/leafchain" "$SRCDIR/tests/progs/leafchain.c" ||
	fail "cannot compile leafchain.c"
cd "$WORK"
"$COLLECT_TIMER" -q --unwind=fp -o leaf.raw ./leafchain 1.5 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --tree leaf.raw >tree.txt || fail "profview failed"
cat tree.txt

# chain FUNCTION...: the tree has these functions each the child of the one
# before (by indentation), at least once.
chain() {
	awk -v want="$*" '
	BEGIN { n = split(want, w, " ") }
	/  function  location/ { next }
	{
		# the name is the first field after the 4 numeric columns
		line = $0; sub(/^ *[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+  /, "", line)
		match(line, /^ */); depth = RLENGTH / 2
		split(substr(line, RLENGTH + 1), parts, "  "); name = parts[1]
		stack[depth] = name
		if (name == w[n] && depth >= n - 1) {
			ok = 1
			for (i = 1; i < n; i++) if (stack[depth - n + i] != w[i]) ok = 0
			if (ok) found = 1
		}
	}
	END { exit !found }' tree.txt
}
chain main outer_call middle_call leaf_spin || fail "leaf_spin is not under main > outer_call > middle_call"
chain main outer_call middle_call framed_leaf || fail "framed_leaf is not under main > outer_call > middle_call"
# Nothing skips middle_call: leaf_spin never sits right under outer_call.
chain outer_call leaf_spin && fail "leaf_spin appears right under outer_call: its caller was skipped"
chain middle_call middle_call && fail "middle_call appears twice in a row"
# Almost all samples go through the full chain.
total=$(awk '/^ *[0-9]+ .* main  /{ print $1; exit }' tree.txt)
mid=$(awk '/^ *[0-9]+ .* middle_call  /{ s += $1 } END { print s + 0 }' tree.txt)
note "main $total samples, middle_call $mid"
awk -v m="$mid" -v t="$total" 'BEGIN { exit !(t > 0 && m / t >= 0.97) }' || fail "only $mid of $total samples pass through middle_call"
exit 0
