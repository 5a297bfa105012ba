/* andrea.js — the interactive side of andrea's pages (docs/report.md, "Interactive views").
 *
 * Data: data/meta.js calls andrea_meta({...}) (model shape, examples, token labels, targets, the
 * colour table); data/L{l}_H{h}.js calls andrea_head(l, h, base64) with the head's attention of
 * every shown example, a zlib stream when meta has "deflate": 1 (inflated with the browser's
 * DecompressionStream): for each example in meta order, the causal lower triangle of its n × n map
 * (row q holds keys 0..q), as little-endian IEEE half floats, or, for an example meta marks "c8": 1
 * (a summarised one), one byte a value: an index into meta.code8 (reports/attn_code8.h), stored
 * as each row less the row above it (mod 256; the "up" filter of PNG); a suite with "same": t in meta has
 * no values of its own: its examples are suite t's, map for map (twin suites). Several checkpoints of one shape
 * (andrea show --also): meta.models names them; checkpoint m > 0 has data/m{m}/L{l}_H{h}.js,
 * calling andrea_head(l, h, base64, m). A head is named "l.h" (checkpoint 0) or "m:l.h". Files load with <script src>, so
 * pages work from file:// with no server and no network.
 * Widgets (each built into an element that carries data-* attributes, see boot() at the end):
 *   heatmap   canvas map of one head on one example: hover readout, wheel/drag/buttons zoom and pan,
 *             log/linear colour scale, double outlines on probe targets
 *   tokens    the example as tokens; hover/click colours the other tokens by the head's attention
 *             from (or to) that token; a layer × head grid switches heads
 *   compare   two heads side by side on one example, hover linked
 * Invariants: token text only ever reaches the page through textContent (never innerHTML);
 * nothing is fetched but this folder's data/*.js files.
 */
