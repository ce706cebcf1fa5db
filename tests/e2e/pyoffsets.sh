#!/usr/bin/env bash
# The offsets into CPython's structures read from the interpreter's debug
# information (collect-timer), with pyenv's CPython 3.9 to 3.13 (built
# with debug information), Debian's /usr/bin/python3.11 (without) and
# its debug build /usr/bin/python3.11d (python3.11-dbg, with):
#   - each interpreter with debug information: the offsets read from it
#     and the collector's table of its version (and 3.13's
#     _Py_DebugOffsets) the same, field by field
#     (PROFVIEW_TEST_PYCOMPARE=1 has the collector compare them);
#   - 3.11 with the tables off (PROFVIEW_TEST_PYTABLES=0): the samples
#     of pywork.py's three functions against the CPU time the program
#     measured of each within 5 binomial sigmas (plus 1%; each check
#     fails by chance less than once in 10^6), every stack through
#     deep_leaf has its 50 frames of rec; profview's header says
#     "python 3.11.N: frames read (offsets from its debug information)";
#   - an interpreter without debug information, tables off: its frames
#     not read, said once in the summary, its native profile kept;
#   - debug files that are not the interpreter's (PROFVIEW_TEST_PYDWARF:
#     the libpython of another version; a truncated copy of its own; one
#     of another version given the interpreter's build-id): never read,
#     the table used instead (the 50 frames of rec right, the header says
#     so), and with the tables off the frames not read.
# An interpreter the machine does not have is skipped, and said.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"
WORKPY="$SRCDIR/tests/progs/pywork.py"

# has_debug FILE: does the ELF file have a .debug_info section?
has_debug() {
	readelf -S "$1" 2>/dev/null | grep -q '\.debug_info'
}

