#!/usr/bin/env bash
# profview --speedscope: the samples of each thread in time order, as
# speedscope's JSON.  tests/progs/phases.c computes in phase_one for a
# second of CPU time, then in phase_two, then in both at once (two threads):
#   - the file follows speedscope's schema, one profile per thread that the
#     tree shows, each weighing what the tree says the thread does;
#   - the main thread's samples go phase_one, phase_two, phase_one, each
#     phase a second of CPU time: they are in the order they were taken;
#   - --time, a wall-clock trace (the pauses there, [off-cpu]), an
#     untimed profile (pprof), hostile names, --diff-base;
#   - gdb backtraces of the program: --time=0%,50% and 50%,100% split the
#     samples, and each thread's profile has them in the order of the
#     trace's snapshots;
#   - speedscope itself (npm package, in headless Chromium) loads the file
#     and shows the threads and the phases' shares.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

command -v python3 >/dev/null || { echo "SKIP: python3 is not installed: nothing to read the JSON with"; exit 77; }
build phases
cd "$WORK"
"$COLLECT_TIMER" -q -o ph.raw ./phases >ph.txt || fail "collect-timer ./phases failed"
"$PROFVIEW" --speedscope -o ph.json ph.raw || fail "profview --speedscope failed"
"$PROFVIEW" --tree --threads -t ';' ph.raw >ph.tree || fail "profview --tree --threads failed"

# check.py JSON TREE [ORDER [cpu]]: the file against the schema and the
# tree (-t ';' --threads); ORDER: the labels each thread's samples must go
# through, "main=phase_one,phase_two,phase_one second=phase_two" (the
# thread that runs second_thread is "second", the other "main"); cpu: and
# each a second of CPU time.
cat >check.py <<'EOF'
import json, re, sys

path, tree = sys.argv[1], sys.argv[2]
order = dict(kv.split('=') for kv in sys.argv[3].split()) if len(sys.argv) > 3 else {}
cpu = len(sys.argv) > 4 and sys.argv[4] == 'cpu'
def fail(msg):
    sys.exit('%s: %s' % (path, msg))
with open(path, 'rb') as f:
    raw = f.read()
d = json.loads(raw.decode('utf-8'))   # strict: no raw control characters
for k in ('$schema', 'shared', 'profiles', 'name', 'exporter', 'activeProfileIndex'):
    if k not in d:
        fail('no "%s"' % k)
if d['$schema'] != 'https://www.speedscope.app/file-format-schema.json':
    fail('$schema is %r' % d['$schema'])
if not re.match(r'profview \d', d['exporter']):
    fail('exporter is %r' % d['exporter'])
frames = d['shared']['frames']
for fr in frames:
    if not isinstance(fr.get('name'), str):
        fail('a frame without a name: %r' % fr)
    if 'line' in fr and not (isinstance(fr['line'], int) and fr['line'] > 0 and 'file' in fr):
        fail('a frame with a bad line: %r' % fr)

# the tree's threads: [thread TID "name"] at depth 1, and their weight
rows = [l.rstrip('\n').split(';') for l in open(tree)]
col = {n: i for i, n in enumerate(rows[0])}
unit_col = [n for n in rows[0] if n.endswith('_ms')]
threads = {}
for r in rows[1:]:
    if r[col['depth']] != '1':
        continue
    m = re.match(r'\[thread (\d+)(?: "(.*)")?\]$', r[col['function']])
    if not m:
        fail('tree thread %r' % r[col['function']])
    want = 'thread %s (%s)' % (m.group(2), m.group(1)) if m.group(2) else 'thread %s' % m.group(1)
    threads[want] = (float(r[col[unit_col[0]]]) if unit_col else None, int(r[col['samples']]))

profiles = d['profiles']
names = [p['name'] for p in profiles]
if sorted(names) != sorted(threads):
    fail('profiles %s, the tree has threads %s' % (names, sorted(threads)))
