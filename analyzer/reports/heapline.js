(function () {
'use strict';
/* The heap in use along the run (report-heapline.c): hover a column for
   the bytes in use at its end and who holds them; drag a span for what was
   allocated in it and is still in use at its end, as a flame graph. */
var NS = 'http://www.w3.org/2000/svg', D = HL, N = D.n, B = D.b;
var svg = document.getElementById('heapline');
var flameG = document.getElementById('flame'), selBox = document.getElementById('sel-box');
var selText = document.getElementById('selection'), details = document.getElementById('details');
var tip = document.getElementById('tip'), tipBox = tip.querySelector('rect');
var tipText = tip.querySelector('text'), bg = document.getElementById('background');
var areaEnd = D.y0 + D.h + 24;
/* where column c starts, ns from the start of the run */
function edge(c) { return D.a + Math.ceil(c * D.l / N); }
function bytes(v) {
  var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
  while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i ? v.toFixed(Math.abs(v) >= 100 ? 0 : 1) : v.toFixed(0)) + ' ' + u[i];
}
/* the function holding a stack's bytes: its innermost frame, or -1 */
function holder(st) { var fr = D.s[st]; return fr.length ? fr[fr.length - 1] : -1; }
/* the blocks with a test(a, f): per stack, their sampled count and bytes */
function gather(test) {
  var m = new Map(), total = 0, samples = 0;
  for (var i = 0; i < B.length; i += 5) {
    if (!test(B[i], B[i + 1])) continue;
    var e = m.get(B[i + 2]);
    if (!e) m.set(B[i + 2], e = { n: 0, w: 0 });
    e.n += B[i + 3]; e.w += B[i + 4]; total += B[i + 4]; samples += B[i + 3];
  }
  return { m: m, total: total, samples: samples };
}
/* allocated in columns [c0, c1), not freed before the end of c1 - 1 */
function selected(c0, c1) { return gather(function (a, f) { return a >= c0 && a < c1 && f >= c1; }); }
/* in use at the end of column c */
function inUse(c) { return gather(function (a, f) { return a <= c && c < f; }); }
/* bytes and ±: the sampling noise of n sampled blocks alike, total/√n */
function amount(g) {
  return bytes(g.total) + (g.samples > 0 ? ' \u00b1' + bytes(g.total / Math.sqrt(g.samples)) : '') +
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
function el(name, attrs, parent) {
  var e = document.createElementNS(NS, name);
  for (var a in attrs) e.setAttribute(a, attrs[a]);
  if (parent) parent.appendChild(e);
  return e;
}
function resize(h) {
  svg.setAttribute('height', h);
  svg.setAttribute('viewBox', '0 0 ' + D.w + ' ' + h);
  bg.setAttribute('height', h);
  details.setAttribute('y', h - 10);
}
var boxes = [], MAXD = 256;
/* the flame graph of g, root on top, weighed by bytes */
function flame(g) {
  var root = { name: 'all', fill: '#e1b98c', w: 0, k: null };
  g.m.forEach(function (e, st) {
    var node = root, fr = D.s[st];
    root.w += e.w;
    for (var i = 0; i < fr.length; i++) {
      if (!node.k) node.k = new Map();
      var c = node.k.get(fr[i]);
      if (!c) node.k.set(fr[i], c = { name: D.f[fr[i]], fill: '#' + D.fc.substr(fr[i] * 6, 6), w: 0, k: null });
      node = c;
      node.w += e.w;
    }
  });
  var frag = document.createDocumentFragment(), scale = root.w > 0 ? (D.w - 20) / root.w : 0, deepest = 0;
  boxes = [];
  function draw(node, x, d) {
    var w = node.w * scale, y = D.ft + d * D.fr, b = el('g', { 'data-i': boxes.length }, frag);
    el('rect', { x: x.toFixed(2), y: y, width: w.toFixed(2), height: D.fr - 1, fill: node.fill }, b);
    var n = Math.floor((w - 6) / D.cw);
    if (n >= 3) {
      var t = el('text', { x: (x + 3).toFixed(2), y: y + D.fr - 4.5 }, b);
      t.textContent = node.name.length <= n ? node.name : node.name.slice(0, n - 2) + '..';
    }
    boxes.push(node);
    if (d > deepest) deepest = d;
    if (!node.k || d >= MAXD) return;
    var kids = Array.from(node.k.values()).sort(function (a, b) { return b.w - a.w; });
    for (var i = 0; i < kids.length; i++) {
      if (kids[i].w * scale >= 0.3) draw(kids[i], x, d + 1);
      x += kids[i].w * scale;
    }
  }
  while (flameG.firstChild) flameG.removeChild(flameG.firstChild);
  if (root.w > 0) draw(root, 10, 0);
  else el('text', { x: D.w / 2, y: D.ft + 12, 'text-anchor': 'middle' }, frag).textContent = 'no block allocated in the selection is in use at its end';
  flameG.appendChild(frag);
  flameG.total = root.w;
  resize(D.ft + (deepest + 1) * D.fr + 40);
}
var sel = null;
function show() {
  var c0 = sel ? sel[0] : 0, c1 = sel ? sel[1] : N, g = selected(c0, c1);
  var from = edge(c0) / 1e9, to = edge(c1) / 1e9;
  if (sel) {
    selBox.setAttribute('x', D.x0 + c0);
    selBox.setAttribute('width', c1 - c0);
    selBox.style.display = '';
  } else {
    selBox.style.display = 'none';
  }
  selText.textContent = (sel ? 'allocated in ' + from.toFixed(4) + '-' + to.toFixed(4) + ' s and in use at its end: '
    : 'in use at the end: ') + amount(g) +
    (sel ? '; click to see the whole run' : '; drag across the area to choose a span');
  selText.setAttribute('data-from', from);
  selText.setAttribute('data-to', to);
  selText.setAttribute('data-total', g.total);
  selText.setAttribute('data-samples', g.samples);
  flame(g);
  return g;
}
function clampCol(c) { return Math.max(0, Math.min(N, c)); }
/* Select the columns nearest to FROM-TO seconds (or the whole run without
   arguments); the selection's bounds, totals and functions. */
window.heaplineSelect = function (from, to) {
  if (from === undefined) {
    sel = null;
  } else {
    var c0 = clampCol(Math.round((from * 1e9 - D.a) * N / D.l)), c1 = clampCol(Math.round((to * 1e9 - D.a) * N / D.l));
    if (c1 <= c0) { c1 = Math.min(N, c0 + 1); c0 = c1 - 1; }
    sel = [c0, c1];
  }
  var g = show();
  return { from: edge(sel ? sel[0] : 0) / 1e9, to: edge(sel ? sel[1] : N) / 1e9, total: g.total,
    samples: g.samples, functions: functions(g) };
};
function pt(e) {
  var p = svg.createSVGPoint();
  p.x = e.clientX; p.y = e.clientY;
  return p.matrixTransform(svg.getScreenCTM().inverse());
}
function colAt(x) { return Math.max(0, Math.min(N - 1, Math.floor(x - D.x0))); }
function hideTip() { tip.setAttribute('display', 'none'); }
function cut(s) { return s.length > 150 ? s.slice(0, 148) + '..' : s; }
function hover(p) {
  if (p.x < D.x0 || p.x >= D.x0 + N || p.y < D.y0 || p.y >= D.y0 + D.h) {
    hideTip();
    return;
  }
  var col = colAt(p.x), g = inUse(col), lines = [];
  lines.push('at ' + (edge(col + 1) / 1e9).toFixed(4) + ' s: ' + amount(g) + ' in use' +
    (col === D.peak[0] ? ' (the peak)' : ''));
  var top = holders(g);
  if (top.length) lines.push('held by:');
  top.slice(0, 8).forEach(function (h) {
    lines.push('  ' + bytes(h[1]) + '  ' + (100 * h[1] / g.total).toFixed(1) + '%  ' + cut(h[0] >= 0 ? D.f[h[0]] : '(no frames)'));
  });
  if (top.length > 8) lines.push('  and ' + (top.length - 8) + ' other functions');
  while (tipText.firstChild) tipText.removeChild(tipText.firstChild);
  var wide = 0;
  lines.forEach(function (l, i) {
    el('tspan', { x: 8, dy: i ? 15 : 16 }, tipText).textContent = l;
    wide = Math.max(wide, l.length);
  });
  var w = wide * D.cw + 16, h = lines.length * 15 + 10, height = +svg.getAttribute('height');
  var x = p.x + 16 + w > D.w ? Math.max(0, p.x - 16 - w) : p.x + 16;
  var y = p.y + 16 + h > height ? Math.max(0, p.y - 16 - h) : p.y + 16;
  tipBox.setAttribute('width', w);
  tipBox.setAttribute('height', h);
  tip.setAttribute('transform', 'translate(' + x.toFixed(0) + ',' + y.toFixed(0) + ')');
  tip.removeAttribute('display');
}
var drag = null, pending = false;
function later() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(function () { pending = false; show(); });
}
svg.addEventListener('mousedown', function (e) {
  var p = pt(e);
  if (p.x < D.x0 || p.x >= D.x0 + N || p.y < D.y0 || p.y >= areaEnd) return;
  drag = { c: colAt(p.x), moved: false };
  e.preventDefault();
});
window.addEventListener('mousemove', function (e) {
  var p = pt(e);
  if (!drag) {
    hover(p);
    var b = e.target.closest && e.target.closest('#flame > g');
    if (b) {
      var nd = boxes[+b.getAttribute('data-i')];
      details.textContent = nd.name + '  |  ' + bytes(nd.w) + ', ' + (100 * nd.w / flameG.total).toFixed(2) + '% of the selection';
    }
    return;
  }
  var c = colAt(p.x);
  if (c !== drag.c) drag.moved = true;
  sel = [Math.min(c, drag.c), Math.max(c, drag.c) + 1];
  hideTip();
  later();
});
window.addEventListener('mouseup', function () {
  if (!drag) return;
  if (!drag.moved) sel = null;
  drag = null;
  show();
});
window.addEventListener('keydown', function (e) { if (e.key === 'Escape') { sel = null; show(); } });
/* file.svg#sel=FROM,TO: opened with that span selected (seconds) */
var h = /sel=([0-9.e+-]+),([0-9.e+-]+)/.exec(decodeURIComponent(location.hash));
if (h) window.heaplineSelect(+h[1], +h[2]); else show();
})();
