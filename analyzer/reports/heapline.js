(function () {
'use strict';
/* The heap in use along the run (report-heapline.c): hover a column for
   the bytes in use at its end and who holds them; drag a span for what was
   allocated in it and is still in use at its end, as a flame graph. */
var D = HL, N = D.n, B = D.b;
var svg = document.getElementById('heapline');
var S = pvSpans(svg, D), edge = S.edge, cut = S.cut;
var areaEnd = D.y0 + D.h + 24;
function bytes(v) {
  var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
  while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i ? v.toFixed(Math.abs(v) >= 100 ? 0 : 1) : v.toFixed(0)) + ' ' + u[i];
}
/* the function holding a stack's bytes: its innermost frame, or -1 */
function holder(st) { var fr = D.s[st]; return fr.length ? fr[fr.length - 1] : -1; }
/* the blocks with a test(a, f): per stack, their sampled count and bytes */
function gather(test) {
  var m = new Map(), total = 0, samples = 0, sq = 0;
  for (var i = 0; i < B.length; i += 6) {
    if (!test(B[i], B[i + 1])) continue;
    var e = m.get(B[i + 2]);
    if (!e) m.set(B[i + 2], e = { n: 0, w: 0 });
    e.n += B[i + 3]; e.w += B[i + 4]; total += B[i + 4]; samples += B[i + 3]; sq += B[i + 5];
  }
  return { m: m, total: total, samples: samples, sq: sq };
}
/* allocated in columns [c0, c1), not freed before the end of c1 - 1 */
function selected(c0, c1) { return gather(function (a, f) { return a >= c0 && a < c1 && f >= c1; }); }
/* in use at the end of column c */
function inUse(c) { return gather(function (a, f) { return a <= c && c < f; }); }
/* bytes and ±: one standard error, from the blocks' variances */
function amount(g) {
  return bytes(g.total) + (g.samples > 0 ? ' \u00b1' + bytes(Math.sqrt(g.sq)) : '') +
    ' in ' + g.samples + ' sampled block' + (g.samples === 1 ? '' : 's');
}
/* self and cumulative bytes per function, as profview --flat counts them */
function functions(g) {
  var out = {};
  g.m.forEach(function (e, st) {
    var fr = D.s[st], seen = {};
    for (var i = 0; i < fr.length; i++) {
      var name = D.f[fr[i]], o = out[name] || (out[name] = { self: 0, cum: 0 });
      if (!seen[name]) { seen[name] = true; o.cum += e.w; }
      if (i === fr.length - 1) o.self += e.w;
    }
  });
  return out;
}
/* the functions holding most of g's bytes */
function holders(g) {
  var by = new Map();
  g.m.forEach(function (e, st) { var h = holder(st); by.set(h, (by.get(h) || 0) + e.w); });
  return Array.from(by.entries()).sort(function (a, b) { return b[1] - a[1]; });
}
/* the flame graph of g, root on top, weighed by bytes */
function flame(g) {
  var root = S.root();
  g.m.forEach(function (e, st) {
    var node = root, fr = D.s[st];
    root.w += e.w;
    for (var i = 0; i < fr.length; i++) {
      node = S.child(node, fr[i], D.f[fr[i]], '#' + D.fc.substr(fr[i] * 6, 6));
      node.w += e.w;
    }
  });
  S.flame(root, null, 'no block allocated in the selection is in use at its end');
}
function show() {
  var sel = S.sel, c0 = sel ? sel[0] : 0, c1 = sel ? sel[1] : N, g = selected(c0, c1);
  var from = edge(c0) / 1e9, to = edge(c1) / 1e9;
  S.mark((sel ? 'allocated in ' + from.toFixed(4) + '-' + to.toFixed(4) + ' s and in use at its end: '
    : 'in use at the end: ') + amount(g) +
    (sel ? '; click to see the whole run' : '; drag across the area to choose a span'), g);
  flame(g);
  return g;
}
/* Select the columns nearest to FROM-TO seconds (or the whole run without
   arguments); the selection's bounds, totals and functions. */
window.heaplineSelect = function (from, to) {
  var r = S.select(from, to, show), g = r.g;
  return { from: r.from, to: r.to, total: g.total, samples: g.samples, functions: functions(g) };
};
function hover(p) {
  if (p.x < D.x0 || p.x >= D.x0 + N || p.y < D.y0 || p.y >= D.y0 + D.h) {
    S.hideTip();
    return;
  }
  var col = S.colAt(p.x), g = inUse(col), lines = [];
  lines.push('at ' + (edge(col + 1) / 1e9).toFixed(4) + ' s: ' + amount(g) + ' in use' +
    (col === D.peak[0] ? ' (the peak)' : ''));
  var top = holders(g);
  if (top.length) lines.push('held by:');
  top.slice(0, 8).forEach(function (h) {
    lines.push('  ' + bytes(h[1]) + '  ' + (100 * h[1] / g.total).toFixed(1) + '%  ' + cut(h[0] >= 0 ? D.f[h[0]] : '(no frames)'));
  });
  if (top.length > 8) lines.push('  and ' + (top.length - 8) + ' other functions');
  S.tip(lines, p);
}
S.wire(areaEnd, show, hover, function (nd, total) {
  return nd.name + '  |  ' + bytes(nd.w) + ', ' + (100 * nd.w / total).toFixed(2) + '% of the selection';
}, window.heaplineSelect);
})();