for p in profiles:
    for k in ('type', 'name', 'unit', 'startValue', 'endValue', 'samples', 'weights'):
        if k not in p:
            fail('profile %s: no "%s"' % (p.get('name'), k))
    if p['type'] != 'sampled' or p['startValue'] != 0:
        fail('profile %s: type %s, startValue %s' % (p['name'], p['type'], p['startValue']))
    w = p['weights']
    if len(w) != len(p['samples']) or not w:
        fail('profile %s: %d samples, %d weights' % (p['name'], len(p['samples']), len(w)))
    if any(not isinstance(x, int) or x <= 0 for x in w):
        fail('profile %s: a weight that is not a positive whole number' % p['name'])
    if any(not s or any(not 0 <= i < len(frames) for i in s) for s in p['samples']):
        fail('profile %s: an empty stack or a frame index out of range' % p['name'])
    if p['endValue'] != sum(w):
        fail('profile %s: endValue %d, weights sum to %d' % (p['name'], p['endValue'], sum(w)))
    ms, n = threads[p['name']]
    if p['unit'] == 'nanoseconds':
        if abs(sum(w) / 1e6 - ms) > 0.0015:
            fail('profile %s: %.6f ms, the tree says %.3f' % (p['name'], sum(w) / 1e6, ms))
    elif p['unit'] != 'none' or sum(w) != n:
        fail('profile %s: %d in %s, the tree says %d samples' % (p['name'], sum(w), p['unit'], n))

# the order: each thread's runs of one phase, the weight of each run; by
# line (--lines: "main:56"), the line main is at, which never goes back
# (main has no loop)
def fn(name):
    return re.sub(r':\d+$', '', name)
for p in profiles:
    labels, lines = [], []
    for s, w in zip(p['samples'], p['weights']):
        names_ = [frames[i]['name'] for i in s]
        ph = [fn(x) for x in names_ if fn(x).startswith('phase_')]
        lines += [int(x[5:]) for x in names_ if re.match(r'main:\d+$', x)][:1]
        if ph:
            if labels and labels[-1][0] == ph[-1]:
                labels[-1][1] += w
            else:
                labels.append([ph[-1], w])
    who = 'second' if any(fn(frames[i]['name']) == 'second_thread' for s in p['samples'] for i in s) else 'main'
    seq = ','.join(l for l, _ in labels)
    print('%s (%s): %s; %s%s' % (p['name'], who, seq, ' '.join('%.3f' % (w / 1e9) for _, w in labels),
                                 '; main at lines %d..%d' % (lines[0], lines[-1]) if lines else ''))
    if who in order and seq != order[who]:
        fail('profile %s: its samples go %s, not %s' % (p['name'], seq, order[who]))
    if lines != sorted(lines):
        fail('profile %s: main goes back from one line to an earlier one: %s' % (p['name'], lines))
    if who in order and cpu:
        # each phase is a second of the thread's CPU time
        for l, w in labels:
            if not 0.85e9 <= w <= 1.15e9:
                fail('profile %s: a run of %s weighs %.3f s, not about 1 s' % (p['name'], l, w / 1e9))
EOF

python3 check.py ph.json ph.tree "main=phase_one,phase_two,phase_one second=phase_two" cpu >check.out 2>&1 ||
	fail "ph.json: $(cat check.out)"
sed 's/^/# /' check.out
# (the phases' order is the same backwards: main's lines are not)
"$PROFVIEW" --speedscope --lines -o lines.json ph.raw || fail "profview --speedscope --lines failed"
python3 check.py lines.json ph.tree "main=phase_one,phase_two,phase_one second=phase_two" cpu >check.out 2>&1 ||
	fail "lines.json: $(cat check.out)"
sed 's/^/# lines: /' check.out
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["name"] == "phases", d["name"]' ph.json ||
	fail "the file's name is not the program's"

# A span: the first phase only, and the title says so.
span1=$(awk -v s="$("$RAWDUMP" ph.raw | awk '$1 == "header" { print $3; exit }')" \
	'$1 == "one" { printf "%.6f,%.6f", ($2 - s) / 1e9, ($3 - s) / 1e9 }' ph.txt)
