/* evenodds dashboard: one script for every page. It reads the page's path, asks the service's
 * read APIs (docs/SERVICE.md "Dashboard and reads") and draws with the DOM and SVG: no
 * framework, nothing fetched from elsewhere, no inline code (the pages' Content-Security-Policy
 * allows none). A key entered in the Key panel stays in this tab's sessionStorage and goes out
 * as a bearer header, never in a URL; admin forms appear once an admin key is accepted. */
'use strict';

(function () {
  const KEY = 'evenodds.key';
  const ROLE = 'evenodds.role';
  const app = document.getElementById('app');
  const nav = document.getElementById('nav');

  /* ---- small helpers -------------------------------------------------------------------- */

  /* An element with attributes (class, href, …; on* functions become listeners) and children
   * (strings become text: data never becomes markup). */
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    for (const k of kids.flat()) {
      if (k !== null && k !== undefined && k !== false)
        e.append(k instanceof Node ? k : String(k));
    }
    return e;
  }

  function setAttrs(e, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }

  const SVGNS = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    for (const k of kids.flat()) {
      if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
    }
    return e;
  }

  /* A number as text, negative ones with a minus sign (as signed() writes changes). */
  function num(x, digits) {
    if (x === null || x === undefined) return '–';
    const s = Number.isInteger(x) ? x.toLocaleString('en-US')
                                  : x.toFixed(digits === undefined ? 2 : digits);
    return s.replace(/^-/, '−');
  }

  function signed(x, digits) {
    if (x === null || x === undefined) return '–';
    const s = num(Math.abs(x), digits);
    return (x > 0 ? '+' : x < 0 ? '−' : '±') + s;
  }

  function pct(p) {
    return p === null || p === undefined ? '–' : (100 * p).toFixed(1) + ' %';
  }

  function when(unix) {
    if (unix === null || unix === undefined) return '–';
    return new Date(unix * 1000).toISOString().slice(0, 16).replace('T', ' ');
  }

  function day(unix) {
    return new Date(unix * 1000).toISOString().slice(0, 10);
  }

  /* A duration as m:ss, or h:mm:ss from an hour on. */
  function seconds(s) {
    if (s === null || s === undefined) return '–';
    const two = (x) => String(x).padStart(2, '0');
    const m = Math.floor(s / 60) % 60, h = Math.floor(s / 3600);
    return (h ? h + ':' + two(m) : m) + ':' + two(s % 60);
  }

  const enc = encodeURIComponent;
  function poolPath(pool, rest) {
    return '/pools/' + enc(pool) + (rest || '');
  }

  function playerLink(pool, p) {
    return el('a', {href: poolPath(pool, '/players/' + enc(p.id))}, p.name || p.id);
  }

  function deltaCell(d, integer) {
    return el('td', {class: 'num ' + (d > 0 ? 'pos' : d < 0 ? 'neg' : '')},
              signed(d, integer ? 0 : 2));
  }

  /* ---- the service ---------------------------------------------------------------------- */

  function key() {
    return sessionStorage.getItem(KEY);
  }

  /* A call to the service: JSON in and out; an error answer throws with its message. */
  async function api(path, opts) {
    const o = opts || {};
    const headers = {};
    const k = o.key !== undefined ? o.key : key();
    if (k) headers.Authorization = 'Bearer ' + k;
    if (o.body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, {
      method: o.method || 'GET',
      headers: headers,
      body: o.body !== undefined ? JSON.stringify(o.body) : undefined,
      credentials: 'omit',
      cache: 'no-store'
    });
    const text = await res.text();
    let doc = null;
    try {
      doc = text ? JSON.parse(text) : null;
    } catch (e) {
      doc = null;
    }
    if (!res.ok) {
      const err = new Error(doc && doc.error ? doc.error.message +
                            (doc.error.field ? ' (' + doc.error.field + ')' : '')
                            : 'HTTP ' + res.status);
      err.status = res.status;
      throw err;
    }
    return doc;
  }

  /* ---- the key panel -------------------------------------------------------------------- */

  function isAdmin() {
    return key() && sessionStorage.getItem(ROLE) === 'admin';
  }

  function setupKeyPanel() {
    const panel = document.getElementById('key-panel');
    const form = document.getElementById('key-form');
    const input = document.getElementById('key-input');
    const status = document.getElementById('key-status');
    const button = document.getElementById('key-button');
    function label() {
      button.textContent = key() ? (isAdmin() ? 'Admin key ✓' : 'Key ✓') : 'Key';
    }
    label();
    button.addEventListener('click', () => panel.classList.toggle('hidden'));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const k = input.value.trim();
      status.className = 'status';
      status.textContent = 'Checking…';
      let role = null;
      try {
        await api('/v1/pools', {key: k}); /* an admin route: 200 for the admin key */
        role = 'admin';
      } catch (e) {
        if (e.status === 403) role = 'server';
      }
      if (role === null) {
        status.className = 'status bad';
        status.textContent = 'Wrong key: the service refused it. Nothing was kept.';
        return;
      }
      sessionStorage.setItem(KEY, k);
      sessionStorage.setItem(ROLE, role);
      input.value = '';
      status.className = 'status ok';
      status.textContent = role === 'admin' ? 'Admin key accepted for this tab.'
                                            : 'Server key accepted for this tab (reads).';
      label();
      route();
    });
    document.getElementById('key-forget').addEventListener('click', () => {
      sessionStorage.removeItem(KEY);
      sessionStorage.removeItem(ROLE);
      status.className = 'status';
      status.textContent = 'Key forgotten.';
      label();
      route();
    });
  }

  /* An admin form: fields, a button, and the answer shown under it. */
  function adminForm(title, fields, button, run) {
    const out = el('p', {class: 'status', role: 'status'});
    const form = el('form', {}, fields, el('button', {type: 'submit', class: 'primary'}, button));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      out.className = 'status';
      out.textContent = 'Sending…';
      try {
        const msg = await run(form);
        out.className = 'status ok';
        out.textContent = msg;
      } catch (e) {
        out.className = 'status bad';
        out.textContent = 'Refused: ' + e.message;
      }
    });
    return el('div', {}, el('h3', {}, title), form, out);
  }

  function adminCard(...forms) {
    if (!isAdmin()) return null;
    return el('section', {class: 'card admin', 'aria-label': 'Admin'}, el('h2', {}, 'Admin'), forms);
  }

  function field(name, label, attrs) {
    return el('label', {}, label + ' ', el('input', Object.assign({name: name}, attrs || {})));
  }

  /* ---- charts (SVG) --------------------------------------------------------------------- */

  /* Round tick values across [lo, hi]. */
  function ticks(lo, hi, n) {
    const span = hi - lo || 1;
    const raw = span / n;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= n) || 10 * mag;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
      out.push(Number(v.toFixed(10)));
    return out;
  }

  /* A line chart. c: {xs, series: [{ys, cls}], band: {lo, hi}, ref: {y, label}, ylabel,
   * xfmt, yfmt, ymin, ymax, dots}. Values may be null (gaps). */
  /* Charts are drawn at the width they get (one user unit a pixel), so their text stays
   * legible at phone width and on a wide screen alike. */
  function chartWidth() {
    return Math.max(300, Math.min(1000, app.clientWidth - 34));
  }

  function lineChart(c) {
    const W = chartWidth(), H = Math.round(Math.min(320, Math.max(200, W * 0.42)));
    const L = 56, R = 14, T = 14, B = 36;
    const xs = c.xs;
    const vals = [];
    for (const s of c.series) vals.push(...s.ys.filter((v) => v !== null));
    if (c.band) vals.push(...c.band.lo, ...c.band.hi);
    if (c.ref) vals.push(c.ref.y);
    let ylo = c.ymin !== undefined ? c.ymin : Math.min(...vals);
    let yhi = c.ymax !== undefined ? c.ymax : Math.max(...vals);
    if (!(yhi > ylo)) {
      ylo -= 1;
      yhi += 1;
    }
    const pad = (yhi - ylo) * 0.05;
    if (c.ymin === undefined) ylo -= pad;
    if (c.ymax === undefined) yhi += pad;
    const xlo = xs[0], xhi = xs[xs.length - 1] === xlo ? xlo + 1 : xs[xs.length - 1];
    const X = (x) => L + (x - xlo) / (xhi - xlo) * (W - L - R);
    const Y = (y) => T + (yhi - y) / (yhi - ylo) * (H - T - B);
    const g = svg('svg', {class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img',
                          'aria-label': c.label || 'chart'});
    for (const t of ticks(ylo, yhi, 5)) {
      g.append(svg('line', {class: 'grid', x1: L, x2: W - R, y1: Y(t), y2: Y(t)}));
      g.append(svg('text', {x: L - 6, y: Y(t) + 4, 'text-anchor': 'end'},
                   (c.yfmt || num)(t)));
    }
    for (const t of ticks(xlo, xhi, 5)) {
      g.append(svg('text', {x: X(t), y: H - B + 16, 'text-anchor': 'middle'},
                   (c.xfmt || num)(t)));
    }
    g.append(svg('line', {class: 'axis', x1: L, x2: L, y1: T, y2: H - B}));
    g.append(svg('line', {class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B}));
    if (c.ylabel)
      g.append(svg('text', {x: 12, y: T + (H - T - B) / 2, transform:
                            `rotate(-90 12 ${T + (H - T - B) / 2})`, 'text-anchor': 'middle'},
                   c.ylabel));
    if (c.xlabel)
      g.append(svg('text', {x: L + (W - L - R) / 2, y: H - 4, 'text-anchor': 'middle'}, c.xlabel));
    if (c.band) {
      const top = xs.map((x, i) => `${X(x)},${Y(c.band.hi[i])}`);
      const bot = xs.map((x, i) => `${X(x)},${Y(c.band.lo[i])}`).reverse();
      g.append(svg('polygon', {class: 'band', points: top.concat(bot).join(' ')}));
    }
    if (c.ref) {
      g.append(svg('line', {class: 'ref', x1: L, x2: W - R, y1: Y(c.ref.y), y2: Y(c.ref.y)}));
      g.append(svg('text', {x: W - R - 4, y: Y(c.ref.y) - 4, 'text-anchor': 'end'}, c.ref.label));
    }
    c.series.forEach((s, k) => {
      const pts = [];
      xs.forEach((x, i) => {
        if (s.ys[i] !== null) pts.push(`${X(x)},${Y(s.ys[i])}`);
      });
      g.append(svg('polyline', {class: s.cls || 'line', points: pts.join(' '),
                                'data-series': k, 'data-points': pts.length}));
      if (c.dots)
        xs.forEach((x, i) => {
          if (s.ys[i] !== null)
            g.append(svg('circle', {class: 'dot', cx: X(x), cy: Y(s.ys[i]), r: 3},
                         svg('title', {}, `${(c.xfmt || num)(x)}: ${(c.yfmt || num)(s.ys[i])}`)));
        });
    });
    return g;
  }

  /* The calibration plot: each bin's mean P(A) against the share A won, on the diagonal when
   * the predictions are right; a dot's area follows its rounds. */
  function calibrationChart(bins) {
    const W = Math.min(420, chartWidth()), H = W - 20, L = 44, R = 12, T = 12, B = 40;
    const X = (p) => L + p * (W - L - R);
    const Y = (p) => T + (1 - p) * (H - T - B);
    const g = svg('svg', {class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img',
                          'aria-label': 'calibration'});
    for (const t of [0, 0.25, 0.5, 0.75, 1]) {
      g.append(svg('line', {class: 'grid', x1: L, x2: W - R, y1: Y(t), y2: Y(t)}));
      g.append(svg('text', {x: L - 6, y: Y(t) + 4, 'text-anchor': 'end'}, t));
      g.append(svg('text', {x: X(t), y: H - B + 15, 'text-anchor': 'middle'}, t));
    }
    g.append(svg('line', {class: 'diag', x1: X(0), y1: Y(0), x2: X(1), y2: Y(1)}));
    g.append(svg('text', {x: L + (W - L - R) / 2, y: H - 6, 'text-anchor': 'middle'},
                 'predicted P(A)'));
    g.append(svg('text', {x: 12, y: T + (H - T - B) / 2, transform:
                          `rotate(-90 12 ${T + (H - T - B) / 2})`, 'text-anchor': 'middle'},
                 'A won'));
    const max = Math.max(1, ...bins.map((b) => b.count));
    const used = bins.filter((b) => b.count > 0);
    g.append(svg('polyline', {class: 'line', points:
                              used.map((b) => `${X(b.mean_p)},${Y(b.win_rate)}`).join(' '),
                              'data-points': used.length}));
    for (const b of used)
      g.append(svg('circle', {class: 'dot', cx: X(b.mean_p), cy: Y(b.win_rate),
                              r: 3 + 9 * Math.sqrt(b.count / max)},
                   svg('title', {}, `P ${b.from}–${b.to}: ${b.count} rounds, mean P ` +
                                    `${b.mean_p.toFixed(3)}, A won ${pct(b.win_rate)}`)));
    return g;
  }

  /* Each map's bias in side A's favour with one standard deviation either side. */
  function biasChart(maps, units) {
    const W = chartWidth(), rowH = 24, L = Math.min(150, W / 3), R = 16, T = 10, B = 38;
    const H = T + B + rowH * maps.length;
    let m = 0.1;
    for (const x of maps) m = Math.max(m, Math.abs(x.bias) + (x.uncertainty || 0));
    const X = (v) => L + (v + m) / (2 * m) * (W - L - R);
    const g = svg('svg', {class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img',
                          'aria-label': 'map bias'});
    g.append(svg('line', {class: 'axis', x1: X(0), x2: X(0), y1: T, y2: H - B}));
    for (const t of ticks(-m, m, 4))
      g.append(svg('text', {x: X(t), y: H - B + 14, 'text-anchor': 'middle'}, num(t, 2)));
    g.append(svg('text', {x: L + (W - L - R) / 2, y: H - 6, 'text-anchor': 'middle'},
                 `bias (${units}): left favours B, right favours A`));
    maps.forEach((x, i) => {
      const y = T + i * rowH + rowH / 2;
      const name = x.map + (x.size ? ' ' + x.size : '') + (x.mode ? ' ' + x.mode : '');
      g.append(svg('text', {x: L - 6, y: y + 4, 'text-anchor': 'end'}, name));
      g.append(svg('rect', {class: x.bias >= 0 ? 'bar-a' : 'bar-b', x: Math.min(X(0), X(x.bias)),
                            y: y - 6, width: Math.abs(X(x.bias) - X(0)), height: 12},
                   svg('title', {}, `${name}: ${num(x.bias, 3)} ± ${num(x.uncertainty, 3)}`)));
      if (x.uncertainty !== null)
        g.append(svg('line', {class: 'whisker', x1: X(x.bias - x.uncertainty), y1: y,
                              x2: X(x.bias + x.uncertainty), y2: y}));
    });
    return g;
  }

  /* ---- pages ---------------------------------------------------------------------------- */

  function setNav(pool, here) {
    nav.textContent = '';
    const links = [['/', 'Pools', 'pools']];
    if (pool) {
      links.push([poolPath(pool), 'Leaderboard', 'board'], [poolPath(pool, '/rounds'), 'Rounds',
                 'rounds'], [poolPath(pool, '/maps'), 'Maps', 'maps'],
                 [poolPath(pool, '/health'), 'Health', 'health'],
                 [poolPath(pool, '/queues'), 'Queues', 'queues']);
    }
    for (const [href, text, name] of links)
      nav.append(el('a', {href: href, class: name === here ? 'here' : null}, text));
  }

  async function dashboard() {
    return api('/v1/dashboard');
  }

  async function poolFacts(pool) {
    const d = await dashboard();
    const p = d.pools.find((x) => x.name === pool);
    if (!p) {
      const e = new Error('no pool named “' + pool + '”');
      e.status = 404;
      throw e;
    }
    return p;
  }

  function integerModel(p) {
    return p.model === 'synelo';
  }

  function stateText(p, row) {
    if (row.mu !== undefined) return row.mu === null ? '–' : `μ ${num(row.mu)} σ ${num(row.sigma)}`;
    if (row.rd !== undefined) return row.rating === null ? '–' : `${num(row.rating, 1)} ± ${num(row.rd, 1)}`;
    return num(row.rating, integerModel(p) ? 0 : 2);
  }

  async function pagePools() {
    setNav(null, 'pools');
    const d = await dashboard();
    const rows = d.pools.map((p) => el('tr', {},
      el('td', {}, el('a', {href: poolPath(p.name)}, p.name)),
      el('td', {}, p.model),
      el('td', {class: 'num'}, num(p.players)),
      el('td', {class: 'num'}, num(p.rounds)),
      el('td', {class: 'wide'}, when(p.last_round))));
    const models = ['synelo', 'trueskill', 'glicko2', 'elo', 'wenglin', 'hive'];
    return [
      el('h1', {}, 'Pools'),
      el('p', {class: 'sub'}, d.dashboard === 'public'
        ? 'Public dashboard: players show once their rating is visible.'
        : 'Reads need a key (Key, top right).'),
      el('div', {class: 'scroll'}, el('table', {id: 'pools'},
        el('thead', {}, el('tr', {}, el('th', {}, 'Pool'), el('th', {}, 'Model'),
          el('th', {class: 'num'}, 'Players'), el('th', {class: 'num'}, 'Rounds'),
          el('th', {class: 'wide'}, 'Last round (UTC)'))),
        el('tbody', {}, rows))),
      adminCard(adminForm('Create a pool', [
        field('name', 'Name', {required: true, maxlength: 128}),
        el('label', {}, 'Model ', el('select', {name: 'model'},
          models.map((m) => el('option', {value: m}, m)))),
        field('params', 'Parameters (JSON)', {placeholder: '{"t_shadow": 20}'})
      ], 'Create', async (f) => {
        const params = f.params.value.trim() ? JSON.parse(f.params.value) : undefined;
        await api('/v1/pools', {method: 'POST', body: {name: f.name.value, model: f.model.value,
                                                        params: params}});
        return 'Pool created; reload to see it.';
      }))
    ];
  }

  function pager(base, offset, limit, total, more, extra) {
    const q = (o) => base + '?' + new URLSearchParams(Object.assign({}, extra, {offset: o}));
    const page = Math.floor(offset / limit) + 1;
    const pages = total === null ? null : Math.max(1, Math.ceil(total / limit));
    const link = (ok, o, text, name) => ok ? el('a', {href: q(o), 'data-page': name}, text)
                                           : el('span', {class: 'off'}, text);
    return el('nav', {class: 'pager', 'aria-label': 'pages'},
      link(offset > 0, 0, '« First', 'first'),
      link(offset > 0, Math.max(0, offset - limit), '‹ Prev', 'prev'),
      el('span', {}, pages === null ? `Page ${page}` : `Page ${page} of ${pages}`),
      link(more, offset + limit, 'Next ›', 'next'),
      pages === null ? null : link(more, (pages - 1) * limit, 'Last »', 'last'));
  }

  async function pageBoard(pool) {
    setNav(pool, 'board');
    const params = new URLSearchParams(location.search);
    const q = params.get('q') || '';
    const offset = Math.max(0, parseInt(params.get('offset') || '0', 10) || 0);
    const limit = 50;
    const p = await poolFacts(pool);
    const s = await api(`/v1/pools/${enc(pool)}/standings?offset=${offset}&limit=${limit}` +
                        (q ? '&q=' + enc(q) : ''));
    const rows = s.standings.map((r) => el('tr', {},
      el('td', {class: 'num'}, r.rank),
      el('td', {}, playerLink(pool, r), r.name ? el('div', {class: 'id'}, r.id) : null),
      el('td', {}, r.division ? el('span', {class: 'badge'}, r.division) : '–'),
      el('td', {class: 'num'}, num(r.display, integerModel(p) ? 0 : 2)),
      el('td', {class: 'num wide'}, stateText(p, r)),
      el('td', {class: 'num'}, num(r.rounds)),
      el('td', {class: 'wide'}, when(r.last_played))));
    const form = el('form', {class: 'search', method: 'get', action: poolPath(pool), role: 'search'},
      el('input', {name: 'q', value: q, placeholder: 'Search a name or id', 'aria-label': 'search',
                   maxlength: 128}),
      el('button', {type: 'submit'}, 'Search'),
      q ? el('a', {href: poolPath(pool)}, 'Clear') : null);
    return [
      el('h1', {}, pool),
      el('div', {class: 'facts'},
        el('div', {class: 'fact'}, el('b', {}, p.model), el('span', {}, 'model')),
        el('div', {class: 'fact'}, el('b', {}, num(p.players)), el('span', {}, 'ranked players')),
        el('div', {class: 'fact'}, el('b', {}, num(p.rounds)), el('span', {}, 'rounds'))),
      p.divisions.length ? el('div', {class: 'legend'}, 'Divisions:',
        p.divisions.map((d) => el('span', {}, el('span', {class: 'badge'}, d.name), ' from ',
                                  num(d.from, 0)))) : null,
      form,
      q ? el('p', {class: 'sub'}, `Players whose name or id starts with “${q}”, each with ` +
                                  'his rank on the board.') : null,
      el('div', {class: 'scroll'}, el('table', {id: 'board'},
        el('thead', {}, el('tr', {}, el('th', {class: 'num'}, '#'), el('th', {}, 'Player'),
          el('th', {}, 'Division'), el('th', {class: 'num'}, 'Rating'),
          el('th', {class: 'num wide'}, 'State'), el('th', {class: 'num'}, 'Rounds'),
          el('th', {class: 'wide'}, 'Last played (UTC)'))),
        el('tbody', {}, rows.length ? rows
          : el('tr', {}, el('td', {colspan: 7}, q ? 'No visible player matches.'
                                                  : 'No player is ranked yet.'))))),
      pager(poolPath(pool), offset, limit, s.total, s.more, q ? {q: q} : {}),
      adminCard(
        adminForm('Start a new season', [
          field('name', 'Name of the season that ends', {required: true, maxlength: 128}),
          field('f', 'Pull toward the start (0–1)', {value: '0.5', size: 5})
        ], 'End season', async (f) => {
          const r = await api(`/v1/pools/${enc(pool)}/seasons`, {method: 'POST',
            body: {name: f.name.value, f: Number(f.f.value)}});
          return `Season ${r.season} archived with ${r.players} players.`;
        }),
        adminForm('Refit from the whole history', [], 'Start refit', async () => {
          const r = await api(`/v1/pools/${enc(pool)}/refit`, {method: 'POST'});
          return `Refit job ${r.job} ${r.state}.`;
        }))
    ];
  }

  function playerChart(p, points) {
    const xs = points.map((_, i) => i + 1);
    const c = {
      xs: xs, xlabel: 'his rounds', label: 'rating history',
      series: [{ys: points.map((x) => x.display), cls: 'line'}]
    };
    let legend = 'Line: the rating shown after each of his rounds.';
    if (points.length && points[0].sigma !== undefined) {
      c.band = {lo: points.map((x) => x.mu - 2 * x.sigma), hi: points.map((x) => x.mu + 2 * x.sigma)};
      c.series.push({ys: points.map((x) => x.mu), cls: 'line2'});
      legend = 'Line: the rating shown (μ − kσ); dashed: the skill estimate μ; shaded: μ ± 2σ, ' +
               'where his skill lies with 95 % odds.';
    } else if (points.length && points[0].rd !== undefined) {
      c.band = {lo: points.map((x) => x.rating - 2 * x.rd), hi: points.map((x) => x.rating + 2 * x.rd)};
      legend = 'Line: his rating; shaded: ± 2 RD, where his skill lies with 95 % odds.';
    }
    c.ylabel = 'rating';
    return [lineChart(c), el('p', {class: 'sub'}, legend)];
  }

  function resultOf(r) {
    if (r.winner === 'draw') return el('span', {class: 'badge'}, 'draw');
    return r.winner === r.side ? el('span', {class: 'badge pos'}, 'won')
                               : el('span', {class: 'badge neg'}, 'lost');
  }

  async function pagePlayer(pool, id) {
    setNav(pool, 'board');
    const params = new URLSearchParams(location.search);
    const offset = Math.max(0, parseInt(params.get('offset') || '0', 10) || 0);
    const p = await poolFacts(pool);
    const h = await api(`/v1/pools/${enc(pool)}/players/${enc(id)}/history`);
    const rs = await api(`/v1/pools/${enc(pool)}/players/${enc(id)}/rounds?offset=${offset}&limit=20`);
    const me = h.player;
    const integer = integerModel(p);
    const rows = rs.rounds.map((r) => {
      const mine = r[r.side].find((m) => m.id === id);
      const chance = r.side === 'A' ? r.p_a : 1 - r.p_a;
      return el('tr', {},
        el('td', {}, el('a', {href: poolPath(pool, '/rounds/' + enc(r.round))}, when(r.at))),
        el('td', {class: 'wide'}, r.map || '–'),
        el('td', {class: 'side-' + r.side}, r.side),
        el('td', {class: 'num'}, pct(chance)),
        el('td', {}, resultOf(r)),
        deltaCell(mine.delta, integer),
        el('td', {class: 'num wide'}, num(mine.display, integer ? 0 : 2)));
    });
    return [
      el('h1', {}, me.name || id),
      me.name ? el('p', {class: 'id'}, id) : null,
      el('div', {class: 'facts'},
        el('div', {class: 'fact'}, el('b', {}, me.rank === null ? '–' : '#' + me.rank),
           el('span', {}, 'rank')),
        el('div', {class: 'fact'}, el('b', {}, num(me.display, integer ? 0 : 2)),
           el('span', {}, 'rating')),
        el('div', {class: 'fact'}, el('b', {}, me.division || '–'), el('span', {}, 'division')),
        el('div', {class: 'fact'}, el('b', {}, stateText(p, me)), el('span', {}, 'state')),
        el('div', {class: 'fact'}, el('b', {}, num(me.rounds)), el('span', {}, 'rounds'))),
      me.visible ? null : el('p', {class: 'sub'}, 'Not ranked yet: the rating shows once the ' +
                                                   'model counts it as settled.'),
      h.history.length ? el('figure', {class: 'card'}, playerChart(p, h.history),
        el('figcaption', {class: 'sub'}, `${h.history.length} rounds, ${when(h.history[0].at)} to ` +
           `${when(h.history[h.history.length - 1].at)} (UTC)` +
           (h.history.length < me.rounds ? '; the rounds before his rating showed are left out.'
                                         : '.')))
        : el('p', {class: 'sub'}, 'No rating history to show yet.'),
      el('h2', {}, 'Rounds'),
      el('div', {class: 'scroll'}, el('table', {id: 'player-rounds'},
        el('thead', {}, el('tr', {}, el('th', {}, 'Played (UTC)'), el('th', {class: 'wide'}, 'Map'),
          el('th', {}, 'Side'), el('th', {class: 'num'}, 'His chance'), el('th', {}, 'Result'),
          el('th', {class: 'num'}, 'Change'), el('th', {class: 'num wide'}, 'After'))),
        el('tbody', {}, rows))),
      pager(poolPath(pool, '/players/' + enc(id)), offset, 20, null, rs.more, {}),
      adminCard(
        adminForm('Set the rating', [
          field('rating', 'Rating', {required: true, size: 8}),
          field('sigma', 'Deviation (optional)', {size: 8})
        ], 'Set', async (f) => {
          const body = {rating: Number(f.rating.value)};
          if (f.sigma.value.trim()) body.sigma = Number(f.sigma.value);
          await api(`/v1/pools/${enc(pool)}/players/${enc(id)}`, {method: 'PUT', body: body});
          return 'Rating set.';
        }),
        adminForm('Reset to a new player', [], 'Reset', async () => {
          await api(`/v1/pools/${enc(pool)}/players/${enc(id)}`, {method: 'DELETE'});
          return 'Player reset.';
        }))
    ];
  }

  function teamTable(pool, team, side, integer) {
    return el('section', {class: 'card'}, el('h2', {class: 'side-' + side}, 'Team ' + side),
      el('div', {class: 'scroll'}, el('table', {class: 'team', 'data-side': side},
        el('thead', {}, el('tr', {}, el('th', {}, 'Player'), el('th', {class: 'num'}, 'Played'),
          el('th', {class: 'num'}, 'Change'), el('th', {class: 'num'}, 'After'))),
        el('tbody', {}, team.map((m) => el('tr', {},
          el('td', {}, playerLink(pool, m)),
          el('td', {class: 'num'}, pct(m.played)),
          deltaCell(m.delta, integer),
          el('td', {class: 'num'}, num(m.display, integer ? 0 : 2))))))));
  }

  /* Team A's share of the bar is its chance (set through the CSSOM: the pages' policy allows
   * no style attribute in markup). */
  function chanceBar(p) {
    const a = el('i', {class: 'p-a'});
    a.style.width = (100 * p).toFixed(1) + '%';
    return el('div', {class: 'chance', role: 'img', 'aria-label': 'P(A) ' + pct(p)}, a);
  }

  async function pageRound(pool, round) {
    setNav(pool, 'rounds');
    const p = await poolFacts(pool);
    const r = await api(`/v1/pools/${enc(pool)}/rounds/${enc(round)}`);
    const integer = integerModel(p);
    return [
      el('h1', {}, 'Round ', round),
      el('div', {class: 'facts'},
        el('div', {class: 'fact'}, el('b', {}, r.map || '–'), el('span', {}, 'map')),
        el('div', {class: 'fact'}, el('b', {}, when(r.at)), el('span', {}, 'played (UTC)')),
        el('div', {class: 'fact'}, el('b', {}, seconds(r.duration)), el('span', {}, 'duration')),
        el('div', {class: 'fact'}, el('b', {}, r.winner === 'draw' ? 'draw' : 'team ' + r.winner),
           el('span', {}, 'winner')),
        r.server ? el('div', {class: 'fact'}, el('b', {}, r.server), el('span', {}, 'server')) : null,
        r.mode ? el('div', {class: 'fact'}, el('b', {}, r.mode), el('span', {}, 'mode')) : null),
      el('p', {}, `Predicted: team A ${pct(r.p_a)}, team B ${pct(1 - r.p_a)}`),
      chanceBar(r.p_a),
      el('div', {class: 'teams'}, teamTable(pool, r.A, 'A', integer),
         teamTable(pool, r.B, 'B', integer))
    ];
  }

  async function pageRounds(pool) {
    setNav(pool, 'rounds');
    const params = new URLSearchParams(location.search);
    const offset = Math.max(0, parseInt(params.get('offset') || '0', 10) || 0);
    const rs = await api(`/v1/pools/${enc(pool)}/rounds?offset=${offset}&limit=25`);
    const rows = rs.rounds.map((r) => el('tr', {},
      el('td', {}, el('a', {href: poolPath(pool, '/rounds/' + enc(r.round))}, r.round)),
      el('td', {}, when(r.at)),
      el('td', {class: 'wide'}, r.map || '–'),
      el('td', {class: 'num'}, `${r.A.length}v${r.B.length}`),
      el('td', {class: 'num'}, pct(r.p_a)),
      el('td', {}, r.winner),
      el('td', {class: 'num wide'}, seconds(r.duration))));
    return [
      el('h1', {}, pool, ': rounds'),
      el('div', {class: 'scroll'}, el('table', {id: 'rounds'},
        el('thead', {}, el('tr', {}, el('th', {}, 'Round'), el('th', {}, 'Played (UTC)'),
          el('th', {class: 'wide'}, 'Map'), el('th', {class: 'num'}, 'Teams'),
          el('th', {class: 'num'}, 'P(A)'), el('th', {}, 'Winner'),
          el('th', {class: 'num wide'}, 'Duration'))),
        el('tbody', {}, rows))),
      pager(poolPath(pool, '/rounds'), offset, 25, rs.total, rs.more, {})
    ];
  }

  async function pageMaps(pool) {
    setNav(pool, 'maps');
    const m = await api(`/v1/pools/${enc(pool)}/maps`);
    if (m.by === 'off')
      return [el('h1', {}, pool, ': maps'),
              el('p', {}, 'This pool does not learn a map bias (parameter "bias" is off).')];
    const rows = m.maps.map((x) => el('tr', {},
      el('td', {}, x.map, x.size ? ' ' + x.size : '', x.mode ? ' ' + x.mode : ''),
      el('td', {class: 'num'}, num(x.plays)),
      el('td', {class: 'num'}, num(x.a_wins)),
      el('td', {class: 'num'}, num(x.b_wins)),
      el('td', {class: 'num wide'}, num(x.draws)),
      el('td', {class: 'num'}, pct(x.a_win_rate)),
      el('td', {class: 'num'}, `${num(x.bias, 3)} ± ${num(x.uncertainty, 3)}`),
      el('td', {class: 'num wide'}, num(x.applied, 3))));
    return [
      el('h1', {}, pool, ': maps'),
      el('p', {class: 'sub'}, `Side win rates per map, and the bias in side A's favour that the ` +
                              `model applies (${m.units}), with its standard deviation.`),
      m.maps.length ? biasChart(m.maps, m.units) : el('p', {}, 'No round with a map yet.'),
      el('div', {class: 'scroll'}, el('table', {id: 'maps'},
        el('thead', {}, el('tr', {}, el('th', {}, 'Map'), el('th', {class: 'num'}, 'Plays'),
          el('th', {class: 'num'}, 'A won'), el('th', {class: 'num'}, 'B won'),
          el('th', {class: 'num wide'}, 'Draws'), el('th', {class: 'num'}, 'A win rate'),
          el('th', {class: 'num'}, 'Bias ± sd'), el('th', {class: 'num wide'}, 'Applied'))),
        el('tbody', {}, rows)))
    ];
  }

  async function pageHealth(pool) {
    setNav(pool, 'health');
    const params = new URLSearchParams(location.search);
    const bucket = params.get('bucket') === 'week' ? 'week' : 'day';
    /* Days: the half year up to the pool's last round (weeks: all of them). */
    const p = await poolFacts(pool);
    const since = bucket === 'day' && p.last_round ? Math.max(0, p.last_round - 183 * 86400) : 0;
    const h = await api(`/v1/pools/${enc(pool)}/health?bucket=${bucket}&since=${since}`);
    const t = h.total;
    const b = h.buckets;
    const xs = b.map((x) => x.start);
    const charts = b.length ? [
      el('figure', {class: 'card'}, el('figcaption', {}, 'Brier score of P(A) per ' + bucket +
                                                         (since ? ' over the last half year' : '') +
                                                         ' (0.25: a coin flip)'),
         lineChart({xs: xs, xfmt: day, dots: true, label: 'brier', ymin: 0,
                    series: [{ys: b.map((x) => x.brier)}], ref: {y: 0.25, label: '0.25'}})),
      el('figure', {class: 'card narrow'}, el('figcaption', {}, 'Calibration over the whole span: ' +
                                                                'each bin\'s predicted P(A) against ' +
                                                                'how often A won (dots grow with ' +
                                                                'rounds; the diagonal is perfect)'),
         calibrationChart(h.calibration.bins)),
      el('figure', {class: 'card'}, el('figcaption', {}, 'Balance: mean |P(A) − 0.5| (line) ' +
                                                         'and share of stomps (dashed)'),
         lineChart({xs: xs, xfmt: day, dots: true, label: 'balance', ymin: 0,
                    yfmt: (v) => num(v, 2),
                    series: [{ys: b.map((x) => x.margin)}, {ys: b.map((x) => x.stomps),
                                                            cls: 'line2'}]})),
      el('figure', {class: 'card'}, el('figcaption', {}, 'Rating drift: members\' mean rating ' +
                                                         '(± one standard deviation shaded)'),
         lineChart({xs: xs, xfmt: day, label: 'drift',
                    series: [{ys: b.map((x) => x.rating_mean)}],
                    band: {lo: b.map((x) => x.rating_mean - x.rating_sd),
                           hi: b.map((x) => x.rating_mean + x.rating_sd)}}))
    ] : [el('p', {}, 'No round rated yet.')];
    return [
      el('h1', {}, pool, ': health'),
      el('nav', {class: 'pager'}, ['day', 'week'].map((k) => k === bucket
        ? el('span', {}, 'per ' + k) : el('a', {href: poolPath(pool, '/health?bucket=' + k)},
                                          'per ' + k))),
      el('div', {class: 'facts'},
        el('div', {class: 'fact'}, el('b', {}, num(t.rounds)), el('span', {}, 'rounds')),
        el('div', {class: 'fact'}, el('b', {id: 'brier'}, num(t.brier, 4)), el('span', {}, 'Brier')),
        el('div', {class: 'fact'}, el('b', {}, num(t.logloss, 4)), el('span', {}, 'log loss')),
        el('div', {class: 'fact'}, el('b', {}, pct(t.accuracy)), el('span', {}, 'called right')),
        el('div', {class: 'fact'}, el('b', {}, num(t.margin, 3)), el('span', {}, 'mean |P − ½|')),
        el('div', {class: 'fact'}, el('b', {}, pct(t.stomps)), el('span', {}, 'stomps')),
        el('div', {class: 'fact'}, el('b', {}, num(h.calibration.ece, 3)), el('span', {}, 'ECE'))),
      el('p', {class: 'sub'}, 'Predictions are P(A) at each round\'s start; draws are counted ' +
                              'and left out of Brier, log loss and calibration. A stomp: P(A) ' +
                              'above 0.8 or below 0.2.'),
      el('div', {class: 'charts'}, charts)
    ];
  }

  /* A figure with @p d decimals, whole numbers too. */
  function fixed(x, d) {
    return x === null || x === undefined ? '–' : x.toFixed(d);
  }

  /* A wait in seconds: tenths under a minute, m:ss from a minute on. */
  function wait(s) {
    if (s === null || s === undefined) return '–';
    return s < 60 ? s.toFixed(1) + ' s' : seconds(Math.round(s));
  }

  /* One queue's figures (docs/MATCHMAKING.md "Queue figures"): a row per figure, each value
   * cell naming its figure (data-figure) for the browser test. */
  function queueCard(q) {
    const f = q.figures, r = f.recent, w = r.wait_s;
    const row = (label, name, text) => el('tr', {}, el('th', {scope: 'row'}, label),
                                          el('td', {class: 'num', 'data-figure': name}, text));
    const regions = q.regions.length ? q.regions.join(', ') : 'any region';
    return el('section', {class: 'card queue', 'data-queue': q.name},
      el('h2', {}, q.name, ' ', el('span', {class: 'sub'}, `${q.team_size}v${q.team_size}, ${regions}`)),
      el('div', {class: 'scroll'}, el('table', {class: 'queue-figures'},
        el('tbody', {},
          row('Tickets waiting for a pass', 'waiting', num(f.waiting)),
          row('Oldest waiting', 'oldest_wait_s', wait(f.oldest_wait_s)),
          row('Tickets in formed matches', 'matched', num(f.matched)),
          row('Tickets filed', 'tickets', num(f.tickets)),
          row('Matches formed', 'formed', num(f.formed)),
          row('Matches started on an instance', 'matches', num(f.matches)),
          row('Matches dissolved', 'dissolved', num(f.dissolved)),
          row('Recent started matches', 'recent', num(r.matches)),
          row('The first of them formed (UTC)', 'since',
              r.since ? when(Math.floor(r.since / 1000)) : '–'),
          row('Wait to a match, median', 'wait_p50', wait(w.p50)),
          row('Wait, 95th percentile', 'wait_p95', wait(w.p95)),
          row('Wait, longest', 'wait_max', wait(w.max)),
          row('Wait, mean', 'wait_mean', wait(w.mean)),
          row('Match quality, mean', 'quality_mean', fixed(r.quality_mean, 3)),
          row('Quality under the first step\'s minimum', 'quality_below', pct(r.quality_below)),
          row('Mean |P(A) − ½|', 'p_dev_mean', fixed(r.p_dev_mean, 3))))));
  }

  /* The pool's matchmaking queues with their figures, from the pool's read (no key on a public
   * dashboard; the queues' settings stay the admin's, GET /v1/queues). Counts are since the
   * service started; waits and quality over each queue's last 1,000 started matches. */
  async function pageQueues(pool) {
    setNav(pool, 'queues');
    const head = el('h1', {}, pool, ': matchmaking queues');
    const qs = (await api(`/v1/pools/${enc(pool)}/queues`)).queues;
    if (!qs.length)
      return [head, el('p', {id: 'queues-none'}, 'This pool has no matchmaking queue.')];
    return [
      head,
      el('p', {class: 'sub'}, 'Counts since the service started. Waits (from a ticket\'s ' +
                              'filing to its match\'s forming), quality and P(A) over the ' +
                              'queue\'s last 1,000 matches that started on an instance; ' +
                              'dissolved matches are not among them.'),
      el('div', {class: 'queues'}, qs.map(queueCard))
    ];
  }

  /* ---- the router ----------------------------------------------------------------------- */

  const routes = [
    [/^\/$/, pagePools, 'pools'],
    [/^\/pools\/([^/]+)$/, pageBoard, 'board'],
    [/^\/pools\/([^/]+)\/players\/([^/]+)$/, pagePlayer, 'player'],
    [/^\/pools\/([^/]+)\/rounds$/, pageRounds, 'rounds'],
    [/^\/pools\/([^/]+)\/rounds\/([^/]+)$/, pageRound, 'round'],
    [/^\/pools\/([^/]+)\/maps$/, pageMaps, 'maps'],
    [/^\/pools\/([^/]+)\/health$/, pageHealth, 'health'],
    [/^\/pools\/([^/]+)\/queues$/, pageQueues, 'queues']
  ];

  async function route() {
    document.body.dataset.ready = '';
    const path = location.pathname;
    let page = null;
    for (const [re, fn, name] of routes) {
      const m = re.exec(path);
      if (m) {
        page = {fn: fn, name: name, args: m.slice(1).map(decodeURIComponent)};
        break;
      }
    }
    document.body.dataset.page = page ? page.name : 'unknown';
    try {
      if (!page) throw new Error('no such page');
      const parts = await page.fn(...page.args);
      app.textContent = '';
      app.append(...parts.filter((x) => x));
      document.title = (page.args[page.args.length - 1] || 'pools') + ' · evenodds';
      document.body.dataset.ready = 'ok';
    } catch (e) {
      app.textContent = '';
      app.append(el('div', {class: 'error', role: 'alert'},
        e.status === 401 ? 'This dashboard needs a key: enter it under Key (top right).'
                         : 'Cannot show this page: ' + e.message));
      document.body.dataset.ready = 'error';
    }
  }

  setupKeyPanel();
  route();
})();
