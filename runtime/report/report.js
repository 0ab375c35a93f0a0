// The report page's script: the gait player (2D side view, 3D view turned
// by dragging), the plots as SVG with one circle per data point, the
// gallery and the lineage. Plain JavaScript, no library, no network.
//
// A real file so that it can be read, edited and checked (scripts/lint.sh
// runs `node --check` on it); the build embeds it (EmbedScript.cmake) as
// the text reportScript() returns (ReportScript.cpp), without these leading
// comment lines.

'use strict';
window.__errors = [];
window.addEventListener('error', function (e) {
  window.__errors.push(String(e.message));
  document.body.setAttribute('data-errors', String(window.__errors.length));
  var box = document.getElementById('errors');
  if (box) { box.hidden = false; box.textContent += 'script error: ' + e.message + '\n'; }
});
var D = JSON.parse(document.getElementById('data').textContent);
var W = D.world || {dim: 2, up: 1, ground_y: 0, profile: [], dt: 0.004, steps: 1};
// How gaits are drawn (colours, strokes, the 3D view): the one description
// the SVG pictures and the videos use too (runtime/evolve/record/GaitLook.h).
var LOOK = JSON.parse(document.getElementById('look').textContent);
var SVGNS = 'http://www.w3.org/2000/svg';
function el(tag, attrs, parent) {
  var e = document.createElementNS(SVGNS, tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function fmt(v) { return v === null || v === undefined ? '-' : Number(v).toPrecision(4); }
// The ground under (x, y): a 3D height field (bilinear, edges continued),
// a 2D profile (linear, flat beyond the ends), or flat.
function cellOf(g, v) {
  var i = 0;
  while (i + 2 < g.length && v >= g[i + 1]) ++i;
  if (v < g[i]) return [i, 0];
  var t = (v - g[i]) / (g[i + 1] - g[i]);
  return [i, t > 1 ? 1 : t];
}
function groundAt(x, y) {
  var f = W.field;
  if (W.dim === 3) {
    if (!f) return W.ground_y;
    var a = cellOf(f.xs, x), b = cellOf(f.ys, y), n = f.xs.length, i = a[0], u = a[1], j = b[0];
    var H = function (i, j) { return f.h[j * n + i]; };
    var r0 = H(i, j) + u * (H(i + 1, j) - H(i, j)), r1 = H(i, j + 1) + u * (H(i + 1, j + 1) - H(i, j + 1));
    return r0 + b[1] * (r1 - r0);
  }
  var p = W.profile;
  if (!p || p.length === 0) return W.ground_y;
  var i = 0;
  while (i + 1 < p.length && x >= p[i + 1][0]) ++i;
  if (x < p[0][0] || i + 1 === p.length) return p[i][1];
  return p[i][1] + (p[i + 1][1] - p[i][1]) * (x - p[i][0]) / (p[i + 1][0] - p[i][0]);
}
var PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#17becf'];

// A line plot: series [{name, colour, pts: [[x, y], ...]}]; every finite
// point is a circle (class "pt"), so the page's data can be counted.
function linePlot(parent, o) {
  var w = o.width || 560, h = o.height || 260, L = 62, R = 12, T = 26, B = 40;
  var svg = el('svg', {width: w, height: h, viewBox: '0 0 ' + w + ' ' + h, 'class': 'plot'}, parent);
  el('text', {x: L, y: 16, 'class': 'ptitle'}, svg).textContent = o.title;
  var xs = [], ys = [], n = 0;
  o.series.forEach(function (s) {
    s.pts = s.pts.filter(function (p) { return p[1] !== null && isFinite(p[1]); });
    s.pts.forEach(function (p) { xs.push(p[0]); ys.push(p[1]); });
  });
  svg.setAttribute('data-series', String(o.series.length));
  if (xs.length === 0) {
    el('text', {x: w / 2, y: h / 2, 'text-anchor': 'middle', 'class': 'none'}, svg).textContent = 'no data yet';
    svg.setAttribute('data-points', '0');
    return svg;
  }
  var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
  var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
  if (x1 === x0) { x0 -= 0.5; x1 += 0.5; }
  if (y1 === y0) { y0 -= Math.abs(y0) * 0.1 + 0.5; y1 += Math.abs(y1) * 0.1 + 0.5; }
  var pad = (y1 - y0) * 0.05; y0 -= pad; y1 += pad;
  function X(v) { return L + (v - x0) / (x1 - x0) * (w - L - R); }
  function Y(v) { return h - B - (v - y0) / (y1 - y0) * (h - T - B); }
  el('rect', {x: L, y: T, width: w - L - R, height: h - T - B, 'class': 'frame'}, svg);
  // whole-number x (generations, iterations): whole-number ticks
  var whole = xs.every(function (v) { return v === Math.round(v); }), xt = [];
  for (var k = 0; k <= 4; ++k) {
    var yv = y0 + (y1 - y0) * k / 4, xv = x0 + (x1 - x0) * k / 4;
    el('text', {x: L - 4, y: Y(yv) + 4, 'text-anchor': 'end', 'class': 'tick'}, svg).textContent = fmt(yv);
    if (whole) xv = Math.round(xv);
    if (xt.indexOf(xv) >= 0 || xv < x0 || xv > x1) continue;
    xt.push(xv);
    el('text', {x: X(xv), y: h - B + 14, 'text-anchor': 'middle', 'class': 'tick'}, svg).textContent =
        whole ? String(xv) : fmt(xv);
  }
  el('text', {x: (L + w - R) / 2, y: h - 6, 'text-anchor': 'middle', 'class': 'axis'}, svg).textContent = o.xLabel;
  el('text', {x: 12, y: (T + h - B) / 2, 'text-anchor': 'middle', 'class': 'axis',
              transform: 'rotate(-90 12 ' + (T + h - B) / 2 + ')'}, svg).textContent = o.yLabel;
  o.series.forEach(function (s, i) {
    var c = s.colour || PALETTE[i % PALETTE.length];
    el('polyline', {points: s.pts.map(function (p) { return X(p[0]) + ',' + Y(p[1]); }).join(' '),
                    fill: 'none', stroke: c, 'stroke-width': s.thin ? 1 : 1.8,
                    'stroke-opacity': s.opacity || 1}, svg);
    s.pts.forEach(function (p) {
      var pt = el('circle', {cx: X(p[0]), cy: Y(p[1]), r: s.thin ? 1.2 : 2.4, fill: c, 'class': 'pt'}, svg);
      el('title', {}, pt).textContent = s.name + ': (' + fmt(p[0]) + ', ' + fmt(p[1]) + ')';
      ++n;
    });
    if (!o.noLegend) {
      var ly = T + 14 + 14 * i;
      el('line', {x1: w - R - 110, y1: ly - 4, x2: w - R - 94, y2: ly - 4, stroke: c, 'stroke-width': 2}, svg);
      el('text', {x: w - R - 90, y: ly, 'class': 'tick'}, svg).textContent = s.name;
    }
  });
  svg.setAttribute('data-points', String(n));
  return svg;
}

// ---- the gait player -------------------------------------------------
function decode(m) {
  var s = m.scale || 1, d = m.dim || W.dim;
  m.frames = m.f.map(function (row) { return row.map(function (v) { return v / s; }); });
  if (m.o) m.objs = m.o.map(function (row) { return row.map(function (v) { return v / s; }); });
  m.n = m.frames[0].length / d;
  m.com = m.frames.map(function (f) {
    var c = [0, 0, 0];
    for (var i = 0; i < m.n; ++i) for (var k = 0; k < d; ++k) c[k] += f[i * d + k] / m.n;
    return c;
  });
  var f0 = m.frames[0], lo = [1e9, 1e9, 1e9], hi = [-1e9, -1e9, -1e9];
  for (var i = 0; i < m.n; ++i) for (var k = 0; k < d; ++k) {
    lo[k] = Math.min(lo[k], f0[i * d + k]); hi[k] = Math.max(hi[k], f0[i * d + k]);
  }
  m.size = Math.max(hi[0] - lo[0], hi[1] - lo[1], d === 3 ? hi[2] - lo[2] : 0, 0.05);
  return m;
}
// The colour of x on LOOK.spring's ramp: mid at 0, toward low below and
// high above (GaitLook.h, look::at).
function rampColour(x) {
  var R = LOOK.spring, w = Math.abs(x), to = x < 0 ? R.low : R.high;
  var c = R.mid.map(function (v, k) { return Math.round(v + w * (to[k] - v)); });
  return 'rgb(' + c.join(',') + ')';
}
// Spring s in frame i: the controller's output when the motion has it
// (m.a, in thousandths), else its strain relative to its amplitude
// (look::springValue): red contracted, orange at rest, blue extended.
function springColour(m, i, s) {
  var f = m.frames[i], sp = m.springs[s], d = m.dim;
  if (!sp[3]) return LOOK.spring.passive;
  var a;
  if (m.a && m.a[i] && m.a[i].length > s) a = m.a[i][s] / 1000;
  else {
    var L = 0;
    for (var k = 0; k < d; ++k) { var v = f[sp[0] * d + k] - f[sp[1] * d + k]; L += v * v; }
    a = sp[2] > 0 ? (Math.sqrt(L) / sp[2] - 1) / Math.abs(sp[3]) : 0;
  }
  return rampColour(Math.max(-1, Math.min(1, a)));
}
// Particle j of a particle body (m.actuators) in frame i: passive ones as
// passive springs, the others by their actuator's output (m.a) on the
// springs' ramp.
function particleColour(m, i, j) {
  var k = m.actuators[j];
  if (k < 0) return LOOK.spring.passive;
  var a = m.a && m.a[i] && m.a[i].length > k ? m.a[i][k] / 1000 : 0;
  return rampColour(Math.max(-1, Math.min(1, a)));
}
// Projection of a point: 2D side view; in 3D the pictures' orthographic view
// (look::View) from `yaw` and `elevation`. Returns [screen x, screen y,
// depth], depth larger nearer.
function project(p, view) {
  if (W.dim !== 3) return [p[0], p[W.up], 0];
  var u = W.up, x = p[0], y = p[u === 2 ? 1 : 2], z = p[u];
  var cy = Math.cos(view.yaw), sy = Math.sin(view.yaw);
  var ce = Math.cos(view.elevation), se = Math.sin(view.elevation);
  return [cy * x + sy * y, -se * sy * x + se * cy * y + ce * z, sy * ce * x - cy * ce * y + se * z];
}
function Player(canvas, m, opts) {
  this.c = canvas; this.ctx = canvas.getContext('2d'); this.opts = opts || {};
  this.view = {yaw: LOOK.view.yaw, elevation: LOOK.view.elevation};
  this.speed = 1; this.playing = !this.opts.still; this.t = 0;
  this.load(m);
  var self = this, drag = null;
  if (W.dim === 3 && !this.opts.still) {
    canvas.addEventListener('mousedown', function (e) { drag = [e.clientX, e.clientY]; });
    window.addEventListener('mouseup', function () { drag = null; });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      self.view.yaw -= (e.clientX - drag[0]) * 0.01;
      self.view.elevation = Math.max(-0.2, Math.min(1.5, self.view.elevation + (e.clientY - drag[1]) * 0.01));
      drag = [e.clientX, e.clientY];
      self.draw();
    });
  }
}
Player.prototype.load = function (m) {
  this.m = m.frames ? m : decode(m); this.t = 0; this.i = 0;
  this.duration = Math.max(1e-9, this.m.t[this.m.t.length - 1] * W.dt);
  if (this.onload) this.onload();
  this.draw();
};
Player.prototype.frameAt = function (simTime) {
  var t = this.m.t, step = simTime / W.dt, i = 0;
  while (i + 1 < t.length && t[i + 1] <= step) ++i;
  return i;
};
Player.prototype.tick = function (seconds) {
  if (!this.playing || this.m.frames.length < 2) return;
  this.t = (this.t + seconds * this.speed) % this.duration;
  this.i = this.frameAt(this.t);
  this.draw();
};
Player.prototype.seek = function (i) {
  this.i = Math.max(0, Math.min(this.m.frames.length - 1, i));
  this.t = this.m.t[this.i] * W.dt; this.draw();
};
Player.prototype.draw = function () {
  var m = this.m, f = m.frames[this.i], ctx = this.ctx, c = this.c, d = m.dim, view = this.view;
  var com = m.com[this.i], span = m.size * (this.opts.still ? 1.6 : 2.6);
  var scale = Math.min(c.width, c.height * 1.6) / span;
  var pc = project(com, view), self = this;
  var gy = W.dim === 3 ? project([com[0], com[1], groundAt(com[0], com[1])], view)[1] : groundAt(com[0]);
  var ox = c.width / 2 - pc[0] * scale, oy = c.height * 0.72 + gy * scale;
  function S(p) { var q = project(p, view); return [ox + q[0] * scale, oy - q[1] * scale, q[2]]; }
  function P(j) { return d === 3 ? [f[j * 3], f[j * 3 + 1], f[j * 3 + 2]] : [f[j * 2], f[j * 2 + 1]]; }
  ctx.fillStyle = LOOK.background; ctx.fillRect(0, 0, c.width, c.height);
  this.drawGround(S, com, span);
  this.drawBoxes(S);
  this.drawObjects(S);
  // the centre of mass's trail so far
  ctx.strokeStyle = LOOK.trail; ctx.globalAlpha = 0.8; ctx.lineWidth = 1.5; ctx.beginPath();
  for (var k = 0; k <= this.i; ++k) {
    var q = S(d === 3 ? m.com[k] : [m.com[k][0], m.com[k][1]]);
    if (k === 0) ctx.moveTo(q[0], q[1]); else ctx.lineTo(q[0], q[1]);
  }
  ctx.stroke(); ctx.globalAlpha = 1;
  // the body's parts under the springs, each kind its colour (as best.svg)
  if (m.parts) {
    ctx.globalAlpha = LOOK.partOpacity;
    m.parts.cells.forEach(function (cell) {
      if (cell.length < 3 || (d === 3 && cell.length > 5)) return; // 3D: faces only
      ctx.fillStyle = m.parts.colours[cell[0]]; ctx.beginPath();
      for (var k = 1; k < cell.length; ++k) {
        var q = S(P(cell[k]));
        if (k === 1) ctx.moveTo(q[0], q[1]); else ctx.lineTo(q[0], q[1]);
      }
      ctx.closePath(); ctx.fill();
    });
    ctx.globalAlpha = 1;
  }
  var order = m.springs.map(function (s, k) { return k; });
  if (d === 3) {
    var depth = order.map(function (k) { return S(P(m.springs[k][0]))[2] + S(P(m.springs[k][1]))[2]; });
    order.sort(function (a, b) { return depth[a] - depth[b]; }); // far to near
  }
  ctx.lineCap = 'round';
  var thin = this.opts.still ? 0.5 : 1; // the gallery's small pictures: half the strokes
  order.forEach(function (k) {
    var s = m.springs[k], a = S(P(s[0])), b = S(P(s[1]));
    ctx.strokeStyle = springColour(m, self.i, k);
    ctx.lineWidth = (s[3] ? LOOK.spring.actuatedWidth : LOOK.spring.passiveWidth) * thin;
    ctx.beginPath(); ctx.moveTo(a[0], a[1]); ctx.lineTo(b[0], b[1]); ctx.stroke();
  });
  ctx.fillStyle = LOOK.point.colour;
  var radius = LOOK.point.radius * thin * (m.actuators ? 0.6 : 1); // particles: smaller
  for (var j = 0; j < m.n; ++j) {
    if (m.actuators) ctx.fillStyle = particleColour(m, self.i, j);
    var q2 = S(P(j)); ctx.beginPath(); ctx.arc(q2[0], q2[1], radius, 0, 6.3); ctx.fill();
  }
  if (!this.opts.still) {
    ctx.fillStyle = '#222'; ctx.font = '13px sans-serif';
    ctx.fillText('t = ' + (m.t[this.i] * W.dt).toFixed(3) + ' s (step ' + m.t[this.i] + ')   x = ' +
                 com[0].toFixed(3), 10, 18);
    if (m.parts) { // the legend of the part colours, along the bottom
      ctx.font = '12px sans-serif';
      var lx = 10, ly = c.height - 10;
      m.parts.names.forEach(function (name, k) {
        ctx.globalAlpha = 0.6; ctx.fillStyle = m.parts.colours[k];
        ctx.fillRect(lx, ly - 10, 10, 10); ctx.globalAlpha = 1;
        ctx.fillStyle = '#222'; ctx.fillText(name, lx + 14, ly);
        lx += 26 + ctx.measureText(name).width;
      });
    }
    c.setAttribute('data-frame', String(this.i));
  }
  if (this.ondraw) this.ondraw();
};
// The scene's boxes: rectangles in 2D, their twelve edges in 3D.
Player.prototype.drawBoxes = function (S) {
  var ctx = this.ctx;
  var B = LOOK.sceneBox;
  ctx.strokeStyle = B.stroke; ctx.lineWidth = B.width; ctx.fillStyle = B.fill;
  (W.boxes || []).forEach(function (b) {
    var lo = b[0], hi = b[1];
    if (W.dim !== 3) {
      var p = S([lo[0], hi[1]]), q = S([hi[0], lo[1]]);
      ctx.fillRect(p[0], p[1], q[0] - p[0], q[1] - p[1]);
      ctx.strokeRect(p[0], p[1], q[0] - p[0], q[1] - p[1]);
      return;
    }
    for (var a = 0; a < 8; ++a)
      for (var axis = 0; axis < 3; ++axis) {
        if (a & (1 << axis)) continue;
        var c = [0, 1, 2].map(function (k) { return a & (1 << k) ? hi[k] : lo[k]; });
        var d = c.slice(); d[axis] = hi[axis];
        var u = S(c), v = S(d);
        ctx.beginPath(); ctx.moveTo(u[0], u[1]); ctx.lineTo(v[0], v[1]); ctx.stroke();
      }
  });
};
// The movable objects, where they are at this frame (else where they start).
Player.prototype.drawObjects = function (S) {
  var ctx = this.ctx, m = this.m, i = this.i;
  var B = LOOK.object;
  ctx.strokeStyle = B.stroke; ctx.lineWidth = B.width; ctx.fillStyle = B.fill;
  (W.objects || []).forEach(function (b, k) {
    var d = W.dim, c = [], h = [];
    for (var a = 0; a < d; ++a) {
      h.push((b[1][a] - b[0][a]) / 2);
      c.push(m.objs && m.objs[i] ? m.objs[i][k * d + a] : (b[0][a] + b[1][a]) / 2);
    }
    var lo = c.map(function (v, a) { return v - h[a]; }), hi = c.map(function (v, a) { return v + h[a]; });
    if (d !== 3) {
      var p = S([lo[0], hi[1]]), q = S([hi[0], lo[1]]);
      ctx.fillRect(p[0], p[1], q[0] - p[0], q[1] - p[1]);
      ctx.strokeRect(p[0], p[1], q[0] - p[0], q[1] - p[1]);
      return;
    }
    for (var e = 0; e < 8; ++e)
      for (var axis = 0; axis < 3; ++axis) {
        if (e & (1 << axis)) continue;
        var u = [0, 1, 2].map(function (k2) { return e & (1 << k2) ? hi[k2] : lo[k2]; });
        var v = u.slice(); v[axis] = hi[axis];
        var U = S(u), V = S(v);
        ctx.beginPath(); ctx.moveTo(U[0], U[1]); ctx.lineTo(V[0], V[1]); ctx.stroke();
      }
  });
};
Player.prototype.drawGround = function (S, com, span) {
  var ctx = this.ctx, x0 = com[0] - span * 1.5, x1 = com[0] + span * 1.5, steps = 60, k, x;
  var G = LOOK.ground;
  ctx.strokeStyle = G.colour; ctx.lineWidth = G.width; ctx.fillStyle = G.fill;
  if (W.dim !== 3) {
    ctx.beginPath();
    for (k = 0; k <= steps; ++k) {
      x = x0 + (x1 - x0) * k / steps; var q = S([x, groundAt(x)]);
      if (k === 0) ctx.moveTo(q[0], q[1]); else ctx.lineTo(q[0], q[1]);
    }
    var e = S([x1, groundAt(x1)]), b = S([x0, groundAt(x0)]);
    ctx.lineTo(e[0], this.c.height); ctx.lineTo(b[0], this.c.height); ctx.closePath();
    ctx.fill(); ctx.stroke();
    ctx.strokeStyle = G.marks; ctx.lineWidth = 1; // marks every 0.1 so motion shows
    for (x = Math.ceil(x0 * 10) / 10; x < x1; x += 0.1) {
      var m1 = S([x, groundAt(x)]); ctx.beginPath(); ctx.moveTo(m1[0], m1[1]); ctx.lineTo(m1[0] - 6, m1[1] + 8); ctx.stroke();
    }
    return;
  }
  var y0 = com[1] - span * 1.5, y1 = com[1] + span * 1.5, g = 0.1;
  ctx.strokeStyle = G.grid; ctx.lineWidth = 1;
  for (x = Math.ceil(x0 / g) * g; x < x1; x += g) {
    ctx.beginPath();
    for (k = 0; k <= steps; ++k) {
      var yk = y0 + (y1 - y0) * k / steps, a = S([x, yk, groundAt(x, yk)]);
      if (k === 0) ctx.moveTo(a[0], a[1]); else ctx.lineTo(a[0], a[1]);
    }
    ctx.stroke();
  }
  for (var y = Math.ceil(y0 / g) * g; y < y1; y += g) {
    ctx.beginPath();
    for (k = 0; k <= steps; ++k) {
      x = x0 + (x1 - x0) * k / steps; var q3 = S([x, y, groundAt(x, y)]);
      if (k === 0) ctx.moveTo(q3[0], q3[1]); else ctx.lineTo(q3[0], q3[1]);
    }
    ctx.stroke();
  }
};

