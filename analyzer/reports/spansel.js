/* What the two timelines' scripts share (timeline.js, heapline.js): the
   SVG helpers, the tooltip, the flame graph of a selection, and choosing
   a span of columns by dragging across the picture.  pvSpans(svg, D)
   returns them; D is the picture's data (the columns: n, x0, y0, a, l;
   the flame graph's place: w, ft, fr, cw).  The selection, S.sel, is
   [first column, column after the last] or null (everything). */
function pvSpans(svg, D) {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg', N = D.n, S = { sel: null, boxes: [] };
  var flameG = document.getElementById('flame'), selBox = document.getElementById('sel-box');
  var details = document.getElementById('details'), bg = document.getElementById('background');
  var selText = document.getElementById('selection');
  var tip = document.getElementById('tip'), tipBox = tip.querySelector('rect');
  var tipText = tip.querySelector('text'), MAXD = 256;
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var a in attrs) e.setAttribute(a, attrs[a]);
    if (parent) parent.appendChild(e);
    return e;
  }
  S.el = el;
  function resize(h) {
    svg.setAttribute('height', h);
    svg.setAttribute('viewBox', '0 0 ' + D.w + ' ' + h);
    bg.setAttribute('height', h);
    details.setAttribute('y', h - 10);
  }
  /* where column c starts, ns from the start of the run */
  S.edge = function (c) { return D.a + Math.ceil(c * D.l / N); };
  S.colAt = function (x) { return Math.max(0, Math.min(N - 1, Math.floor(x - D.x0))); };
  S.cut = function (s) { return s.length > 150 ? s.slice(0, 148) + '..' : s; };
  S.pt = function (e) {
    var p = svg.createSVGPoint();
    p.x = e.clientX; p.y = e.clientY;
    return p.matrixTransform(svg.getScreenCTM().inverse());
  };
  /* a flame graph's root, and node's child for id, made when new */
  S.root = function () { return { name: 'all', fill: '#e1b98c', w: 0, k: null, f: -1 }; };
  S.child = function (node, id, name, fill) {
    if (!node.k) node.k = new Map();
    var c = node.k.get(id);
    if (!c) node.k.set(id, c = { name: name, fill: fill, w: 0, k: null, f: id });
    return c;
  };
  /* The flame graph of root's tree, root on top, drawn anew; marked(node):
     drawn with the class hl; empty: what to say when root weighs nothing. */
  S.flame = function (root, marked, empty) {
    var frag = document.createDocumentFragment(), scale = root.w > 0 ? (D.w - 20) / root.w : 0, deepest = 0;
    var boxes = S.boxes = [];
    function draw(node, x, d) {
      var w = node.w * scale, y = D.ft + d * D.fr, b = el('g', { 'data-i': boxes.length }, frag);
      if (marked && marked(node)) b.setAttribute('class', 'hl');
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
    else el('text', { x: D.w / 2, y: D.ft + 12, 'text-anchor': 'middle' }, frag).textContent = empty;
    flameG.appendChild(frag);
    flameG.total = root.w;
    resize(D.ft + (deepest + 1) * D.fr + 40);
  };
  /* The selection's box over the columns, and its line: text, and its
     span and totals g (total, samples) in data- attributes for scripts. */
  S.mark = function (text, g) {
    var from = S.edge(S.sel ? S.sel[0] : 0) / 1e9, to = S.edge(S.sel ? S.sel[1] : N) / 1e9;
    selText.textContent = text;
    selText.setAttribute('data-from', from);
    selText.setAttribute('data-to', to);
    selText.setAttribute('data-total', g.total);
    selText.setAttribute('data-samples', g.samples);
    if (S.sel) {
      selBox.setAttribute('x', D.x0 + S.sel[0]);
      selBox.setAttribute('width', S.sel[1] - S.sel[0]);
      selBox.style.display = '';
    } else {
      selBox.style.display = 'none';
    }
  };
  S.hideTip = function () { tip.setAttribute('display', 'none'); };
  /* the tooltip: lines of text beside point p, inside the picture */
  S.tip = function (lines, p) {
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
  };
  /* Selects the columns nearest to FROM-TO seconds (everything without
     arguments) and shows them: show() draws the selection and returns its
     totals g; the span's bounds and g. */
  S.select = function (from, to, show) {
    function clamp(c) { return Math.max(0, Math.min(N, c)); }
    if (from === undefined) {
      S.sel = null;
    } else {
      var c0 = clamp(Math.round((from * 1e9 - D.a) * N / D.l)), c1 = clamp(Math.round((to * 1e9 - D.a) * N / D.l));
      if (c1 <= c0) { c1 = Math.min(N, c0 + 1); c0 = c1 - 1; }
      S.sel = [c0, c1];
    }
    return { from: S.edge(S.sel ? S.sel[0] : 0) / 1e9, to: S.edge(S.sel ? S.sel[1] : N) / 1e9, g: show() };
  };
  /* The mouse: a press over the columns (from D.y0 to yEnd) and a drag
     choose a span, a click without a drag or Escape the whole; hover(p)
     elsewhere, detail(node) for the flame graph's boxes.  Then the span
     of the address's #sel=FROM,TO, or everything: select(from, to). */
  S.wire = function (yEnd, show, hover, detail, select) {
    var drag = null, pending = false;
    function later() {
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () { pending = false; show(); });
    }
    svg.addEventListener('mousedown', function (e) {
      var p = S.pt(e);
      if (p.x < D.x0 || p.x >= D.x0 + N || p.y < D.y0 || p.y >= yEnd) return;
      drag = { c: S.colAt(p.x), moved: false };
      e.preventDefault();
    });
    window.addEventListener('mousemove', function (e) {
      var p = S.pt(e);
      if (!drag) {
        hover(p);
        var b = e.target.closest && e.target.closest('#flame > g');
        if (b) details.textContent = detail(S.boxes[+b.getAttribute('data-i')], flameG.total);
        return;
      }
      var c = S.colAt(p.x);
      if (c !== drag.c) drag.moved = true;
      S.sel = [Math.min(c, drag.c), Math.max(c, drag.c) + 1];
      S.hideTip();
      later();
    });
    window.addEventListener('mouseup', function () {
      if (!drag) return;
      if (!drag.moved) S.sel = null;
      drag = null;
      show();
    });
    window.addEventListener('keydown', function (e) { if (e.key === 'Escape') { S.sel = null; show(); } });
    /* file.svg#sel=FROM,TO: opened with that span selected (seconds) */
    var h = /sel=([0-9.e+-]+),([0-9.e+-]+)/.exec(decodeURIComponent(location.hash));
    if (h) select(+h[1], +h[2]); else show();
  };
  return S;
}
