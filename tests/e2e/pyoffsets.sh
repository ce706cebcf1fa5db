#!/usr/bin/env bash
# The offsets into CPython's structures read from the interpreter's debug
# information (collect-timer), with pyenv's CPython 3.9 to 3.13 (built
# with debug information) and Debian's debug build /usr/bin/python3.11d
# (python3.11-dbg, with its own):
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
#   - an interpreter without debug information (a copy of pyenv's
#     libpython 3.11 stripped of it), tables off: its frames not read,
#     said once in the summary, its native profile kept; tables on:
#     read with the table, libdw not loaded in the process;
#   - debug files that are not the interpreter's (PROFVIEW_TEST_PYDWARF:
#     the libpython of another version; a truncated copy of its own; one
#     of another version given the interpreter's build-id): never read,
#     the table used instead (the 50 frames of rec right, the header says
#     so), and with the tables off the frames not read;
#   - the cache of the offsets read ($XDG_CACHE_HOME/profview): made,
#     mode 0600, at the first start, used at the next (the frames right
#     with the tables off); damaged, cut short, of mode 0644 or a symbolic
#     link: not trusted (read again), a link not written through;
#     PROFVIEW_CACHE=off: nothing written.
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

# 3. an interpreter without debug information, tables off: not read,
# said once, and libdw not loaded (a copy of pyenv's libpython 3.11
# without its DWARF, found before the original through LD_LIBRARY_PATH)
py=$(ls /root/.pyenv/versions/3.11.*/bin/python3.11 2>/dev/null | head -1 || true)
if [ -n "$py" ] && [ -n "$(pyobj "$py")" ]; then
	label="$py with a libpython without debug information, tables off"
	mkdir -p nodebug
	strip --strip-debug -o nodebug/"$(basename "$(pyobj "$py")")" "$(pyobj "$py")" ||
		fail "cannot strip a copy of $(pyobj "$py")"
	! has_debug nodebug/"$(basename "$(pyobj "$py")")" || fail "strip left the DWARF"
	# (the same build-id as the original's: the cache of the offsets read
	# from that one, left alone, would hold them)
	export PROFVIEW_CACHE=off
	LD_LIBRARY_PATH=$WORK/nodebug PROFVIEW_TEST_PYTABLES=0 "$COLLECT_TIMER" -o n.raw "$py" "$WORKPY" deep 0.3 \
		>/dev/null 2>n.err || fail "$label: pywork.py failed"
	[ "$(grep -c 'python 3.11: its frames are not read' n.err)" = 1 ] ||
		fail "$label: not said once that its frames are not read: $(cat n.err)"
	"$PROFVIEW" -q --folded n.raw >n.txt
	[ -s n.txt ] && ! grep -q 'deep_leaf\|\[python' n.txt || fail "$label: the native profile: $(head -2 n.txt)"
	header_says n.raw "python 3.11: its frames are not read" "$label"
	# (the tables on: read with the table, libdw not loaded)
	LD_LIBRARY_PATH=$WORK/nodebug "$COLLECT_TIMER" -q -o m.raw "$py" -c \
		"print(sum('libdw' in l for l in open('/proc/self/maps')))" >maps.txt || fail "$label: python -c failed"
	[ "$(cat maps.txt)" = 0 ] || fail "$label: libdw loaded in a python without debug information"
	header_says m.raw "frames read (offsets from the collector's table of its version)" "$label, tables on"
	unset PROFVIEW_CACHE
else
	note "SKIP: no pyenv CPython 3.11 with a shared libpython"
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
# 5. the cache of the offsets read: made 0600 at the first start, used
# at the next; a damaged one, one of another mode or a symbolic link not
# trusted (read again, the frames right)
py=$(ls /root/.pyenv/versions/3.11.*/bin/python3.11 2>/dev/null | head -1 || true)
if [ -n "$py" ] && has_debug "$(pyobj "$py")"; then
	export XDG_CACHE_HOME=$WORK/cache5
	label="$py, the cache"
	id=$(readelf -n "$(pyobj "$py")" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
	file=$XDG_CACHE_HOME/profview/python-$id.offsets
	# cached_run WANT(kept|read) WHAT: a run with the tables off, its frames right
	cached_run() {
		PROFVIEW_TEST_PYTABLES=0 "$COLLECT_TIMER" --stats -o k.raw "$py" "$WORKPY" deep 0.3 >/dev/null 2>k.err ||
			fail "$label, $2: pywork.py failed"
		if [ "$1" = kept ]; then
			grep -q 'python offsets: from its debug information (kept in the cache)' k.err ||
				fail "$label, $2: not taken from the cache: $(grep offsets k.err)"
		else
			grep -q 'python offsets: from its debug information, found' k.err ||
				fail "$label, $2: not read from the debug information: $(grep offsets k.err)"
		fi
		deep_right k.raw "$label, $2"
	}
	cached_run read "first start"
	[ -f "$file" ] && [ "$(stat -c %a "$file")" = 600 ] || fail "$label: no $file of mode 0600: $(ls -la "$XDG_CACHE_HOME/profview")"
	cached_run kept "second start"
	cp "$file" good.offsets
	# an offset changed (the hash no longer right)
	awk '{ $5 = $5 + 8; print }' good.offsets >"$file"
	cached_run read "an offset changed"
	cmp -s "$file" good.offsets || fail "$label: the damaged cache not made again"
	# cut short
	head -c 60 good.offsets >"$file"
	cached_run read "cut short"
	# readable by others
	chmod 644 "$file"
	cached_run read "mode 0644"
	# a symbolic link to a good one: not followed, nor written through
	cp good.offsets elsewhere.offsets
	rm -f "$file"
	ln -s "$WORK/elsewhere.offsets" "$file"
	cached_run read "a symbolic link"
	cmp -s elsewhere.offsets good.offsets || fail "$label: written through a symbolic link"
	[ ! -L "$file" ] || fail "$label: the symbolic link kept"
	# PROFVIEW_CACHE=off: read, nothing written
	rm -f "$file"
	PROFVIEW_CACHE=off cached_run read "PROFVIEW_CACHE=off"
	[ ! -e "$file" ] || fail "$label: PROFVIEW_CACHE=off wrote $file"
	note "$label: made, used, and not trusted when damaged, cut, 0644 or a link"
else
	note "SKIP: no pyenv CPython 3.11 with debug information: the cache"
fi
exit 0