var players = [];
var clock = {last: Date.now()};
setInterval(function () {
  var now = Date.now(), dt = Math.min(0.2, (now - clock.last) / 1000);
  clock.last = now;
  players.forEach(function (p) { p.tick(dt); });
}, 33);

function controls(p, box) {
  var bar = document.createElement('div'); bar.className = 'controls'; box.appendChild(bar);
  var play = document.createElement('button'); play.textContent = p.playing ? 'pause' : 'play';
  play.id = box.id + '-play';
  play.onclick = function () { p.playing = !p.playing; play.textContent = p.playing ? 'pause' : 'play'; };
  var speed = document.createElement('select');
  [0.1, 0.25, 0.5, 1, 2, 4].forEach(function (v) {
    var o = document.createElement('option'); o.value = v; o.textContent = v + 'x';
    if (v === 1) o.selected = true; speed.appendChild(o);
  });
  speed.onchange = function () { p.speed = Number(speed.value); };
  var scrub = document.createElement('input'); scrub.type = 'range'; scrub.min = 0;
  scrub.oninput = function () { p.playing = false; play.textContent = 'play'; p.seek(Number(scrub.value)); };
  p.onload = function () { scrub.max = p.m.frames.length - 1; };
  p.onload();
  p.ondraw = function () { scrub.value = p.i; };
  p.ondraw();
  bar.appendChild(play); bar.appendChild(document.createTextNode(' speed ')); bar.appendChild(speed);
  bar.appendChild(document.createTextNode(' time ')); bar.appendChild(scrub);
  if (W.dim === 3) bar.appendChild(document.createTextNode('  drag the picture to turn the view'));
}
function addPlayer(boxId, motion, w, h, paused) {
  var box = document.getElementById(boxId);
  var cv = document.createElement('canvas'); cv.width = w; cv.height = h; box.appendChild(cv);
  var p = new Player(cv, motion); p.playing = !paused; players.push(p); controls(p, box);
  return p;
}