# the file of a pyenv interpreter that defines _PyRuntime: its libpython
# when shared, else the program
pyobj() {
	local d=${1%/bin/*}
	ls "$d"/lib/libpython3.*.so.1.0 2>/dev/null | head -1 || true
}

# deep_right RAW LABEL: every stack through deep_leaf has 50 frames of rec
deep_right() {
	"$PROFVIEW" -q --folded "$1" >deep.txt
	grep -q 'deep_leaf' deep.txt || fail "$2: no deep_leaf: $(head -3 deep.txt)"
	awk 'BEGIN { for (i = 0; i < 50; i++) want = want ";rec"; want = want ";deep_leaf" }
		/deep_leaf/ { c = gsub(/;rec/, ";rec"); if (c != 50 || !index($0, want)) { bad = 1; exit } }
		END { exit bad }' deep.txt || fail "$2: a stack through deep_leaf without its 50 rec: $(grep deep_leaf deep.txt | head -2 | cut -c1-300)"
}

# header_says RAW TEXT LABEL
header_says() {
	"$PROFVIEW" --flat "$1" 2>&1 | head -12 >head.txt
	grep -qF "$2" head.txt || fail "$3: profview's header does not say \"$2\": $(cat head.txt)"
}

# 1. debug information and the tables agree, field by field
n=0
for py in /root/.pyenv/versions/3.9.*/bin/python3.9 /root/.pyenv/versions/3.1[0-3].*/bin/python3.1[0-3] \
	/usr/bin/python3.9d /usr/bin/python3.1[0-3]d; do
	if [ ! -x "$py" ]; then
		case $py in */usr/bin/*) note "SKIP: no $py" ;; esac
		continue
	fi
	obj=$(pyobj "$py")
	[ -n "$obj" ] || obj=$py
	if ! has_debug "$obj"; then
		note "SKIP: $obj has no debug information"
		continue
	fi
	n=$((n + 1))
	PROFVIEW_TEST_PYCOMPARE=1 "$COLLECT_TIMER" -o c.raw "$py" -c pass >/dev/null 2>c.err ||
		fail "$py: collect-timer failed: $(cat c.err)"
	if grep 'python offsets: [a-z_]*: debug information' c.err; then
		fail "$py: the debug information and the table differ (above)"
	fi
	same=$(sed -n 's/.*python offsets: debug information and the table: \([0-9]*\) of \([0-9]*\) fields the same/\1 \2/p' c.err)
	set -- $same
	[ -n "$same" ] && [ "$1" = "$2" ] && [ "$1" -ge 20 ] ||
		fail "$py: the offsets of the debug information against the table: $(cat c.err)"
	case $py in
	*3.13) grep -q "debug information and _Py_DebugOffsets: $2 of $2 fields the same" c.err ||
		fail "$py: against _Py_DebugOffsets: $(cat c.err)" ;;
	esac
	note "$py: the $1 offsets of its debug information are the table's"
done
[ "$n" -gt 0 ] || { echo "SKIP: no pyenv CPython 3.9 to 3.13 with debug information on this machine" >&2; exit 77; }

# 2. 3.11 without the tables: the offsets from the debug information
py=$(ls /root/.pyenv/versions/3.11.*/bin/python3.11 2>/dev/null | head -1 || true)
if [ -n "$py" ] && has_debug "$(pyobj "$py")"; then
	label="$py, tables off"
	PROFVIEW_TEST_PYTABLES=0 "$COLLECT_TIMER" -q -o s.raw "$py" "$WORKPY" shares 2 >truth.txt ||
		fail "$label: pywork.py shares failed"
	"$PROFVIEW" -q --flat s.raw >flat.txt
	sum=$(awk '$1 == "truth" { s += $3 } END { print s }' truth.txt)
	total=0
	for f in Parser.parse 'outer.<locals>.inner' spin; do
		total=$((total + $(flat_cum flat.txt "$f")))
	done
	[ "$total" -ge 200 ] || fail "$label: $total samples in the three functions: $(head -12 flat.txt)"
	for f in Parser.parse 'outer.<locals>.inner' spin; do
		k=$(flat_cum flat.txt "$f")
		t=$(awk -v f="$f" -v s="$sum" '$1 == "truth" && $2 == f { print $3 / s }' truth.txt)
		within_sigma "$k" "$total" "$t" 5 ||
			fail "$label: $f has $k of $total samples, its CPU time a share of $t: $(head -14 flat.txt)"
		note "$label: $f $k/$total samples, truth $t"
	done
	header_says s.raw "frames read (offsets from its debug information)" "$label"
	PROFVIEW_TEST_PYTABLES=0 "$COLLECT_TIMER" -q -o d.raw "$py" "$WORKPY" deep 0.3 ||
		fail "$label: pywork.py deep failed"
	deep_right d.raw "$label"
else
	note "SKIP: no pyenv CPython 3.11 with debug information"
fi

# 3. an interpreter without debug information, tables off: not read, said once
if [ -x /usr/bin/python3.11 ] && ! has_debug /usr/bin/python3.11 &&
	[ ! -e "/usr/lib/debug/.build-id/$(readelf -n /usr/bin/python3.11 | sed -n 's/.*Build ID: \(..\).*/\1/p')" ]; then
	PROFVIEW_TEST_PYTABLES=0 "$COLLECT_TIMER" -o n.raw /usr/bin/python3.11 "$WORKPY" deep 0.3 >/dev/null 2>n.err ||
		fail "/usr/bin/python3.11, tables off: pywork.py failed"
	[ "$(grep -c 'python 3.11: its frames are not read' n.err)" = 1 ] ||
		fail "/usr/bin/python3.11, tables off: not said once that its frames are not read: $(cat n.err)"
	"$PROFVIEW" -q --folded n.raw >n.txt
	[ -s n.txt ] && ! grep -q 'deep_leaf\|\[python' n.txt ||
		fail "/usr/bin/python3.11, tables off: the native profile: $(head -2 n.txt)"
	header_says n.raw "python 3.11: its frames are not read" "/usr/bin/python3.11, tables off"
else
	note "SKIP: no /usr/bin/python3.11 without debug information"
fi

# 4. debug files not the interpreter's: the table, or not read
py=$(ls /root/.pyenv/versions/3.11.*/bin/python3.11 2>/dev/null | head -1 || true)
other=$(ls /root/.pyenv/versions/3.12.*/lib/libpython3.12.so.1.0 2>/dev/null | head -1 || true)
if [ -n "$py" ] && [ -n "$other" ] && has_debug "$(pyobj "$py")" && has_debug "$other"; then
	obj=$(pyobj "$py")
	size=$(stat -c %s "$obj")
	head -c $((size / 2)) "$obj" >truncated.so
	bad=("$other" "$WORK/truncated.so")
	# 3.12's, with the build-id of 3.11's libpython (the note's bytes)
	if objcopy -O binary --only-section=.note.gnu.build-id "$obj" id311.bin 2>/dev/null &&
		objcopy --update-section .note.gnu.build-id=id311.bin "$other" forged.so 2>/dev/null &&
		[ "$(readelf -n forged.so | grep 'Build ID')" = "$(readelf -n "$obj" | grep 'Build ID')" ]; then
		bad+=("$WORK/forged.so")
	else
		note "SKIP: a debug file of 3.12 with 3.11's build-id: objcopy could not make it"
	fi
	for f in "${bad[@]}"; do
		label="$py, debug information from $(basename "$f")"
		PROFVIEW_TEST_PYDWARF=$f "$COLLECT_TIMER" -q -o t.raw "$py" "$WORKPY" deep 0.3 ||
			fail "$label: pywork.py deep failed"
		deep_right t.raw "$label"
		header_says t.raw "frames read (offsets from the collector's table of its version)" "$label"
		PROFVIEW_TEST_PYDWARF=$f PROFVIEW_TEST_PYTABLES=0 "$COLLECT_TIMER" -o u.raw "$py" "$WORKPY" deep 0.3 \
			>/dev/null 2>u.err || fail "$label, tables off: pywork.py deep failed"
		[ "$(grep -c 'python 3.11: its frames are not read' u.err)" = 1 ] ||
			fail "$label, tables off: not said once that its frames are not read: $(cat u.err)"
		"$PROFVIEW" -q --folded u.raw | grep -q 'deep_leaf\|\[python' &&
			fail "$label, tables off: Python frames read"
		note "$label: not read"
	done
else
	note "SKIP: no pyenv CPython 3.11 and 3.12 with debug information"
fi
exit 0
