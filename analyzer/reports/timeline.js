(function () {
'use strict';
var D = TL, N = D.n, W = D.wc, NST = D.s.length;
var svg = document.getElementById('timeline');
var S = pvSpans(svg, D), edge = S.edge, cut = S.cut;
var rowsEnd = D.y0 + D.th.length * D.step, axisEnd = rowsEnd + 24;
/* per row, per column: where its cell starts in D.c[row] (none: the next one) */
var at = D.c.map(function (c) {
  var a = new Int32Array(N + 1), col = 0, i = 0;
  while (i < c.length) {
    while (col <= c[i]) a[col++] = i;
    i += 2 + c[i + 1] * W;
  }
  while (col <= N) a[col++] = i;
  return a;
});
function cellAt(r, col) { return at[r][col] < at[r][col + 1] ? at[r][col] : -1; }
function fmt(v) {
  if (!D.time) return v + (D.value === 'samples' ? ' samples' : ' ' + D.value);
  var s = v >= 1e9 ? (v / 1e9).toFixed(2) + ' s' : v >= 1e6 ? (v / 1e6).toFixed(1) + ' ms'
    : (v / 1e3).toFixed(0) + ' us';
  return D.value + ' ' + s;
}
/* the samples of columns [c0, c1): per stack (per row and stack by thread) */
function gather(c0, c1) {
  var m = new Map(), total = 0, samples = 0, off = 0, sq = 0;
  for (var r = 0; r < D.c.length; r++) {
    var c = D.c[r], i = at[r][c0], end = at[r][c1];
    while (i < end) {
      var k = c[i + 1];
      i += 2;
      for (var j = 0; j < k; j++, i += W) {
        var key = D.byThread ? r * NST + c[i] : c[i], n = c[i + 1], w = W === 4 ? c[i + 2] : n;
        var e = m.get(key);
        if (!e) m.set(key, e = { n: 0, w: 0 });
        e.n += n; e.w += w; total += w; samples += n; sq += c[i + W - 1];
        if (D.so.charCodeAt(c[i]) === 49) off += n;
      }
    }
  }
  return { m: m, total: total, samples: samples, off: off, sq: sq };
}
/* self and cumulative weight per function, as profview --flat counts them */
function functions(g) {
  var nf = D.f.length, self = new Float64Array(nf), cum = new Float64Array(nf);
  var stamp = new Int32Array(nf).fill(-1), serial = 0, out = {};
  g.m.forEach(function (e, key) {
    var fr = D.s[key % NST];
    serial++;
    if (fr.length) self[fr[fr.length - 1]] += e.w;
    for (var i = 0; i < fr.length; i++)
      if (stamp[fr[i]] !== serial) { stamp[fr[i]] = serial; cum[fr[i]] += e.w; }
  });
  for (var f = 0; f < nf; f++) {
    if (stamp[f] < 0) continue;
    var o = out[D.f[f]] || (out[D.f[f]] = { self: 0, cum: 0 });
    o.self += self[f]; o.cum += cum[f];
  }
  return out;
}
/* The flame graph of the selection */
function flame(g) {
  var root = S.root();
  g.m.forEach(function (e, key) {
    var node = root, fr = D.s[key % NST];
    root.w += e.w;
    if (D.byThread) {
      var th = D.th[Math.floor(key / NST)];
      node = S.child(node, -1 - Math.floor(key / NST), '[thread ' + th[0] + (th[1] ? ' "' + th[1] + '"' : '') + ']', '#96bee6');
      node.w += e.w;
    }
    for (var i = 0; i < fr.length; i++) {
      node = S.child(node, fr[i], D.f[fr[i]], '#' + D.fc.substr(fr[i] * 6, 6));
      node.w += e.w;
    }
  });
  S.flame(root, function (node) { return node.f >= 0 && D.hl && D.fm.charCodeAt(node.f) === 49; },
    'no samples in the selection');
}
function show() {
  var sel = S.sel, c0 = sel ? sel[0] : 0, c1 = sel ? sel[1] : N, g = gather(c0, c1);
  var from = edge(c0) / 1e9, to = edge(c1) / 1e9;
  S.mark((sel ? 'selection ' + from.toFixed(4) + '-' + to.toFixed(4) + ' s' : 'the whole timeline') +
    ': ' + g.samples + ' samples' + (g.off ? ' (' + g.off + ' off-CPU)' : '') + (D.time ? ', ' + fmt(g.total) : '') +
    ' (\u00b1' + (g.total > 0 ? (100 * Math.sqrt(g.sq) / g.total).toFixed(1) : '0') + '%: one standard error)' +
    (sel ? '; click to see the whole timeline' : '; drag across the rows to choose a span'), g);
  flame(g);
  return g;
}
/* Select the columns nearest to FROM-TO seconds (or the whole timeline
   without arguments); the selection's bounds, totals and functions. */
window.timelineSelect = function (from, to) {
  var r = S.select(from, to, show), g = r.g;
  return { from: r.from, to: r.to, total: g.total, samples: g.samples, offcpu: g.off, functions: functions(g) };
};
/* the column whose marks column col of row r shows (held over a gap), or -1 */
function shown(r, col) {
  if (cellAt(r, col) >= 0) return col;
  var th = D.th[r], hold = th[2], usual = th[3], last = th[4], prev = -1, c;
  for (c = col - 1; c >= 0 && col - c <= hold; c--) if (cellAt(r, c) >= 0) { prev = c; break; }
  if (prev < 0) return -1;
  if (prev === last) return col - prev < usual ? prev : -1;
  for (c = col + 1; c < N && c - prev <= hold; c++) if (cellAt(r, c) >= 0) return prev;
  return -1;
}
function hover(p) {
  var r = Math.floor((p.y - D.y0) / D.step);
  if (p.x < D.x0 || p.x >= D.x0 + N || p.y < D.y0 || r >= D.th.length || p.y - D.y0 - r * D.step >= D.row) {
    S.hideTip();
    return;
  }
  var col = S.colAt(p.x), s = shown(r, col), th = D.th[r], lines = [];
  lines.push(th[0] ? 'thread ' + th[0] + (th[1] ? ' "' + th[1] + '"' : '') : th[1]);
  lines.push((edge(col) / 1e9).toFixed(4) + '-' + (edge(col + 1) / 1e9).toFixed(4) + ' s' +
    (s >= 0 && s !== col ? '  (no samples: shown, the column at ' + (edge(s) / 1e9).toFixed(4) + ' s)' : ''));
  if (s < 0) {
    lines.push('no samples');
  } else {
    var c = D.c[r], i = cellAt(r, s), k = c[i + 1], n = 0, w = 0, off = 0, top = -1, topN = -1;
    for (var j = 0, x = i + 2; j < k; j++, x += W) {
      n += c[x + 1]; w += W === 4 ? c[x + 2] : c[x + 1];
      if (D.so.charCodeAt(c[x]) === 49) off += c[x + 1];
      if (c[x + 1] > topN) { topN = c[x + 1]; top = c[x]; }
    }
    lines.push(n + ' sample' + (n === 1 ? '' : 's') + (off ? ', ' + off + ' off-CPU' : '') + (D.time ? ', ' + fmt(w) : ''));
    lines.push('most frequent stack (' + topN + ' of ' + n + ')' + (D.so.charCodeAt(top) === 49 ? ', off-CPU' : '') + ':');
    var fr = D.s[top], names = [];
    for (j = 0; j < fr.length; j++) names.push('  ' + cut(D.f[fr[j]]));
    if (!fr.length) names.push('  (no frames)');
    if (names.length > 24) names.splice(8, names.length - 23, '  ... ' + (names.length - 23) + ' frames ...');
    lines = lines.concat(names);
    if (k > 1) lines.push('and ' + (k - 1) + ' other stack' + (k > 2 ? 's' : ''));
  }
  S.tip(lines, p);
}
S.wire(axisEnd, show, hover, function (nd, total) {
  return nd.name + '  |  ' + fmt(nd.w) + ', ' + (100 * nd.w / total).toFixed(2) + '% of the selection';
}, window.timelineSelect);
})();