[ -n "$span1" ] || fail "no span of phase one"
"$PROFVIEW" --speedscope --time="$span1" -o one.json ph.raw || fail "profview --speedscope --time failed"
"$PROFVIEW" --tree --threads -t ';' --time="$span1" ph.raw >one.tree
python3 check.py one.json one.tree "main=phase_one second=" cpu >check.out 2>&1 || fail "one.json: $(cat check.out)"
grep -q '"name":"phases (time ' one.json || fail "the title of one.json does not name its span"

# Wall-clock: the main thread's pause between the first two phases (a
# 100 ms usleep) is there, as its [off-cpu] leaf, weighing its wall time.
"$COLLECT_TIMER" -q --clock=wall -o wall.raw ./phases 0.3 >/dev/null || fail "collect-timer --clock=wall failed"
"$PROFVIEW" --speedscope -o wall.json wall.raw || fail "profview --speedscope failed on a wall-clock trace"
python3 - wall.json <<'EOF' >check.out 2>&1 || fail "wall.json: $(cat check.out)"
import json, sys
d = json.load(open(sys.argv[1]))
frames = d['shared']['frames']
for p in d['profiles']:
    labels = []
    for s, w in zip(p['samples'], p['weights']):
        names = [frames[i]['name'] for i in s]
        lab = [x for x in names if x.startswith('phase_') or x == '[off-cpu]']
        labels.append((lab[-1] if lab else None, w))
    if 'phase_two' not in [l for l, _ in labels] or any(frames[i]['name'] == 'second_thread' for s in p['samples'] for i in s):
        continue
    first_two = [l for l, _ in labels].index('phase_two')
    last_one = max(i for i, (l, _) in enumerate(labels[:first_two]) if l == 'phase_one')
    pause = sum(w for l, w in labels[last_one:first_two] if l == '[off-cpu]')
    print('%s: %.0f ms off CPU between phase_one and phase_two' % (p['name'], pause / 1e6))
    sys.exit(0 if 80e6 <= pause <= 1e9 else 1)
sys.exit('no main thread with phase_two')
EOF
sed 's/^/# wall: /' check.out

# Untimed: a pprof profile gives one profile, in the order it holds its
# samples, weighing what the tree does.
"$PROFVIEW" --pprof -o ph.pb.gz ph.raw
"$PROFVIEW" --speedscope -o pb.json ph.pb.gz || fail "profview --speedscope failed on a pprof profile"
python3 - pb.json ph.tree <<'EOF' || fail "pb.json: the untimed profile is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert [p['name'] for p in d['profiles']] == ['all samples'], [p['name'] for p in d['profiles']]
rows = [l.rstrip('\n').split(';') for l in open(sys.argv[2])]
col = {n: i for i, n in enumerate(rows[0])}
ms = sum(float(r[col['cpu_ms']]) for r in rows[1:] if r[col['depth']] == '1')
w = sum(d['profiles'][0]['weights'])
assert d['profiles'][0]['unit'] == 'nanoseconds' and abs(w / 1e6 - ms) < 0.01, (w, ms)
EOF
"$PROFVIEW" --speedscope --sample-index=samples -o pbn.json ph.pb.gz
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["profiles"][0]; assert p["unit"] == "none", p["unit"]' pbn.json ||
	fail "samples counted are not in unit none"

# Hostile names: quotes, backslashes, control characters, bytes that are
# not UTF-8, all in valid JSON, shown as the other reports show them.
printf 'main;a"b\\c\033]0:x\007;\377z 5\nmain;plain 7\n' >hostile.folded
"$PROFVIEW" --speedscope -o hostile.json hostile.folded || fail "profview --speedscope failed on hostile names"
python3 - hostile.json <<'EOF' || fail "hostile.json: hostile names are not valid JSON or not escaped as the reports do"
import json, sys
d = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))
names = [f['name'] for f in d['shared']['frames']]
assert names == ['main', 'a"b\\c^[]0:x^G', '\\xffz', 'plain'], names
assert sum(d['profiles'][0]['weights']) == 12
EOF

