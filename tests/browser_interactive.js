/* browser_interactive.js — in-page checks of the interactive views, for test_interactive_browser.sh.
 * The test copies a page, puts window.ANDREA_TEST = {mode, cells, ...} and this file into it, and
 * opens it with `chromium --headless --dump-dom`; after the data has loaded the checks run as a
 * user would act (synthetic mouse events on the canvas, clicks on tokens and buttons) and one line
 * "ANDREA_RESULT {json}" is appended to the DOM for the script to read back.
 * Errors: window errors, console.error calls and CSP violations are collected from the start (this
 * file is put first in <head>). */
(function () {
  'use strict';
  var T = window.ANDREA_TEST || {}, r = {errors: []};
  window.addEventListener('error', function (e) { r.errors.push('error: ' + e.message); });
  document.addEventListener('securitypolicyviolation', function (e) { r.errors.push('csp: ' + e.violatedDirective + ' ' + e.blockedURI); });
  var ce = console.error;
  console.error = function () { r.errors.push('console: ' + Array.prototype.join.call(arguments, ' ')); ce.apply(console, arguments); };

  function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  /* client coordinates of the centre of cell (q, k) of heatmap widget hm */
  function cellXY(hm, q, k) {
    var c = hm.canvas, rect = c.getBoundingClientRect(), cell = hm.S / hm.w;
    var x = hm.M + 2 + (k - hm.k0 + 0.5) * cell, y = hm.M + 2 + (q - hm.q0 + 0.5) * cell;
    return {x: rect.left + x * rect.width / c.width, y: rect.top + y * rect.height / c.height};
  }
  function mouse(target, type, x, y, extra) {
    var o = {clientX: x, clientY: y, bubbles: true, cancelable: true};
    for (var k in extra || {}) o[k] = extra[k];
    target.dispatchEvent(type === 'wheel' ? new WheelEvent(type, o) : new MouseEvent(type, o));
  }
  function hover(hm, q, k) {
    var p = cellXY(hm, q, k);
    mouse(hm.canvas, 'mousemove', p.x, p.y);
    var ro = hm.readout;
    return {q: +ro.getAttribute('data-q'), k: +ro.getAttribute('data-k'), p: parseFloat(ro.getAttribute('data-p')), text: ro.textContent};
  }
  function pixel(hm, x, y) {
    var d = hm.canvas.getContext('2d').getImageData(Math.floor(x), Math.floor(y), 1, 1).data;
    return [d[0], d[1], d[2]];
  }
  function widgets() { return all('.hm').map(function (d) { return d.__hm; }).filter(Boolean); }
  function btn(root, text) { return all('button').filter(function (b) { return root.contains(b) && b.textContent === text; })[0]; }
  function spanColours() { return all('.tv-toks .tk').map(function (s) { return s.style.background; }); }

  function checkHeatmap(hm) {
    var out = {};
    /* maps are drawn once near the viewport: bring this one there (as scrolling would) */
    out.drawn_before = hm.visible;
    hm.visible = true;
    hm.draw();
    out.cells = (T.cells || []).map(function (c) { return hover(hm, c[0], c[1]); });
    /* a probe target's frame: dark outside, cyan inside, whatever the cell's colour */
    var keys = Object.keys(hm.ex.targets);
    if (keys.length) {
      var key = +keys[keys.length - 1], tq = Math.floor(key / 65536), tk = key % 65536;
      var cell = hm.S / hm.w, x = hm.M + 2 + (tk - hm.k0) * cell, y = hm.M + 2 + (tq - hm.q0) * cell + cell / 2;
      out.target_outer = pixel(hm, x + 1, y);
      out.target_inner = pixel(hm, x + 3.5, y);
      out.target_cell = [tq, tk, cell];
    }
    /* log scale: a small probability gets a brighter colour */
    var small = null;
    for (var q = 1; q < hm.n && !small; q++)
      for (var k = 0; k <= q; k++) {
        var p = A.prob(hm.v, hm.ex, q, k);
        if (p > 1e-3 && p < 0.05) { small = [q, k]; break; }
      }
    if (small) {
      var sc = hm.S / hm.w, px = hm.M + 2 + (small[1] + 0.5) * sc, py = hm.M + 2 + (small[0] + 0.5) * sc;
      mouse(hm.canvas, 'mouseleave', 0, 0);
      var lin = pixel(hm, px, py);
      hm.logBtn.click();
      var lg = pixel(hm, px, py);
      hm.logBtn.click();
      out.log_changes = lin.join() !== lg.join() && lg[0] + lg[1] + lg[2] > lin[0] + lin[1] + lin[2];
    }
    /* zoom and pan */
    out.view0 = hm.root.getAttribute('data-view');
    var mid = cellXY(hm, Math.floor(hm.n / 2), Math.floor(hm.n / 4));
    mouse(hm.canvas, 'wheel', mid.x, mid.y, {deltaY: -100});
    out.view_wheel = hm.root.getAttribute('data-view');
    btn(hm.root, '+').click();
    out.view_plus = hm.root.getAttribute('data-view');
    btn(hm.root, '\u2192').click();
    out.view_pan = hm.root.getAttribute('data-view');
    out.range_text = hm.range.textContent;
    /* after zooming, hovering shows the cell under the mouse */
    var v = hm.root.getAttribute('data-view').split(',').map(Number);
    out.zoomed_hover = hover(hm, v[0] + v[2] - 1, v[1]);
    btn(hm.root, 'reset').click();
    out.view_reset = hm.root.getAttribute('data-view');
    return out;
  }

  function run() {
    var A = window.ANDREA;
    r.mode = T.mode;
    r.canvases = all('canvas.hm-canvas').length;
    r.slots = all('.hm-slot').length;
    r.errors = r.errors.concat(A ? A.errors : ['andrea.js did not load']);
    var hms = widgets();
    if (T.mode === 'head' || T.mode === 'show') {
      var hm = hms[T.widget || 0];
      r.widget_head = hm ? [hm.o.l, hm.o.h] : null;
      r.drawn = hms.filter(function (h) { return h.visible; }).length;
      if (hm) r.map = checkHeatmap(hm);
      /* token lists: filled from data/meta.js where open, when opened where closed */
      var slots = all('.tok-slot');
      r.tok_counts = slots.map(function (x) { return x.querySelectorAll('.tok').length; });
      r.tok_want = slots.map(function (x) {
        return A.meta.suites[+x.getAttribute('data-s')].examples[+x.getAttribute('data-e')].n; });
      r.tok_texts0 = slots.length ? Array.prototype.map.call(slots[0].querySelectorAll('.tok'), function (t) {
        return t.childNodes[1] ? t.childNodes[1].textContent : null; }) : [];
      var closed = slots.filter(function (x) { return !x.parentNode.open; });
      if (closed.length) {
        closed[0].parentNode.open = true;
        closed[0].parentNode.dispatchEvent(new Event('toggle'));
        r.tok_opened = closed[0].querySelectorAll('.tok').length;
      }
      r.images = document.images.length;
      r.broken = Array.prototype.filter.call(document.images, function (i) { return !(i.complete && i.naturalWidth > 0); }).length;
    }
    if (T.mode === 'explore' || T.mode === 'show') {
      var tv = A.tokenView;
      r.n_tokens = all('.tv-toks .tk').length;
      r.token_texts = all('.tv-toks .tk').map(function (s) { return s.textContent; });
      r.injected = all('.tv-toks *').filter(function (e) { return e.tagName !== 'SPAN'; }).length + all('img').length - (r.images || 0);
      var before = spanColours();
      var i = Math.min(T.token || 5, r.n_tokens - 1);
      all('.tv-toks .tk')[i].click();
      var from = spanColours();
      r.coloured_from = from.filter(function (c) { return c !== ''; }).length;
      r.from_values = all('.tv-toks .tk').slice(0, i + 1).map(function (s) { return parseFloat(s.getAttribute('data-p')); });
      r.clicked = i;
      r.head0 = [tv.o.l, tv.o.h];
      var other = all('.tv-head').filter(function (b) { return !b.disabled && !b.classList.contains('on'); });
      var target = other[other.length - 1];
      target.click();
      r.head1 = [tv.o.l, tv.o.h];
      var otherHead = spanColours();
      tv.dirBtn.click();
      var to = spanColours();
      r.coloured_to = to.filter(function (c) { return c !== ''; }).length;
      r.click_changes = before.join('|') !== from.join('|');
      r.head_changes = from.join('|') !== otherHead.join('|');
      r.dir_changes = otherHead.join('|') !== to.join('|');
      r.map_follows_head = tv.map.o.l === tv.o.l && tv.map.o.h === tv.o.h;
    }
    if (T.mode === 'compare') {
      var a = hms[0], b = hms[1];
      r.heads = hms.map(function (h) { return [h.o.l, h.o.h]; });
      var c = hover(a, a.n - 1, 1);
      r.linked = +b.readout.getAttribute('data-q') === c.q && +b.readout.getAttribute('data-k') === c.k;
      r.different_heads = a.o.l !== b.o.l || a.o.h !== b.o.h || (a.o.m || 0) !== (b.o.m || 0);
      r.titles = hms.map(function (h) { return h.title.textContent; });
      r.map = {cells: (T.cells || []).map(function (c) { return hover(b, c[0], c[1]); })};
    }
    if (T.mode === 'index') {
      var grids = all('img[data-grid]');
      r.grids = grids.length;
      var went = [];
      A.go = function (u) { went.push(u); };
      grids.forEach(function (img) {
        var g = img.getAttribute('data-grid').split(',').map(Number), rect = img.getBoundingClientRect();
        var sx = rect.width / img.naturalWidth, sy = rect.height / img.naturalHeight;
        /* the centre of head (L-1, H-1) */
        var x = rect.left + (g[0] + (g[5] - 0.5) * g[2]) * sx, y = rect.top + (g[1] + (g[4] - 0.5) * g[3]) * sy;
        mouse(img, 'click', x, y);
      });
      r.went = went;
    }
    var pre = document.createElement('pre');
    pre.textContent = 'ANDREA_RESULT ' + JSON.stringify(r);
    document.body.appendChild(pre);
  }
  /* run once every requested head's data is in (pages load them with <script> or on demand) */
  var A = null, t0 = Date.now();
  function wait() {
    A = window.ANDREA;
    /* the token view switches heads in the test: have every head's data in first */
    if (A && A.meta && A.tokenView && !wait.asked) {
      wait.asked = 1;
      A.meta.heads.forEach(function (lh) { A.need(lh[0], lh[1], function () {}); });
    }
    /* head pages keep their PNGs in closed details, loaded lazily: open them and wait for them */
    if (!wait.opened) {
      wait.opened = 1;
      all('details').forEach(function (d) { d.open = true; });
      all('img').forEach(function (i) { i.loading = 'eager'; }); /* off-screen lazy images too */
    }
    var imgs_done = Array.prototype.every.call(document.images, function (i) { return i.complete; });
    /* the map under test is brought near the window (as scrolling would); maps load their data
     * when they are near the window, so wait for those */
    var tw = A && A.meta && widgets()[T.widget || 0];
    if (tw && !tw.visible) { tw.visible = true; tw.draw(); }
    if (A && A.meta && T.mode === 'compare') /* both maps, whatever the window's width */
      widgets().forEach(function (w) { if (!w.visible) { w.visible = true; w.draw(); } });
    var ready = imgs_done && A && (T.mode === 'index' || (A.meta && widgets().every(function (h) { return h.v || !h.visible; }) &&
                (!A.tokenView || (A.tokenView.v && A.meta.heads.every(function (lh) { return A.heads['0:' + lh[0] + '.' + lh[1]]; })))));
    if (ready || Date.now() - t0 > 8000) { if (!ready) r.errors.push('timeout waiting for data'); run(); }
    else setTimeout(wait, 20);
  }
  window.addEventListener('load', function () { setTimeout(wait, 0); });
})();