function figures() {
  var g = D.generations || [], last = g.length ? g[g.length - 1] : null, rows = [];
  if (D.kind === 'evolve') {
    rows.push(['generations completed', g.length]);
    if (last) {
      rows.push(['designs evaluated', last.designs]);
      rows.push(['time', fmt(last.elapsed) + ' s']);
      rows.push(['designs / s', last.elapsed ? fmt(last.designs / last.elapsed) : '-']);
    }
    if (D.best_id !== undefined) rows.push(['best design', D.best_id + ' (fitness ' + fmt(D.best_fitness) + ')']);
  }
  (D.figures || []).forEach(function (r) { rows.push(r); });
  var t = document.getElementById('figures');
  rows.forEach(function (r) {
    var tr = document.createElement('tr'); tr.innerHTML = '<th></th><td></td>';
    tr.children[0].textContent = r[0]; tr.children[1].textContent = r[1]; t.appendChild(tr);
  });
}
function plots() {
  var g = D.generations || [];
  function s(name, key, colour) { return {name: name, colour: colour, pts: g.map(function (r) { return [r.g, r[key]]; })}; }
  var box = document.getElementById('plots');
  if (D.kind === 'evolve') {
    linePlot(box, {title: 'fitness over generations', xLabel: 'generation', yLabel: 'fitness',
                   series: [s('max', 'max', '#d62728'), s('median', 'median', '#1f77b4'), s('min', 'min', '#7f7f7f')]});
    var dbox = document.getElementById('diff');
    linePlot(dbox, {title: 'learning gain (median)', xLabel: 'generation', yLabel: 'loss[0] - min loss', width: 370, noLegend: true, series: [s('gain', 'gain', '#2ca02c')]});
    linePlot(dbox, {title: 'monotonicity (median)', xLabel: 'generation', yLabel: 'fraction of falls', width: 370, noLegend: true, series: [s('monotonicity', 'mono', '#9467bd')]});
    linePlot(dbox, {title: 'gradient-norm variation (median)', xLabel: 'generation', yLabel: 'std / mean of |g|', width: 370, noLegend: true, series: [s('cv', 'cv', '#ff7f0e')]});
  }
  var curves = D.curves || [];
  if (curves.length) {
    var gmax = Math.max.apply(null, curves.map(function (c) { return c.g; })) || 1;
    linePlot(document.getElementById('curves'), {
      title: 'learning curves of each generation\'s best (light: early, dark: late)',
      xLabel: 'iteration', yLabel: 'loss', noLegend: true,
      series: curves.map(function (c) {
        var k = c.g / gmax, col = 'rgb(' + Math.round(200 - 170 * k) + ',' + Math.round(210 - 120 * k) + ',' + Math.round(240 - 60 * k) + ')';
        return {name: 'gen ' + c.g + ' design ' + c.id, colour: col, thin: true,
                pts: c.losses.map(function (v, i) { return [i, v]; })};
      })});
  }
  (D.plots || []).forEach(function (p) { linePlot(document.getElementById('curves'), p); });
}
function gallery(main) {
  var box = document.getElementById('gallery');
  (D.gallery || []).forEach(function (e) {
    var cell = document.createElement('div'); cell.className = 'cell';
    var cv = document.createElement('canvas'); cv.width = 150; cv.height = 100; cell.appendChild(cv);
    var cap = document.createElement('div');
    cap.textContent = 'gen ' + e.g + ' · design ' + e.id + ' · ' + fmt(e.fitness); cell.appendChild(cap);
    box.appendChild(cell);
    if (e.motion === null || e.motion === undefined) { cap.textContent += ' (no gait)'; return; }
    var m = decode(D.motions[e.motion]);
    new Player(cv, m, {still: true}).seek(Math.floor(m.frames.length / 2)); // mid-stride
    cell.onclick = function () {
      main.load(m); main.playing = true;
      document.getElementById('player-title').textContent = m.label;
      document.getElementById('player').scrollIntoView();
    };
  });
}
// The MAP-Elites archive (D.map, elites.json): a heatmap of the elites'
// fitness over the grid (one axis: one row), a click shows the cell's elite
// and plays it when the gallery holds its gait; and QD-score and coverage
// over generations.
function mapElites(main) {
  var M = D.map;
  if (!M) return;
  document.getElementById('map-section').hidden = false;
  var box = document.getElementById('map'), info = document.getElementById('map-cell');
  var ax = M.axes, nx = ax[0].bins, ny = ax.length > 1 ? ax[1].bins : 1;
  var cw = Math.max(6, Math.min(40, Math.floor(560 / nx))), ch = Math.max(6, Math.min(40, Math.floor(320 / ny)));
  var L = 60, B = 40, w = L + nx * cw + 20, h = ny * ch + B + 10;
  var svg = el('svg', {width: w, height: h}, box);
  var fs = M.elites.map(function (e) { return e.fitness; });
  var f0 = Math.min.apply(null, fs), f1 = Math.max.apply(null, fs);
  var byId = {};
  (D.gallery || []).forEach(function (e) { if (e.motion !== null && e.motion !== undefined) byId[e.id] = e.motion; });
  if (D.best !== undefined) byId[D.best_id] = D.best;
  for (var i = 0; i < nx; ++i) for (var j = 0; j < ny; ++j)
    el('rect', {x: L + i * cw, y: (ny - 1 - j) * ch, width: cw - 1, height: ch - 1, fill: '#eee'}, svg);
  M.elites.forEach(function (e) {
    var i = e.cell[0], j = ax.length > 1 ? e.cell[1] : 0, k = f1 > f0 ? (e.fitness - f0) / (f1 - f0) : 1;
    var r = el('rect', {x: L + i * cw, y: (ny - 1 - j) * ch, width: cw - 1, height: ch - 1, 'data-id': e.id,
                        fill: 'rgb(' + Math.round(255 - 200 * k) + ',' + Math.round(230 - 150 * k) + ',' + Math.round(120 + 60 * k) + ')'}, svg);
    el('title', {}, r).textContent = 'design ' + e.id + ': fitness ' + fmt(e.fitness);
    r.style.cursor = 'pointer';
    r.onclick = function () {
      var t = 'cell (' + e.cell.join(', ') + '): design ' + e.id + ', born in generation ' + e.born +
              ', fitness ' + fmt(e.fitness) + '; ' + ax.map(function (a, q) { return a.descriptor + ' = ' + fmt(e.descriptors[q]); }).join(', ');
      if (byId[e.id] !== undefined && main) {
        var m = decode(D.motions[byId[e.id]]); main.load(m); main.playing = true;
        document.getElementById('player-title').textContent = m.label;
        t += ' (playing above)';
      } else {
        t += ' (its weights are kept only for the bests of generations, so no gait)';
      }
      info.textContent = t;
    };
  });
  var lab = function (x, y, text, anchor) { var tx = el('text', {x: x, y: y, 'text-anchor': anchor || 'middle', 'font-size': 11}, svg); tx.textContent = text; };
  lab(L, ny * ch + 14, fmt(ax[0].lo)); lab(L + nx * cw, ny * ch + 14, fmt(ax[0].hi));
  lab(L + nx * cw / 2, ny * ch + 30, ax[0].descriptor + ' (' + nx + ' bins)');
  if (ax.length > 1) {
    lab(L - 4, ny * ch, fmt(ax[1].lo), 'end'); lab(L - 4, 10, fmt(ax[1].hi), 'end');
    lab(L - 4, ny * ch / 2, ax[1].descriptor, 'end');
  }
  var p = document.createElement('p'); box.appendChild(p);
  p.textContent = M.filled + ' of ' + M.cells + ' cells filled (coverage ' + fmt(M.coverage) + '), QD-score ' + fmt(M.qd_score) +
                  '; colour: fitness from ' + fmt(f0) + ' (light) to ' + fmt(f1) + ' (dark); out-of-range descriptors sit in the edge cells';
  var g = D.generations || [];
  linePlot(box, {title: 'QD-score over generations', xLabel: 'generation', yLabel: 'QD-score', width: 370, noLegend: true,
                 series: [{name: 'QD-score', colour: '#17becf', pts: g.map(function (r) { return [r.g, r.qd]; })}]});
  linePlot(box, {title: 'coverage over generations', xLabel: 'generation', yLabel: 'filled / cells', width: 370, noLegend: true,
                 series: [{name: 'coverage', colour: '#bcbd22', pts: g.map(function (r) { return [r.g, r.coverage]; })}]});
}
function lineage() {
  var L = D.lineage || [], box = document.getElementById('lineage');
  if (!L.length) return;
  linePlot(box, {title: 'fitness along the lineage of the best', xLabel: 'generation born', yLabel: 'fitness', noLegend: true,
                 series: [{name: 'ancestor', colour: '#8c564b', pts: L.map(function (a) { return [a.born, a.fitness]; })}]});
  var p = document.createElement('p'); p.className = 'chain';
  p.textContent = L.map(function (a) { return 'design ' + a.id + ' (gen ' + a.born + ', ' + fmt(a.fitness) + ')'; }).join('  →  ');
  box.appendChild(p);
}
function extras() {
  var n = D.extra || 0, box = document.getElementById('extras');
  if (!n) return;
  document.getElementById('extras-section').hidden = false;
  for (var k = D.motions.length - n; k < D.motions.length; ++k) {
    var div = document.createElement('div'); div.className = 'extra'; div.id = 'extra-' + k;
    var h = document.createElement('h3'); h.textContent = D.motions[k].label; div.appendChild(h);
    box.appendChild(div);
    addPlayer(div.id, decode(D.motions[k]), 320, 190, n > 6); // many: start paused
  }
}
(function main() {
  document.getElementById('title').textContent = 'evoc report: ' + D.title;
  document.getElementById('where').textContent = D.dir || '';
  var miss = D.missing || [];
  if (miss.length) {
    var box = document.getElementById('missing'); box.hidden = false;
    miss.forEach(function (t) { var li = document.createElement('li'); li.textContent = t; box.querySelector('ul').appendChild(li); });
  }
  figures();
  var bestIdx = D.best !== undefined ? D.best : (D.motions && D.motions.length ? 0 : null), main = null;
  if (bestIdx !== null && D.motions[bestIdx]) {
    document.getElementById('player-title').textContent = D.motions[bestIdx].label;
    main = addPlayer('player', decode(D.motions[bestIdx]), 760, 380);
    var r = main.c.getBoundingClientRect();
    document.body.setAttribute('data-player-rect', [r.left + window.scrollX, r.top + window.scrollY,
                                                    r.width, r.height].map(Math.round).join(','));
  } else {
    document.getElementById('player-title').textContent = 'no gait to show yet';
  }
  plots();
  if (main) gallery(main);
  mapElites(main);
  lineage();
  extras();
  if (D.resolved) document.getElementById('resolved').textContent = D.resolved;
  document.body.setAttribute('data-ready', '1');
})();
