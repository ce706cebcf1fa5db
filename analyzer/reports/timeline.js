(function () {
'use strict';
var NS = 'http://www.w3.org/2000/svg', D = TL, N = D.n, W = D.wc, NST = D.s.length;
var svg = document.getElementById('timeline');
var flameG = document.getElementById('flame'), selBox = document.getElementById('sel-box');
var selText = document.getElementById('selection'), details = document.getElementById('details');
var tip = document.getElementById('tip'), tipBox = tip.querySelector('rect');
var tipText = tip.querySelector('text'), bg = document.getElementById('background');
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
/* where column c starts, ns from the start of the run */
function edge(c) { return D.a + Math.ceil(c * D.l / N); }
function fmt(v) {
  if (!D.time) return v + (D.value === 'samples' ? ' samples' : ' ' + D.value);
  var s = v >= 1e9 ? (v / 1e9).toFixed(2) + ' s' : v >= 1e6 ? (v / 1e6).toFixed(1) + ' ms'
    : (v / 1e3).toFixed(0) + ' us';
  return D.value + ' ' + s;
}
/* the samples of columns [c0, c1): per stack (per row and stack by thread) */
function gather(c0, c1) {
  var m = new Map(), total = 0, samples = 0, off = 0;
  for (var r = 0; r < D.c.length; r++) {
    var c = D.c[r], i = at[r][c0], end = at[r][c1];
    while (i < end) {
      var k = c[i + 1];
      i += 2;
      for (var j = 0; j < k; j++, i += W) {
        var key = D.byThread ? r * NST + c[i] : c[i], n = c[i + 1], w = W === 3 ? c[i + 2] : n;
        var e = m.get(key);
        if (!e) m.set(key, e = { n: 0, w: 0 });
        e.n += n; e.w += w; total += w; samples += n;
        if (D.so.charCodeAt(c[i]) === 49) off += n;
      }
    }
  }
  return { m: m, total: total, samples: samples, off: off };
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
/* The flame graph of the selection, root on top, drawn anew */
var boxes = [], MAXD = 256;
function flame(g) {
  var root = { name: 'all', fill: '#e1b98c', w: 0, k: null, f: -1 };
  function child(node, id, name, fill) {
    if (!node.k) node.k = new Map();
    var c = node.k.get(id);
    if (!c) node.k.set(id, c = { name: name, fill: fill, w: 0, k: null, f: id });
    return c;
  }
  g.m.forEach(function (e, key) {
    var node = root, fr = D.s[key % NST];
    root.w += e.w;
    if (D.byThread) {
      var th = D.th[Math.floor(key / NST)];
      node = child(node, -1 - Math.floor(key / NST), '[thread ' + th[0] + (th[1] ? ' "' + th[1] + '"' : '') + ']', '#96bee6');
      node.w += e.w;
    }
    for (var i = 0; i < fr.length; i++) {
      node = child(node, fr[i], D.f[fr[i]], '#' + D.fc.substr(fr[i] * 6, 6));
      node.w += e.w;
    }
  });
  var frag = document.createDocumentFragment(), scale = root.w > 0 ? (D.w - 20) / root.w : 0, deepest = 0;
  boxes = [];
  function draw(node, x, d) {
    var w = node.w * scale, y = D.ft + d * D.fr;
    var b = el('g', { 'data-i': boxes.length }, frag);
    if (node.f >= 0 && D.hl && D.fm.charCodeAt(node.f) === 49) b.setAttribute('class', 'hl');
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
  else el('text', { x: D.w / 2, y: D.ft + 12, 'text-anchor': 'middle' }, frag).textContent = 'no samples in the selection';
  flameG.appendChild(frag);
  flameG.total = root.w;
  resize(D.ft + (deepest + 1) * D.fr + 40);
}
var sel = null;
function show() {
  var c0 = sel ? sel[0] : 0, c1 = sel ? sel[1] : N, g = gather(c0, c1);
  var from = edge(c0) / 1e9, to = edge(c1) / 1e9;
  if (sel) {
    selBox.setAttribute('x', D.x0 + c0);
    selBox.setAttribute('width', c1 - c0);
    selBox.style.display = '';
  } else {
    selBox.style.display = 'none';
  }
  selText.textContent = (sel ? 'selection ' + from.toFixed(4) + '-' + to.toFixed(4) + ' s' : 'the whole timeline') +
    ': ' + g.samples + ' samples' + (g.off ? ' (' + g.off + ' off-CPU)' : '') + (D.time ? ', ' + fmt(g.total) : '') +
    (sel ? '; click to see the whole timeline' : '; drag across the rows to choose a span');
  selText.setAttribute('data-from', from);
  selText.setAttribute('data-to', to);
  selText.setAttribute('data-total', g.total);
  selText.setAttribute('data-samples', g.samples);
  flame(g);
  return g;
}
function clampCol(c) { return Math.max(0, Math.min(N, c)); }
/* Select the columns nearest to FROM-TO seconds (or the whole timeline
   without arguments); the selection's bounds, totals and functions. */
window.timelineSelect = function (from, to) {
  if (from === undefined) {
    sel = null;
  } else {
    var c0 = clampCol(Math.round((from * 1e9 - D.a) * N / D.l)), c1 = clampCol(Math.round((to * 1e9 - D.a) * N / D.l));
    if (c1 <= c0) { c1 = Math.min(N, c0 + 1); c0 = c1 - 1; }
    sel = [c0, c1];
  }
  var g = show();
  return { from: edge(sel ? sel[0] : 0) / 1e9, to: edge(sel ? sel[1] : N) / 1e9, total: g.total,
    samples: g.samples, offcpu: g.off, functions: functions(g) };
};
function pt(e) {
  var p = svg.createSVGPoint();
  p.x = e.clientX; p.y = e.clientY;
  return p.matrixTransform(svg.getScreenCTM().inverse());
}
function colAt(x) { return Math.max(0, Math.min(N - 1, Math.floor(x - D.x0))); }
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
function hideTip() { tip.setAttribute('display', 'none'); }
function cut(s) { return s.length > 150 ? s.slice(0, 148) + '..' : s; }
function hover(p) {
  var r = Math.floor((p.y - D.y0) / D.step);
  if (p.x < D.x0 || p.x >= D.x0 + N || p.y < D.y0 || r >= D.th.length || p.y - D.y0 - r * D.step >= D.row) {
    hideTip();
    return;
  }
  var col = colAt(p.x), s = shown(r, col), th = D.th[r], lines = [];
  lines.push(th[0] ? 'thread ' + th[0] + (th[1] ? ' "' + th[1] + '"' : '') : th[1]);
  lines.push((edge(col) / 1e9).toFixed(4) + '-' + (edge(col + 1) / 1e9).toFixed(4) + ' s' +
    (s >= 0 && s !== col ? '  (no samples: shown, the column at ' + (edge(s) / 1e9).toFixed(4) + ' s)' : ''));
  if (s < 0) {
    lines.push('no samples');
  } else {
    var c = D.c[r], i = cellAt(r, s), k = c[i + 1], n = 0, w = 0, off = 0, top = -1, topN = -1;
    for (var j = 0, x = i + 2; j < k; j++, x += W) {
      n += c[x + 1]; w += W === 3 ? c[x + 2] : c[x + 1];
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
  if (p.x < D.x0 || p.x >= D.x0 + N || p.y < D.y0 || p.y >= axisEnd) return;
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
      details.textContent = nd.name + '  |  ' + fmt(nd.w) + ', ' + (100 * nd.w / flameG.total).toFixed(2) + '% of the selection';
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
if (h) window.timelineSelect(+h[1], +h[2]); else show();
})();