# A comparison has no place in the format.
rc=0
"$PROFVIEW" --speedscope --diff-base=ph.raw ph.raw >/dev/null 2>diff.err || rc=$?
[ "$rc" = 2 ] && grep -q -- '--diff-base' diff.err || fail "--speedscope --diff-base: exit $rc, $(cat diff.err)"

# gdb backtraces have times too.
COLLECT_GDB=$(cd "$(dirname "$PROFVIEW")/../collectors/gdb" && pwd)/collect-gdb
if command -v gdb >/dev/null && [ -x "$COLLECT_GDB" ]; then
	# (phases of 2 s: gdb takes a while to attach on a loaded machine,
	# and the first phase must still be running when it does)
	./phases 2 >gph.txt &
	target=$!
	"$COLLECT_GDB" -q -p "$target" -i 0.05 -o ph.gdb || fail "collect-gdb -p failed"
	wait "$target" || fail "phases failed under collect-gdb"
	# samples FILE...: the samples of the folded stacks
	count() { "$PROFVIEW" --folded --sample-index=samples "$@" | awk '{ n += $NF } END { print n + 0 }'; }
	all=$(count ph.gdb)
	first=$(count --time=0%,50% ph.gdb)
	second=$(count --time=50%,100% ph.gdb)
	note "gdb: $all samples, $first in the first half of the run, $second in the second"
	[ "$all" -gt 20 ] || fail "gdb: only $all samples"
	[ $((first + second)) = "$all" ] && [ "$first" -gt 0 ] && [ "$second" -gt 0 ] ||
		fail "gdb: the halves hold $first and $second samples of $all"
	"$PROFVIEW" --speedscope -o gdb.json ph.gdb || fail "profview --speedscope failed on gdb backtraces"
	"$PROFVIEW" --tree --threads -t ';' ph.gdb >gdb.tree
	"$PROFVIEW" --speedscope --lines -o gdblines.json ph.gdb || fail "profview --speedscope --lines failed on gdb backtraces"
	for f in gdb gdblines; do
		python3 check.py $f.json gdb.tree "main=phase_one,phase_two,phase_one second=phase_two" >check.out 2>&1 ||
			fail "$f.json: $(cat check.out)"
		sed "s/^/# $f: /" check.out
	done
	# each thread's samples in the order of the snapshots: the innermost
	# phase of each of its stacks and the line main is at, runs of one
	# merged, read from the trace
	python3 - ph.gdb gdblines.json <<'EOF' >check.out 2>&1 ||
import json, re, sys
seqs = {}
tid = None
for line in open(sys.argv[1], errors='replace'):
    m = re.match(r'Thread \d+ .*\(LWP (\d+)\)', line)
    if m:
        tid = m.group(1)
        seqs.setdefault(tid, []).append([None, None])
    elif line.startswith('# snapshot'):
        tid = None
    elif tid:
        m = re.match(r'#\d+ .*\b(phase_one|phase_two) \(', line)
        if m and not seqs[tid][-1][0]:
            seqs[tid][-1][0] = m.group(1)
        m = re.match(r'#\d+ .*\bmain \(.*\) at \S+:(\d+)\s*$', line)
        if m:
            seqs[tid][-1][1] = int(m.group(1))
def runs(xs):
    out = []
    for x in map(tuple, xs):
        if x != (None, None) and (not out or out[-1] != x):
            out.append(x)
    return out
d = json.load(open(sys.argv[2]))
frames = d['shared']['frames']
for p in d['profiles']:
    tid = re.search(r'\((\d+)\)$', p['name']).group(1)
    got = []
    for s in p['samples']:
        names = [frames[i]['name'] for i in s]
        ph = [re.sub(r':\d+$', '', n) for n in names if n.startswith('phase_')]
        ml = [int(n[5:]) for n in names if re.match(r'main:\d+$', n)]
        got.append([ph[-1] if ph else None, ml[0] if ml else None])
    if runs(got) != runs(seqs[tid]):
        sys.exit('thread %s: %s in the file, %s in the trace' % (tid, runs(got), runs(seqs[tid])))
    print('thread %s: %d runs as in the trace' % (tid, len(runs(got))))