(function () {
  'use strict';
  var A = window.ANDREA = {meta: null, heads: {}, waiting: {}, errors: []};
  var base = (function () {
    var s = document.currentScript && document.currentScript.src;
    return s ? s.replace(/assets\/andrea\.js(\?.*)?$/, '') : '';
  })();

  /* ---------- data ---------- */
  var HALF = null;
  function halfTable() {
    if (HALF) return HALF;
    HALF = new Float32Array(65536);
    for (var i = 0; i < 65536; i++) {
      var s = i & 0x8000 ? -1 : 1, e = (i >> 10) & 31, m = i & 1023;
      HALF[i] = e === 0 ? s * m * Math.pow(2, -24) : e === 31 ? (m ? NaN : s * Infinity)
                        : s * (1 + m / 1024) * Math.pow(2, e - 15);
    }
    return HALF;
  }
  window.andrea_meta = function (m) {
    var off = 0, bytes = 0;
    m.examples = [];
    m.suites.forEach(function (su, s) {
      var twin = su.same !== undefined ? m.suites[su.same] : null; /* its maps are an earlier suite's */
      su.examples.forEach(function (ex, e) {
        ex.s = s; ex.e = e;
        if (twin) { ex.twin = true; ex.off = twin.examples[e].off; ex.c8 = twin.examples[e].c8; }
        else {
          ex.off = off; ex.boff = bytes;
          off += ex.n * (ex.n + 1) / 2;
          bytes += ex.n * (ex.n + 1) / 2 * (ex.c8 ? 1 : 2);
        }
        ex.targets = {};
        for (var i = 0; i + 1 < ex.tgt.length; i += 2) ex.targets[ex.tgt[i] * 65536 + ex.tgt[i + 1]] = 1;
        m.examples.push(ex);
      });
    });
    m.total = off;
    m.bytes = bytes;
    if (m.code8) m.code8 = Float32Array.from(m.code8, function (x) { return x === null ? NaN : x; });
    m.lut = [];
    for (var i = 0; i < 256; i++) m.lut.push(parseInt(m.magma.substr(i * 6, 6), 16));
    m.has = {};
    m.heads.forEach(function (lh) { m.has[lh[0] + '.' + lh[1]] = 1; });
    A.meta = m;
  };
  /* An error the page must show (the maps cannot be drawn), once, above the page's content. */
  var shown = false;
  function complain(msg) {
    A.errors.push(msg);
    if (shown || !document.body) return;
    shown = true;
    var p = el('p', 'note', 'The maps cannot be drawn: ' + msg + '.');
    document.body.insertBefore(p, document.body.firstChild);
  }
  /* The bytes of a data file's base64, inflated when meta says so, to done(Uint8Array). */
  function headBytes(b64, key, done) {
    var bin = atob(b64), u = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    if (!A.meta.deflate) { done(u); return; }
    if (typeof DecompressionStream === 'undefined') {
      complain('head ' + key + ': this browser has no DecompressionStream to inflate the data with (Chromium 80, Firefox 113, Safari 16.4 and later have it)');
      return;
    }
    new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream('deflate'))).arrayBuffer().then(
      function (buf) { done(new Uint8Array(buf)); },
      function (e) { complain('head ' + key + ': its data does not inflate (' + e + ')'); });
  }
  /* Undoes the up filter of a summarised example's n-row triangle at byte b (rows from the top). */
  function unfilterUp(u, b, n) {
    for (var q = 1; q < n; q++) {
      var row = b + q * (q + 1) / 2, above = b + (q - 1) * q / 2;
      for (var k = 0; k < q; k++) u[row + k] = (u[row + k] + u[above + k]) & 255;
    }
  }
  window.andrea_head = function (l, h, b64, m) {
    var key = (m || 0) + ':' + l + '.' + h;
    headBytes(b64, key, function (u) {
      var M = A.meta, t = halfTable(), v = new Float32Array(M.total);
      if (u.length !== M.bytes) A.errors.push('head ' + key + ': ' + u.length + ' bytes of data, meta.js wants ' + M.bytes);
      M.examples.forEach(function (ex) {
        if (ex.twin) return;
        var n = ex.n * (ex.n + 1) / 2, o = ex.off, b = ex.boff, i;
        if (ex.c8) {
          unfilterUp(u, b, ex.n);
          for (i = 0; i < n; i++) v[o + i] = M.code8[u[b + i]];
        } else for (i = 0; i < n; i++) v[o + i] = t[u[b + 2 * i] | (u[b + 2 * i + 1] << 8)];
      });
      A.heads[key] = v;
      var w = A.waiting[key] || [];
      delete A.waiting[key];
      w.forEach(function (f) { f(v); });
    });
  };
  /* Calls f(values) once head l.h is loaded (at once when it is). */
  A.need = function (l, h, f, m) {
    m = m || 0;
    var key = m + ':' + l + '.' + h;
    if (A.heads[key]) { f(A.heads[key]); return; }
    if (A.waiting[key]) { A.waiting[key].push(f); return; }
    A.waiting[key] = [f];
    var s = document.createElement('script');
    s.src = base + 'data/' + (m ? 'm' + m + '/' : '') + 'L' + l + '_H' + h + '.js';
    s.onerror = function () { A.errors.push('cannot load ' + s.src); };
    document.head.appendChild(s);
  };
  /* p(q, k) of example ex in a head's values (0 above the diagonal). */
  function prob(v, ex, q, k) { return k > q ? 0 : v[ex.off + q * (q + 1) / 2 + k]; }
  A.prob = prob;
  /* p as stored: 5 digits of fp16, or 3 after "≈" for a summarised example (within 3.1 %) */
  function fmtP(p, ex) {
    if (ex && ex.c8) return isNaN(p) ? 'not a probability' : p === 0 ? '\u2248 0 (< 5e-5)' : '\u2248 ' + (p < 1e-3 ? p.toExponential(2) : p.toPrecision(3));
    return p === 0 ? '0' : p < 1e-4 ? p.toExponential(4) : p.toPrecision(5);
  }
  A.fmtP = fmtP;
  var LOG_MIN = -4;
  function scaled(p, log) {
    if (!log) return p < 0 ? 0 : p > 1 ? 1 : p;
    if (!(p > 0)) return 0;
    var t = (Math.log(p) / Math.LN10 - LOG_MIN) / -LOG_MIN;
    return t < 0 ? 0 : t > 1 ? 1 : t;
  }
  function lutColour(t) { return A.meta.lut[Math.round(t * 255)]; }
  function css(rgb) { return '#' + ('00000' + rgb.toString(16)).slice(-6); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function button(text, title, f) {
    var b = el('button', '', text);
    b.type = 'button';
    b.title = title;
    b.addEventListener('click', f);
    return b;
  }
  function exampleOf(s, e) {
    var su = A.meta.suites[s];
    return su && su.examples[e];
  }
  function tokText(ex, i) { return ex.tok[i]; }
  function modelPrefix(m) {
    var ms = A.meta.models || [];
    return ms.length > 1 ? ms[m || 0] + ' \u00b7 ' : '';
  }
  /* "l.h" or "m:l.h" -> {m, l, h} */
  function parseHead(x) {
    var mm = /^(?:(\d+):)?(\d+)\.(\d+)$/.exec(x || '');
    return mm ? {m: +(mm[1] || 0), l: +mm[2], h: +mm[3]} : null;
  }
  function exampleName(ex) {
    return A.meta.suites[ex.s].name + ' #' + ex.e + ' (' + ex.n + ' tokens' + (ex.c8 ? ', \u2248 summarised to 8 bits' : '') + ')';
  }

  /* ---------- heatmap ---------- */
  var OBS = null;
  function observer() {
    if (!OBS && window.IntersectionObserver)
      OBS = new IntersectionObserver(function (entries) {
        entries.forEach(function (en) {
          var hm = en.target.__hm;
          if (en.isIntersecting && hm && !hm.visible) { hm.visible = true; OBS.unobserve(en.target); hm.draw(); }
        });
      }, {rootMargin: '300px'});
    return OBS;
  }
  /* opts: l, h, s, e, size (px of the map), labels (bool), onHover(q, k) */
  function Heatmap(root, opts) {
    var self = this;
    this.root = root;
    this.o = opts;
    this.log = !!opts.log;
    root.__hm = this;
    root.classList.add('hm');
    root.textContent = '';
    var bar = el('div', 'hm-bar');
    this.title = el('span', 'hm-title');
    bar.appendChild(this.title);
    bar.appendChild(button('+', 'zoom in (or the mouse wheel)', function () { self.zoom(1 / 1.5); }));
    bar.appendChild(button('\u2212', 'zoom out', function () { self.zoom(1.5); }));
    bar.appendChild(button('\u2190', 'pan left (or drag)', function () { self.pan(0, -1); }));
    bar.appendChild(button('\u2192', 'pan right', function () { self.pan(0, 1); }));
    bar.appendChild(button('\u2191', 'pan up', function () { self.pan(-1, 0); }));
    bar.appendChild(button('\u2193', 'pan down', function () { self.pan(1, 0); }));
    bar.appendChild(button('reset', 'whole map', function () { self.reset(); }));
    this.logBtn = button('', 'switch the colour scale', function () { self.setLog(!self.log); });
    this.logBtn.className = 'hm-scale';
    bar.appendChild(this.logBtn);
    this.range = el('span', 'hm-range');
    bar.appendChild(this.range);
    root.appendChild(bar);
    this.canvas = el('canvas', 'hm-canvas');
    this.canvas.__hm = this;
    root.appendChild(this.canvas);
    /* drawn once near the viewport: a page of many maps opens as fast as a page of two */
    this.visible = !observer();
    if (!this.visible) observer().observe(this.canvas);
    this.readout = el('div', 'hm-readout', '\u00a0');
    root.appendChild(this.readout);
    this.hover = null;
    this.canvas.addEventListener('mousemove', function (ev) { self.mouse(ev); });
    this.canvas.addEventListener('mouseleave', function () { self.hover = null; self.draw(); });
    this.canvas.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var c = self.cellAt(ev);
      if (ev.deltaY) self.zoom(ev.deltaY > 0 ? 1.25 : 0.8, c); /* a sideways swipe (deltaY 0) is no zoom */
    }, {passive: false});
    this.canvas.addEventListener('mousedown', function (ev) {
      var c0 = self.cellAt(ev), v0 = {q0: self.q0, k0: self.k0};
      if (!c0) return;
      function move(e2) {
        var r = self.canvas.getBoundingClientRect(), cell = self.S / self.w;
        self.q0 = v0.q0 - Math.round((e2.clientY - ev.clientY) / cell);
        self.k0 = v0.k0 - Math.round((e2.clientX - ev.clientX) / cell);
        self.clamp();
        self.draw();
        void r;
      }
      function up() { window.removeEventListener('mousemove', move); window.removeEventListener('mouseup', up); }
      window.addEventListener('mousemove', move);
      window.addEventListener('mouseup', up);
      ev.preventDefault();
    });
    this.set(opts.l, opts.h, opts.s, opts.e);
  }
  Heatmap.prototype.set = function (l, h, s, e, m) {
    var self = this;
    if (m !== undefined) this.o.m = m;
    m = this.o.m || 0;
    this.o.l = l; this.o.h = h; this.o.s = s; this.o.e = e;
    this.ex = exampleOf(s, e);
    this.v = null;
    if (!this.ex) { this.readout.textContent = 'no example ' + s + '/' + e; return; }
    this.n = this.ex.n;
    this.labels = this.o.labels !== false;
    this.S = this.o.size || 512;
    this.M = this.labels ? 84 : 0;
    this.canvas.width = this.S + this.M + 4;
    this.canvas.height = this.S + this.M + 4;
    this.root.style.maxWidth = Math.max(this.canvas.width, 300) + 'px';
    this.root.setAttribute('data-l', l);
    this.root.setAttribute('data-h', h);
    this.title.textContent = modelPrefix(m) + 'L' + l + ' H' + h + ' \u00b7 ' + exampleName(this.ex);
    this.reset(true);
    this.requested = false;
    this.drawnLoading = false;
    this.draw(); /* asks for the head's data once the map is near the window */
  };
  Heatmap.prototype.load = function () {
    if (this.requested) return;
    this.requested = true;
    var self = this, l = this.o.l, h = this.o.h, m = this.o.m || 0;
    A.need(l, h, function (v) {
      if (self.o.l === l && self.o.h === h && (self.o.m || 0) === m) { self.v = v; self.draw(); }
    }, m);
  };
  Heatmap.prototype.reset = function (quiet) {
    this.q0 = 0; this.k0 = 0; this.w = this.n;
    if (!quiet) this.draw();
    this.showRange();
  };
  Heatmap.prototype.clamp = function () {
    var n = this.n;
    this.w = Math.max(Math.min(this.w, n), Math.min(4, n));
    this.q0 = Math.max(0, Math.min(this.q0, n - this.w));
    this.k0 = Math.max(0, Math.min(this.k0, n - this.w));
  };
  Heatmap.prototype.zoom = function (f, at) {
    var w0 = this.w, w = Math.round(w0 * f);
    if (w === w0) w = f < 1 ? w0 - 1 : w0 + 1;
    var cq = at ? at.q : this.q0 + w0 / 2, ck = at ? at.k : this.k0 + w0 / 2;
    var fq = (cq - this.q0) / w0, fk = (ck - this.k0) / w0;
    this.w = w;
    this.clamp();
    this.q0 = Math.round(cq - fq * this.w);
    this.k0 = Math.round(ck - fk * this.w);
    this.clamp();
    this.draw();
  };
  Heatmap.prototype.pan = function (dq, dk) {
    var step = Math.max(1, Math.round(this.w / 4));
    this.q0 += dq * step;
    this.k0 += dk * step;
    this.clamp();
    this.draw();
  };
  Heatmap.prototype.setLog = function (log) { this.log = log; this.draw(); };
  Heatmap.prototype.showRange = function () {
    var q1 = this.q0 + this.w - 1, k1 = this.k0 + this.w - 1;
    this.range.textContent = 'queries ' + this.q0 + '\u2013' + q1 + ', keys ' + this.k0 + '\u2013' + k1 +
                             ' of ' + this.n;
    this.root.setAttribute('data-view', this.q0 + ',' + this.k0 + ',' + this.w);
    this.logBtn.textContent = this.log ? 'scale: log' : 'scale: linear';
  };
  Heatmap.prototype.cellAt = function (ev) {
    var r = this.canvas.getBoundingClientRect();
    var x = (ev.clientX - r.left) * this.canvas.width / r.width - this.M - 2;
    var y = (ev.clientY - r.top) * this.canvas.height / r.height - this.M - 2;
    if (x < 0 || y < 0 || x >= this.S || y >= this.S) return null;
    var cell = this.S / this.w;
    return {q: this.q0 + Math.floor(y / cell), k: this.k0 + Math.floor(x / cell)};
  };
  Heatmap.prototype.mouse = function (ev) {
    var c = this.cellAt(ev);
    this.showCell(c);
    if (this.o.onHover) this.o.onHover(c);
  };
  /* Readout and highlight of cell c ({q, k} or null). */
  Heatmap.prototype.showCell = function (c) {
    this.hover = c;
    var ro = this.readout;
    if (!c || !this.v) { ro.textContent = '\u00a0'; ro.removeAttribute('data-p'); this.draw(); return; }
    var ex = this.ex, p = prob(this.v, ex, c.q, c.k);
    var t = 'query ' + c.q + ' \u2039' + tokText(ex, c.q) + '\u203a \u2192 key ' + c.k + ' \u2039' + tokText(ex, c.k) + '\u203a: ';
    t += c.k > c.q ? 'masked (a query sees only earlier keys)' : 'p = ' + fmtP(p, ex);
    if (ex.targets[c.q * 65536 + c.k]) t += ' \u00b7 probe target';
    ro.textContent = t;
    ro.setAttribute('data-q', c.q);
    ro.setAttribute('data-k', c.k);
    ro.setAttribute('data-p', c.k > c.q ? '' : p);
    this.draw();
  };
  Heatmap.prototype.draw = function () {
    this.showRange();
    if (!this.visible) { /* near the window now? (the observer only reports changes) */
      var rc = this.canvas.getBoundingClientRect(), wh = window.innerHeight || 800;
      if (rc.top > wh + 300 || rc.bottom < -300) return;
      this.visible = true;
      if (OBS) OBS.unobserve(this.canvas);
    }
    if (!this.v && this.ex) {
      this.load();
      if (this.v) return; /* the data was there: load's callback has drawn */
      if (this.drawnLoading) return;
    }
    var ctx = this.canvas.getContext('2d'), M = this.M, S = this.S, w = this.w, ex = this.ex;
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    this.drawnLoading = !this.v;
    if (!this.v || !ex) {
      ctx.fillStyle = '#888';
      ctx.font = '13px sans-serif';
      ctx.fillText('loading\u2026', M + 10, M + 20);
      return;
    }
    var img = ctx.createImageData(w, w), d = img.data, v = this.v, log = this.log;
    for (var i = 0; i < w; i++) {
      var q = this.q0 + i;
      for (var j = 0; j < w; j++) {
        var k = this.k0 + j, o = (i * w + j) * 4, rgb;
        rgb = k > q ? 0xd6d6dc : lutColour(scaled(v[ex.off + q * (q + 1) / 2 + k], log));
        d[o] = rgb >> 16; d[o + 1] = (rgb >> 8) & 255; d[o + 2] = rgb & 255; d[o + 3] = 255;
      }
    }
    var off = this.off || (this.off = document.createElement('canvas'));
    off.width = w; off.height = w;
    off.getContext('2d').putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    var X = M + 2, Y = M + 2, cell = S / w;
    ctx.drawImage(off, X, Y, S, S);
    /* targets: a dark frame with a light one inside, visible on every colour of the scale */
    var lw = cell >= 8 ? 2 : 1;
    for (var key in ex.targets) {
      var tq = Math.floor(key / 65536), tk = key % 65536;
      if (tq < this.q0 || tq >= this.q0 + w || tk < this.k0 || tk >= this.k0 + w) continue;
      var x = X + (tk - this.k0) * cell, y = Y + (tq - this.q0) * cell;
      ctx.lineWidth = lw;
      ctx.strokeStyle = '#000';
      ctx.strokeRect(x + lw / 2, y + lw / 2, cell - lw, cell - lw);
      if (cell >= 4) {
        ctx.strokeStyle = '#00e5ff';
        ctx.strokeRect(x + lw * 1.5, y + lw * 1.5, cell - 3 * lw, cell - 3 * lw);
      }
    }
    if (this.hover && this.hover.q >= this.q0 && this.hover.q < this.q0 + w && this.hover.k >= this.k0 &&
        this.hover.k < this.k0 + w) {
      ctx.lineWidth = 2;
      ctx.strokeStyle = '#ff2bd6';
      ctx.strokeRect(X + (this.hover.k - this.k0) * cell - 1, Y + (this.hover.q - this.q0) * cell - 1, cell + 2, cell + 2);
    }
    ctx.strokeStyle = '#999';
    ctx.lineWidth = 1;
    ctx.strokeRect(X - 0.5, Y - 0.5, S + 1, S + 1);
    if (M && cell >= 9) {
      var fs = Math.min(12, Math.floor(cell) - 2);
      ctx.font = fs + 'px monospace';
      ctx.fillStyle = '#333';
      ctx.textBaseline = 'middle';
      ctx.textAlign = 'right';
      for (i = 0; i < w; i++) ctx.fillText(short(tokText(ex, this.q0 + i)), X - 4, Y + (i + 0.5) * cell);
      ctx.save();
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'left';
      for (j = 0; j < w; j++) ctx.fillText(short(tokText(ex, this.k0 + j)), -Y + 4, X + (j + 0.5) * cell);
      ctx.restore();
    } else if (M) {
      ctx.font = '12px sans-serif';
      ctx.fillStyle = '#555';
      ctx.textBaseline = 'alphabetic';
      ctx.textAlign = 'left';
      ctx.fillText('keys \u2192 (zoom in for token labels)', X, Y - 8);
      ctx.save();
      ctx.rotate(-Math.PI / 2);
      ctx.fillText('\u2190 queries', -Y - S, X - 8);
      ctx.restore();
    }
  };
  // by code point, not UTF-16 unit: a cut inside a surrogate pair drew half an emoji
  function short(s) { var c = Array.from(s); return c.length > 10 ? c.slice(0, 9).join('') + '\u2026' : s; }
  A.Heatmap = Heatmap;

  /* ---------- token view ---------- */
  /* opts: l, h, s, e, q (selected token), to (bool: attention to the token) */
  function TokenView(root, opts) {
    var self = this, m = A.meta;
    this.o = opts;
    root.classList.add('tv');
    root.textContent = '';
    var ctl = el('div', 'tv-ctl');
    if (m.examples.length > 1) {
      var sel = el('select', 'tv-example');
      m.examples.forEach(function (ex, i) {
        var op = el('option', '', exampleName(ex));
        op.value = i;
        if (ex.s === opts.s && ex.e === opts.e) op.selected = true;
        sel.appendChild(op);
      });
      sel.addEventListener('change', function () {
        var ex = m.examples[+sel.value];
        self.o.s = ex.s; self.o.e = ex.e; self.o.q = null;
        self.build();
      });
      ctl.appendChild(el('label', '', 'example '));
      ctl.lastChild.appendChild(sel);
    }
    this.o.m = this.o.m || 0;
    if ((m.models || []).length > 1) {
      var ms = el('select', 'tv-model');
      m.models.forEach(function (name, i) {
        var op = el('option', '', name);
        op.value = i;
        if (i === self.o.m) op.selected = true;
        ms.appendChild(op);
      });
      ms.addEventListener('change', function () { self.o.m = +ms.value; self.select(self.o.l, self.o.h); });
      ctl.appendChild(el('label', '', 'checkpoint '));
      ctl.lastChild.appendChild(ms);
    }
    this.dirBtn = button('', 'attention FROM the chosen token (to earlier ones) or TO it (from later ones)',
                         function () { self.o.to = !self.o.to; self.paint(); });
    this.dirBtn.className = 'tv-dir';
    ctl.appendChild(this.dirBtn);
    this.logBtn = button('', 'colour scale', function () { self.log = !self.log; self.paint(); });
    this.logBtn.className = 'tv-scale';
    ctl.appendChild(this.logBtn);
    root.appendChild(ctl);
    /* layer × head grid */
    var grid = el('table', 'tv-grid'), tr = el('tr');
    tr.appendChild(el('th'));
    for (var h = 0; h < m.H; h++) tr.appendChild(el('th', '', 'H' + h));
    grid.appendChild(tr);
    this.cells = {};
    for (var l = 0; l < m.L; l++) {
      tr = el('tr');
      tr.appendChild(el('th', '', 'L' + l));
      for (h = 0; h < m.H; h++) {
        var td = el('td'), b = el('button', 'tv-head', l + '.' + h);
        b.type = 'button';
        b.setAttribute('data-lh', l + '.' + h);
        if (!m.has[l + '.' + h]) b.disabled = true;
        (function (l, h) { b.addEventListener('click', function () { self.select(l, h); }); })(l, h);
        this.cells[l + '.' + h] = b;
        td.appendChild(b);
        tr.appendChild(td);
      }
      grid.appendChild(tr);
    }
    root.appendChild(grid);
    this.toks = el('div', 'tv-toks');
    root.appendChild(this.toks);
    this.readout = el('div', 'tv-readout', '\u00a0');
    root.appendChild(this.readout);
    this.links = el('div', 'tv-links');
    root.appendChild(this.links);
    this.mapBox = el('div');
    root.appendChild(this.mapBox);
    this.map = null;
    this.log = false;
    this.build();
  }
  TokenView.prototype.build = function () {
    var self = this, ex = exampleOf(this.o.s, this.o.e);
    this.ex = ex;
    /* a token of the last example, or a #q= past this one, names no token here */
    this.cur = null;
    if (this.o.q !== null && this.o.q !== undefined && !(this.o.q >= 0 && this.o.q < ex.n)) this.o.q = null;
    this.toks.textContent = '';
    this.spans = [];
    for (var i = 0; i < ex.n; i++) {
      var sp = el('span', 'tk', tokText(ex, i));
      sp.setAttribute('data-i', i);
      (function (i) {
        sp.addEventListener('mouseenter', function () { if (self.o.q === null || self.o.q === undefined) self.focus(i, false); });
        sp.addEventListener('click', function () {
          if (self.o.q === i) { self.o.q = null; } else { self.o.q = i; }
          self.focus(i, true);
        });
      })(i);
      this.toks.appendChild(sp);
      this.spans.push(sp);
    }
    this.toks.addEventListener('mouseleave', function () { if (self.o.q === null || self.o.q === undefined) self.focus(null, false); });
    if (!this.map) this.map = new Heatmap(this.mapBox, {l: this.o.l, h: this.o.h, s: this.o.s, e: this.o.e, size: 448,
      onHover: function (c) { if (c && (self.o.q === null || self.o.q === undefined)) self.focus(self.o.to ? c.k : c.q, false); }});
    else this.map.set(this.o.l, this.o.h, this.o.s, this.o.e);
    this.select(this.o.l, this.o.h);
  };
  TokenView.prototype.select = function (l, h) {
    var self = this;
    this.o.l = l; this.o.h = h;
    for (var k in this.cells) this.cells[k].classList.toggle('on', k === l + '.' + h);
    var mi = this.o.m;
    if (this.map.o.l !== l || this.map.o.h !== h || (this.map.o.m || 0) !== mi) this.map.set(l, h, this.o.s, this.o.e, mi);
    this.links.textContent = '';
    var a = el('a', '', 'head page');
    if (A.meta.headPages) { a.href = base + 'heads/L' + l + '_H' + h + '.html'; this.links.appendChild(a); this.links.appendChild(document.createTextNode(' \u00b7 ')); }
    var c = el('a', '', 'compare with another head');
    c.href = base + 'compare.html#a=' + (mi ? mi + ':' : '') + l + '.' + h + '&s=' + this.o.s + '&e=' + this.o.e;
    this.links.appendChild(c);
    A.need(l, h, function (v) { if (self.o.l === l && self.o.h === h && self.o.m === mi) { self.v = v; self.paint(); } }, mi);
    try { history.replaceState(null, '', '#l=' + l + '&h=' + h + '&s=' + this.o.s + '&e=' + this.o.e); } catch (e) { /* file: in some browsers */ }
  };
  TokenView.prototype.focus = function (i, pinned) {
    this.cur = i;
    this.paint();
  };
  TokenView.prototype.paint = function () {
    this.dirBtn.textContent = this.o.to ? 'showing: attention TO the token' : 'showing: attention FROM the token';
    this.logBtn.textContent = this.log ? 'scale: log' : 'scale: linear';
    var ex = this.ex, i = this.o.q !== null && this.o.q !== undefined ? this.o.q : this.cur, v = this.v;
    for (var j = 0; j < this.spans.length; j++) {
      var sp = this.spans[j];
      sp.classList.toggle('sel', j === i);
      sp.classList.toggle('pin', j === this.o.q);
      if (i === null || i === undefined || !v) { sp.style.background = ''; sp.style.color = ''; sp.removeAttribute('title'); sp.removeAttribute('data-p'); continue; }
      var q = this.o.to ? j : i, k = this.o.to ? i : j;
      if (k > q) { sp.style.background = ''; sp.style.color = '#aaa'; sp.removeAttribute('data-p'); sp.title = 'cannot attend (later token)'; continue; }
      /* white to deep orange: an unattended token stays white and readable */
      var p = prob(v, ex, q, k), t = scaled(p, this.log);
      var rgb = (Math.round(255 - 25 * t) << 16) | (Math.round(255 - 170 * t) << 8) | Math.round(255 - 242 * t);
      sp.style.background = css(rgb);
      sp.style.color = t > 0.6 ? '#fff' : '#000';
      sp.setAttribute('data-p', p);
      sp.title = 'query ' + q + ' \u2192 key ' + k + ': p = ' + fmtP(p, ex);
    }
    if (i === null || i === undefined) this.readout.textContent = 'Hover over a token, or click one to keep it.';
    else this.readout.textContent = (this.o.to ? 'attention TO token ' : 'attention FROM token ') + i + ' \u2039' +
      tokText(ex, i) + '\u203a, head L' + this.o.l + ' H' + this.o.h + (this.o.q === i ? ' (pinned: click again to release)' : '');
  };
  A.TokenView = TokenView;

  /* ---------- compare ---------- */
  function headSelect(cur, f) {
    var s = el('select', 'cmp-head'), m = A.meta, nm = Math.max(1, (m.models || []).length);
    for (var mi = 0; mi < nm; mi++)
      m.heads.forEach(function (lh) {
        var o = el('option', '', modelPrefix(mi) + 'L' + lh[0] + ' H' + lh[1]);
        o.value = mi + ':' + lh[0] + '.' + lh[1];
        if (o.value === cur) o.selected = true;
        s.appendChild(o);
      });
    s.addEventListener('change', function () { f(s.value); });
    return s;
  }
  function Compare(root, o) {
    var m = A.meta, self = this;
    root.textContent = '';
    var ctl = el('div', 'cmp-ctl');
    if (m.examples.length > 1) {
      var sel = el('select', 'cmp-example');
      m.examples.forEach(function (ex, i) {
        var op = el('option', '', exampleName(ex));
        op.value = i;
        if (ex.s === o.s && ex.e === o.e) op.selected = true;
        sel.appendChild(op);
      });
      sel.addEventListener('change', function () {
        var ex = m.examples[+sel.value];
        o.s = ex.s; o.e = ex.e;
        self.maps.forEach(function (hm) { hm.set(hm.o.l, hm.o.h, o.s, o.e); });
      });
      ctl.appendChild(el('label', '', 'example '));
      ctl.lastChild.appendChild(sel);
    }
    root.appendChild(ctl);
    var row = el('div', 'cmp-row');
    root.appendChild(row);
    this.maps = [];
    [o.a, o.b].forEach(function (lh, i) {
      var col = el('div', 'cmp-col'), box = el('div');
      var p = parseHead(lh);
      col.appendChild(headSelect(p.m + ':' + p.l + '.' + p.h, function (v) {
        var q = parseHead(v);
        self.maps[i].set(q.l, q.h, o.s, o.e, q.m);
      }));
      col.appendChild(box);
      row.appendChild(col);
      self.maps.push(new Heatmap(box, {l: p.l, h: p.h, m: p.m, s: o.s, e: o.e, size: 400, onHover: function (c) {
        self.maps[1 - i].showCell(c);
      }}));
    });
  }
  A.Compare = Compare;

  /* ---------- score grids and thumbnails: click a head ---------- */
  A.go = function (url) { window.location.href = url; };
  function gridImage(img) {
    var g = img.getAttribute('data-grid').split(',').map(Number); /* x0, y0, cell w, cell h, L, H */
    function at(ev) {
      var r = img.getBoundingClientRect();
      var x = (ev.clientX - r.left) * img.naturalWidth / r.width, y = (ev.clientY - r.top) * img.naturalHeight / r.height;
      var h = Math.floor((x - g[0]) / g[2]), l = Math.floor((y - g[1]) / g[3]);
      return l >= 0 && h >= 0 && l < g[4] && h < g[5] ? {l: l, h: h} : null;
    }
    img.addEventListener('mousemove', function (ev) {
      var c = at(ev);
      img.style.cursor = c ? 'pointer' : '';
      img.title = c ? 'L' + c.l + ' H' + c.h + ': open its page' : '';
    });
    img.addEventListener('click', function (ev) {
      var c = at(ev);
      if (c) A.go(img.getAttribute('data-href').replace('{l}', c.l).replace('{h}', c.h));
    });
  }

  /* ---------- token lists of the head pages ---------- */
  /* Fills a head page's token-list slot from data/meta.js (each example's tokens are there once,
   * not in every page), when its <details> is open or first opened. textContent: the labels are
   * shown as text, whatever bytes a token holds. */
  function tokenList(slot) {
    var ex = exampleOf(num(slot.getAttribute('data-s'), -1), num(slot.getAttribute('data-e'), -1));
    var box = slot.parentNode;
    function fill() {
      if (slot.__filled || !ex) return;
      slot.__filled = true;
      for (var i = 0; i < ex.n; i++) {
        var t = el('span', 'tok');
        t.appendChild(el('i', '', String(i)));
        t.appendChild(document.createTextNode(tokText(ex, i)));
        slot.appendChild(t);
        slot.appendChild(document.createTextNode(' ')); /* lets a long example wrap between tokens */
      }
    }
    if (!ex) A.errors.push('no example ' + slot.getAttribute('data-s') + '/' + slot.getAttribute('data-e') + ' in data/meta.js');
    else if (box && box.tagName === 'DETAILS' && !box.open) box.addEventListener('toggle', function () { if (box.open) fill(); });
    else fill();
  }

  /* A head page's examples without a PNG, written as one placeholder (.ex-list: head, suite and
   * count): the figures the page would otherwise hold, each an interactive map, a link to the
   * token view and a token list (open for the first two). */
  function exampleFigures(list) {
    var l = num(list.getAttribute('data-l'), 0), h = num(list.getAttribute('data-h'), 0);
    var s = num(list.getAttribute('data-s'), 0), n = num(list.getAttribute('data-n'), 0);
    for (var e = 0; e < n; e++) {
      var ex = exampleOf(s, e), fig = el('figure'), hm = el('div', 'hm-slot'), links = el('div'), a = el('a', '', 'token view of this example');
      hm.setAttribute('data-l', l); hm.setAttribute('data-h', h); hm.setAttribute('data-s', s); hm.setAttribute('data-e', e);
      a.href = '../explore.html#l=' + l + '&h=' + h + '&s=' + s + '&e=' + e;
      links.appendChild(a);
      var cap = el('figcaption', 'toks'), det = el('details'), tok = el('span', 'tok-slot');
      det.open = e < 2;
      det.appendChild(el('summary', '', 'example ' + e + ', ' + (ex ? ex.n : '?') + ' tokens'));
      tok.setAttribute('data-s', s); tok.setAttribute('data-e', e);
      det.appendChild(tok);
      cap.appendChild(det);
      fig.appendChild(hm); fig.appendChild(links); fig.appendChild(cap);
      list.parentNode.insertBefore(fig, list);
    }
    list.parentNode.removeChild(list);
  }

  /* ---------- boot ---------- */
  function hashArgs() {
    var r = {};
    (location.hash || '').replace(/^#/, '').split('&').forEach(function (kv) {
      var p = kv.split('=');
      if (!p[0]) return;
      /* a hand-edited link with a bad escape (%E0) keeps the page drawing: that value is ignored */
      try { r[p[0]] = decodeURIComponent(p[1] || ''); } catch (e) { /* URIError */ }
    });
    return r;
  }
  function num(x, d) { var v = parseInt(x, 10); return isNaN(v) ? d : v; }
  function boot() {
    var t0 = performance.now();
    Array.prototype.forEach.call(document.querySelectorAll('img[data-grid]'), gridImage);
    var m = A.meta;
    if (!m) {
      if (document.querySelector('.hm-slot,.tv-slot,.cmp-slot,.tok-slot,.ex-list')) A.errors.push('data/meta.js did not load');
      return;
    }
    var args = hashArgs(), first = m.heads[0] || [0, 0];
    Array.prototype.forEach.call(document.querySelectorAll('.ex-list'), exampleFigures);
    Array.prototype.forEach.call(document.querySelectorAll('.tok-slot'), tokenList);
    Array.prototype.forEach.call(document.querySelectorAll('.hm-slot'), function (d) {
      new Heatmap(d, {l: num(d.getAttribute('data-l'), 0), h: num(d.getAttribute('data-h'), 0), m: num(d.getAttribute('data-m'), 0),
                      s: num(d.getAttribute('data-s'), 0), e: num(d.getAttribute('data-e'), 0),
                      size: num(d.getAttribute('data-size'), 512), labels: d.getAttribute('data-labels') !== '0'});
    });
    Array.prototype.forEach.call(document.querySelectorAll('.tv-slot'), function (d) {
      var l = num(args.l, num(d.getAttribute('data-l'), first[0])), h = num(args.h, num(d.getAttribute('data-h'), first[1]));
      if (!m.has[l + '.' + h]) { l = first[0]; h = first[1]; }
      var s = num(args.s, 0), e = num(args.e, 0);
      if (!exampleOf(s, e)) { s = m.examples[0].s; e = m.examples[0].e; }
      A.tokenView = new TokenView(d, {l: l, h: h, s: s, e: e, m: Math.min(num(args.m, 0), Math.max(0, (m.models || []).length - 1)), q: args.q !== undefined ? num(args.q, null) : null, to: args.to === '1'});
    });
    Array.prototype.forEach.call(document.querySelectorAll('.cmp-slot'), function (d) {
      var s = num(args.s, 0), e = num(args.e, 0);
      if (!exampleOf(s, e)) { s = m.examples[0].s; e = m.examples[0].e; }
      var nm = Math.max(1, (m.models || []).length);
      function ok(x) { var p = parseHead(x); return p && p.m < nm && m.has[p.l + '.' + p.h]; }
      var a = ok(args.a) ? args.a : first[0] + '.' + first[1];
      var second = m.heads[1] || first, b = ok(args.b) && args.b !== a ? args.b : (second[0] + '.' + second[1] === a ? first[0] + '.' + first[1] : second[0] + '.' + second[1]);
      A.compare = new Compare(d, {a: a, b: b, s: s, e: e});
    });
    A.bootMs = performance.now() - t0;
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();
})();
