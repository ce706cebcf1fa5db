(function () {
'use strict';
var NS = 'http://www.w3.org/2000/svg';
var fr = [], byEl = new Map();
var gs = document.querySelectorAll('#frames > g');
var stack = [];
for (var i = 0; i < gs.length; i++) {
  var g = gs[i], r = g.querySelector('rect');
  var y = +r.getAttribute('y');
  var d = Math.round(ICICLE ? (y - TOP) / ROW : MAXD - (y - TOP) / ROW);
  while (stack.length && fr[stack[stack.length - 1]].d >= d) fr[stack.pop()].end = i;
  var f = { g: g, r: r, t: g.querySelector('text'), x: +r.getAttribute('x'),
    w: +r.getAttribute('width'), d: d, fill: r.getAttribute('fill'),
    name: g.querySelector('title').textContent.split('\n')[0],
    parent: stack.length ? stack[stack.length - 1] : -1, end: gs.length, i: i };
  fr.push(f); byEl.set(g, f); stack.push(i);
}
var details = document.getElementById('details');
var matched = document.getElementById('matched');
var reset = document.getElementById('reset');
var searchBtn = document.getElementById('search');
var total = fr.length ? fr[0].w : 1;
function label(f, x, w) {
  var n = Math.floor((w - 6) / CHAR_W), s = '';
  if (n >= 3) s = f.name.length <= n ? f.name : f.name.slice(0, n - 2) + '..';
  if (!f.t) {
    if (!s) return;
    f.t = document.createElementNS(NS, 'text');
    f.t.setAttribute('y', +f.r.getAttribute('y') + ROW - 4.5);
    f.g.appendChild(f.t);
  }
  f.t.setAttribute('x', (x + 3).toFixed(2));
  f.t.textContent = s;
}
function place(f, x, w, faded) {
  f.g.style.display = '';
  f.r.setAttribute('x', x.toFixed(2));
  f.r.setAttribute('width', w.toFixed(2));
  f.g.classList.toggle('faded', faded);
  label(f, x, w);
}
function zoom(z) {
  var s = (WIDTH - 2 * PAD) / z.w, inside = new Set();
  for (var a = z.parent; a >= 0; a = fr[a].parent) inside.add(a);
  for (var i = 0; i < fr.length; i++) {
    var f = fr[i];
    if (i >= z.i && i < z.end) place(f, PAD + (f.x - z.x) * s, f.w * s, false);
    else if (inside.has(i)) place(f, PAD, WIDTH - 2 * PAD, true);
    else f.g.style.display = 'none';
  }
  reset.style.display = z.i ? '' : 'none';
}
function unzoom() { if (fr.length) zoom(fr[0]); }
var query = null;
function search(q) {
  var re = null;
  query = q;
  if (q) {
    try { re = new RegExp(q); }
    catch (e) { re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')); }
  }
  var sum = 0, hit = new Uint8Array(fr.length);
  for (var i = 0; i < fr.length; i++) {
    var f = fr[i], m = re !== null && re.test(f.name);
    f.r.setAttribute('fill', m ? 'rgb(230,0,230)' : f.fill);
    var under = f.parent >= 0 && hit[f.parent];
    hit[i] = m || under ? 1 : 0;
    if (m && !under) sum += f.w;
  }
  matched.textContent = re ? 'Matched: ' + (100 * sum / total).toFixed(1) + '% of the total' : '';
  searchBtn.textContent = re ? 'Reset search' : 'Search';
}
function ask() {
  var q = window.prompt('Search for (a regular expression):', query || '');
  if (q !== null) search(q);
}
document.documentElement.addEventListener('click', function (e) {
  var t = e.target;
  if (t === reset) { unzoom(); return; }
  if (t === searchBtn) { if (query) search(''); else ask(); return; }
  var g = t.closest && t.closest('#frames > g');
  if (g) zoom(byEl.get(g));
});
document.documentElement.addEventListener('mouseover', function (e) {
  var g = e.target.closest && e.target.closest('#frames > g');
  details.textContent = g ? g.querySelector('title').textContent.split('\n').join('  |  ') : '';
});
window.addEventListener('keydown', function (e) {
  if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F') || e.key === '/') {
    e.preventDefault(); ask();
  } else if (e.key === 'Escape') { search(''); unzoom(); }
});
reset.style.display = 'none';
/* A flame graph opens at its root, the bottom of a picture that may be
 * far higher than the window. */
if (!ICICLE) window.scrollTo(0, document.documentElement.getBoundingClientRect().height);
/* file.svg#s=REGEX&z=NAME: search, zoom into the first frame called NAME */
location.hash.slice(1).split('&').forEach(function (kv) {
  var k = kv.slice(0, kv.indexOf('=')), v = decodeURIComponent(kv.slice(kv.indexOf('=') + 1));
  if (k === 's') search(v);
  if (k === 'z') for (var i = 0; i < fr.length; i++) if (fr[i].name === v) { zoom(fr[i]); break; }
});
})();