EOF
		fail "gdblines.json: a thread's samples are not in the order of the snapshots: $(cat check.out)"
	sed 's/^/# gdb order: /' check.out
else
	echo "SKIP: gdb or collect-gdb is missing: gdb backtraces not tested"
fi

# speedscope itself: its page (the npm package's local copy) opened in
# headless Chromium with the file, as its own command-line launcher opens
# it (#localProfilePath= a script that hands it the file).
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	echo "SKIP: headless Chromium (Debian package chromium) is not installed: speedscope not run"
	exit 0
fi
page=
if [ -n "${SPEEDSCOPE_DIR:-}" ] && [ -f "$SPEEDSCOPE_DIR/node_modules/speedscope/dist/release/index.html" ]; then
	page=$SPEEDSCOPE_DIR/node_modules/speedscope/dist/release/index.html
elif command -v npm >/dev/null; then
	if timeout 60 npm install --prefix "$WORK/npm" --no-audit --no-fund --prefer-offline \
		--fetch-retries=1 --fetch-timeout=20000 speedscope@1 \
		>npm.log 2>&1; then
		page=$WORK/npm/node_modules/speedscope/dist/release/index.html
	else
		echo "SKIP: 'npm install speedscope@1' failed (no network?): speedscope not run"
		sed 's/^/# npm: /' npm.log | tail -5
		exit 0
	fi
else
	echo "SKIP: npm is not installed (set SPEEDSCOPE_DIR to a prefix holding node_modules/speedscope): speedscope not run"
	exit 0
fi
[ -f "$page" ] || fail "the speedscope package has no $page"
note "speedscope $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "${page%/dist/release/index.html}/package.json")"
printf 'speedscope.loadFileFromBase64("ph.json", "%s")\n' "$(base64 -w0 ph.json)" >ph.js
chrome() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$(mktemp -d "$WORK/chrome.XXXXXX")" \
		--virtual-time-budget=10000 "$@" 2>>"$WORK/chrome.log"
}
chrome --dump-dom "file://$page#localProfilePath=$WORK/ph.js&view=sandwich" >dom.html ||
	{ tail -20 chrome.log >&2; fail "chromium could not open speedscope"; }
# The page's title is the file's name, its list of profiles the threads with
# their weights, the sandwich table (of the first profile, the main thread)
# the phases with the shares the file gives them.
python3 - dom.html ph.json <<'EOF' || fail "speedscope did not show the file as it is: see dom.html"
import html, json, re, sys
dom = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
assert '<title>phases - speedscope</title>' in dom, 'title: %s' % re.findall('<title>.*?</title>', dom)
assert 'Something went wrong' not in dom, 'speedscope failed to import'
text = lambda s: html.unescape(re.sub('<[^>]*>', '', s)).strip()
listed = {text(m.group(1)) for m in re.finditer(r'<tr title="([^"]*)"', dom)}
names = {p['name'] for p in d['profiles']}
assert names <= listed, 'profiles %s, speedscope lists %s' % (names, listed)
frames = d['shared']['frames']
p = d['profiles'][0]
total = sum(p['weights'])
shown = {}
for m in re.finditer(r'<tr class="[^"]*">(.*?)</tr>', dom, re.S):
    cells = [text(c) for c in re.findall(r'<td[^>]*>(.*?)</td>', m.group(1), re.S)]
    if len(cells) == 3:
        pct = re.search(r'\(([\d.]+)%\)', cells[0])
        if pct:
            shown[cells[2]] = float(pct.group(1))
for fn in ('phase_one', 'phase_two'):
    idx = {i for i, f in enumerate(frames) if f['name'] == fn}
    w = sum(w for s, w in zip(p['samples'], p['weights']) if idx & set(s))
    want = 100.0 * w / total
    assert fn in shown, '%s not in the sandwich table (%s)' % (fn, sorted(shown))
    print('%s: speedscope %.1f%%, the file %.1f%%' % (fn, shown[fn], want))
    assert abs(shown[fn] - want) <= 1.0, '%s at %.1f%%, the file says %.1f%%' % (fn, shown[fn], want)
EOF
exit 0
