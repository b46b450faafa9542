"""HTML of the sign and consoles. Plain HTML, CSS and a little JavaScript; no build step.

All dynamic text is inserted with ``textContent`` (never ``innerHTML``), so nothing the server
sends can become markup.
"""

from __future__ import annotations

import html

from controller.auth import Actor

STYLE = """
:root { color-scheme: dark; }
body { margin: 0; font-family: "DejaVu Sans", Verdana, sans-serif; background: #0b1020;
       color: #f4f4f4; }
header { padding: 0.6rem 1rem; background: #141a33; display: flex; gap: 1rem;
         align-items: center; }
header a { color: #9cf; }
main { padding: 1rem; }
button { font-size: 1.1rem; padding: 0.5rem 1rem; margin: 0.2rem; border-radius: 6px;
         border: 0; background: #2e6bd6; color: white; cursor: pointer; }
button.warn { background: #c0392b; }
input { font-size: 1.1rem; padding: 0.4rem; }
table { border-collapse: collapse; } td, th { border: 1px solid #333a5c; padding: 0.3rem 0.6rem; }
.msg { min-height: 1.5rem; color: #ffd54f; }
.held { background: #7a1f1f; padding: 0.5rem; border-radius: 6px; }
.camera-warn { background: #6b531a; padding: 0.5rem; border-radius: 6px; }
.frame-ok { color: #8fbf8f; } .frame-bad { background: #c0392b; color: #fff; padding: 0 0.3rem; }
"""

SIGN_STYLE = """
body { margin: 0; background: #05060d; color: #fff; font-family: "DejaVu Sans", sans-serif;
       overflow: hidden; }
#meter-box { text-align: center; padding: 2vh 0 1vh; background: linear-gradient(#3b0a45,#05060d); }
#meter-title { font-size: 4vh; letter-spacing: 0.4vw; color: #ffcc33; }
#meter { font-size: 14vh; font-weight: bold; color: #ffe680;
         text-shadow: 0 0 3vh #ff9900; font-variant-numeric: tabular-nums; }
#dynamic { display: flex; justify-content: center; gap: 2vw; min-height: 16vh; }
.dyn { background: #102a5c; border: 0.4vh solid #4fc3f7; border-radius: 2vh; padding: 1vh 2vw;
       text-align: center; }
.dyn .hand { font-size: 3vh; } .dyn .odds { font-size: 6vh; font-weight: bold; color: #7CFC00; }
.dyn .was { font-size: 2.4vh; color: #aaa; text-decoration: line-through; }
#seats { display: flex; justify-content: center; gap: 1.5vw; margin-top: 3vh; }
.seat { width: 12vw; height: 20vh; border-radius: 2vh; background: #1b1f33; text-align: center;
        display: flex; flex-direction: column; justify-content: center; border: 0.4vh solid #333; }
.seat .num { font-size: 5vh; } .seat .label { font-size: 2.4vh; min-height: 6vh; }
.seat.on { background: #1e7d32; border-color: #7CFC00; }
.seat.blink { animation: blink 0.8s steps(2, start) infinite; background: #b8860b; }
@keyframes blink { to { visibility: hidden; } }
#status { text-align: center; font-size: 3vh; color: #ccc; margin-top: 2vh; }
"""


def page(title: str, body: str, script: str = "", style: str = STYLE) -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{style}</style></head>
<body>{body}<script>{script}</script></body></html>"""


def index() -> str:
    return page("Monster Match", """<header><b>Monster Match Dynamic</b></header><main><ul>
<li><a href="/sign">Sign</a> (read-only)</li><li><a href="/dealer">Dealer console</a></li>
<li><a href="/floor">Floorperson console</a></li>
<li><a href="/surveillance">Surveillance</a></li></ul></main>""")


def sign() -> str:
    body = """
<div id="meter-box"><div id="meter-title">MONSTER MATCH PROGRESSIVE</div>
<div id="meter">$0.00</div></div>
<div id="dynamic"></div>
<div id="seats"></div>
<div id="status"></div>"""
    script = """
function el(tag, cls, text) { const e = document.createElement(tag); if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text; return e; }
function money(s) { const [w, f] = s.split('.');
  return '$' + w.replace(/\\B(?=(\\d{3})+(?!\\d))/g, ',') + '.' + f; }
function render(v) {
  document.getElementById('meter').textContent = money(v.meter);
  const dyn = document.getElementById('dynamic'); dyn.replaceChildren();
  const r = v.round;
  if (r && r.dynamic_pays) for (const d of r.dynamic_pays) {
    const box = el('div', 'dyn'); box.dataset.hand = d.hand;
    box.append(el('div', 'hand', d.label), el('div', 'odds', d.pays.toLocaleString('en-US') + ' for 1'),
               el('div', 'was', d.base + ' for 1'));
    dyn.append(box);
  }
  const seats = document.getElementById('seats'); seats.replaceChildren();
  const wins = {}; if (r) for (const w of r.wins) wins[w.seat] = w;
  for (let s = 1; s <= v.seats; s++) {
    const w = wins[s]; const box = el('div', 'seat' + (w ? (w.source === 'meter' ? ' blink' : ' on') : ''));
    box.id = 'seat-' + s;
    const wagered = r && r.wagers.includes(s);
    box.append(el('div', 'num', String(s)), el('div', 'label', w ? w.label : (wagered ? 'IN' : '')));
    if (w) box.append(el('div', 'label', w.paid ? 'PAID $' + w.amount :
                                        'awaiting validation'));
    seats.append(box);
  }
  let status = '';
  if (r) status = r.held ? 'Round ' + r.id + ' held: floorperson called' :
                  'Round ' + r.id + ': ' + r.state.replaceAll('_', ' ');
  document.getElementById('status').textContent = status;
  document.body.dataset.version = v.version;
}
const es = new EventSource('/events');
es.onmessage = (m) => render(JSON.parse(m.data));
"""
    return page("Monster Match sign", body, script, SIGN_STYLE)


def login() -> str:
    body = """<header><b>Monster Match</b> — sign in</header><main>
<p><label>User <input id="name" autocomplete="username"></label></p>
<p><label>Password <input id="password" type="password" autocomplete="current-password"></label></p>
<p><button id="signin">Sign in</button></p><div class="msg" id="msg"></div></main>"""
    script = """
document.getElementById('signin').onclick = async () => {
  const r = await fetch('/api/login', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({name: document.getElementById('name').value,
                          password: document.getElementById('password').value})});
  const j = await r.json();
  if (!r.ok) { document.getElementById('msg').textContent = j.error; return; }
  const next = new URLSearchParams(location.search).get('next');
  location.href = (next && next.startsWith('/') && !next.startsWith('//')) ? next : j.home;
};
document.getElementById('password').addEventListener('keydown', (e) => {
  if (e.key === 'Enter') document.getElementById('signin').click(); });
"""
    return page("Sign in", body, script)


CONSOLE_SCRIPT = """
const KIND = document.body.dataset.kind;
function el(tag, cls, text) { const e = document.createElement(tag); if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text; return e; }
function btn(label, onclick, cls) { const b = el('button', cls, label); b.onclick = onclick; return b; }
function say(t) { document.getElementById('msg').textContent = t; }
async function act(name, body) {
  const r = await fetch('/api/action/' + name, {method: 'POST',
    headers: {'Content-Type': 'application/json', 'X-Monster-Match': '1'},
    body: JSON.stringify(body || {})});
  const j = await r.json();
  say(r.ok ? name + ': done' : j.error);
  if (r.status === 401) location.href = '/login?next=/' + KIND;
  refresh();
}
function input(id, ph) { const i = el('input'); i.id = id; i.placeholder = ph; return i; }
function val(id) { return document.getElementById(id).value; }
async function refresh() {
  if (KIND === 'surveillance') return history();
  const r = await fetch('/api/console');
  if (r.status === 401) { location.href = '/login?next=/' + KIND; return; }
  const v = await r.json(); const d = v.detail; const box = document.getElementById('round');
  // Every event redraws the console: keep what the user was typing (a chip count, a card
  // code, a note) and where, or a redraw between typing and clicking would send it empty.
  const typed = {}; const focus = document.activeElement ? document.activeElement.id : '';
  for (const i of box.querySelectorAll('input')) if (i.value) typed[i.id] = i.value;
  box.replaceChildren();
  box.append(el('p', '', 'Meter $' + v.meter));
  if (KIND === 'floor') box.append(cameraLine(v.camera));
  if (!d) {
    box.append(el('p', '', 'No round open.'));
    if (KIND === 'dealer') box.append(btn('Open round', () => act('open')));
    return;
  }
  box.append(el('h2', '', 'Round ' + d.id + ' — ' + d.state));
  if (d.hold_reason) box.append(el('p', 'held', 'HELD: ' + d.hold_reason));
  box.append(el('p', '', 'Wagers at seats: ' + (d.wagers.join(', ') || 'none') +
             (d.dealer_count !== null ? ' — dealer count ' + d.dealer_count : '')));
  if (v.round && v.round.dynamic_pays) box.append(el('p', '', 'Dynamic Pays: ' +
      v.round.dynamic_pays.map(x => x.label + ' ' + x.pays + ' for 1').join('; ')));
  const cards = el('table'); cards.id = 'cards';
  const hr = el('tr'); for (const h of ['spot', 'shoe', 'camera', 'source']) hr.append(el('th', '', h));
  cards.append(hr);
  for (const c of d.cards) { const tr = el('tr');
    for (const x of [c.spot, c.code, c.camera || '', c.source]) tr.append(el('td', '', x));
    cards.append(tr); }
  box.append(cards);
  const res = el('div'); res.id = 'results';
  for (const w of d.results) {
    const row = el('p', 'result', 'Seat ' + w.seat + ': ' + w.label + ' — $' + w.amount +
      (w.source === 'meter' ? ' (meter)' : '') + (w.confirmed_by ? ' — confirmed' : '') +
      (w.validated_by ? ' — validated by ' + w.validated_by : '') + (w.paid ? ' — PAID' : ''));
    row.dataset.seat = w.seat;
    if (KIND === 'dealer' && !w.confirmed_by)
      row.append(btn('Confirm seat ' + w.seat, () => act('confirm', {seat: w.seat})));
    if (KIND === 'floor' && w.confirmed_by && !w.validated_by)
      row.append(btn('Validate seat ' + w.seat, () => act('validate', {seat: w.seat})));
    if (KIND === 'floor' && w.validated_by && w.source === 'meter' && !w.paid) {
      const i = input('doc-' + w.seat, 'jackpot slip no.'); row.append(i,
        btn('Record document', () => act('document', {seat: w.seat, document: val('doc-' + w.seat)})));
    }
    res.append(row);
  }
  box.append(res);
  const ctl = el('div'); ctl.id = 'controls';
  if (KIND === 'dealer') {
    if (d.state === 'bets_open') ctl.append(btn('Lock out (no more bets)', () => act('lockout')));
    if (d.state === 'locked') { ctl.append(input('count', 'chips counted'),
        btn('Submit count', () => act('count', {count: parseInt(val('count'), 10)}))); }
    if (d.state === 'dealing') ctl.append(btn('Reveal hole card', () => act('reveal')));
    if (d.state === 'held') ctl.append(input('card', 'card code e.g. QH'),
        btn('Enter card', () => act('card', {code: val('card')})));
  }
  if (KIND === 'floor' && d.state === 'held') {
    ctl.append(input('note', 'resolution note'),
      btn('Resolve: continue', () => act('resolve', {action: 'continue', note: val('note')})),
      btn('Void round', () => act('resolve', {action: 'void', note: val('note')}), 'warn'));
  }
  box.append(ctl);
  for (const [id, value] of Object.entries(typed)) {
    const i = document.getElementById(id); if (i) i.value = value; }
  if (focus && document.getElementById(focus)) document.getElementById(focus).focus();
}
// The camera's condition as last recorded (blurred, streaked by motion, cards too small, dark).
function cameraLine(c) {
  const p = el('p', c && c.warnings.length ? 'camera-warn' : '', '');
  p.id = 'camera';
  p.textContent = !c ? 'Camera: no condition recorded' : c.warnings.length
    ? 'Camera: ' + c.advice.join('; ') + ' (' + c.measured + '; since round ' + c.round + ')'
    : 'Camera: clear (since round ' + c.round + ')';
  return p;
}
async function history() {
  const r = await fetch('/api/history?limit=50');
  if (r.status !== 200) { location.href = '/login?next=/surveillance'; return; }
  const v = await r.json(); const box = document.getElementById('round'); box.replaceChildren();
  box.append(cameraLine(v.camera));
  const t = el('table'); t.id = 'history';
  const hr = el('tr'); for (const h of ['round', 'draw', 'cards (shoe / camera)', 'results', 'holds', 'camera', 'frames'])
    hr.append(el('th', '', h));
  t.append(hr);
  for (const rd of v.rounds) { const tr = el('tr');
    tr.append(el('td', '', String(rd.id)), el('td', '', rd.draw.join('; ')),
      el('td', '', rd.cards.map(c => c.spot + ' ' + (c.shoe || '-') + '/' + (c.camera || '-')).join(', ')),
      el('td', '', rd.results.map(x => 'seat ' + x.seat + ' ' + x.hand + ' $' + x.amount).join('; ')),
      el('td', '', rd.holds.join('; ')),
      el('td', '', rd.camera.map(w => w.length ? w.join(', ') : 'clear').join(' → ')));
    const f = el('td'); for (const fr of rd.frames) { const a = el('a', '', fr.name);
      a.href = '/frames/' + encodeURIComponent(fr.name); f.append(a, document.createTextNode(' '));
      // the kept file against the SHA-256 recorded when it was read
      if (fr.status) f.append(el('span', fr.status === 'as read' ? 'frame-ok' : 'frame-bad',
                                 fr.status === 'as read' ? '(as read) ' : fr.status.toUpperCase() + ' '));
      // a reading's frame drawn with the cards read again and what the record holds
      if (fr.first && fr.status === 'as read') { const d = el('a', 'drawn', 'drawn');
        d.href = '/frames/' + encodeURIComponent(fr.name) + '/drawn'; f.append(d, document.createTextNode(' ')); } }
    tr.append(f); t.append(tr); }
  box.append(t);
}
refresh();
if (KIND !== 'surveillance') { const es = new EventSource('/events'); es.onmessage = () => refresh(); }
else setInterval(refresh, 5000);
"""


def console(kind: str, who: Actor) -> str:
    titles = {"dealer": "Dealer console", "floor": "Floorperson console",
              "surveillance": "Surveillance (read-only)"}
    body = f"""<header><b>{titles[kind]}</b><span>{html.escape(str(who))}</span>
<a href="/sign">sign</a><a href="/logout">sign out</a></header>
<main><div class="msg" id="msg"></div><div id="round"></div></main>"""
    return page(titles[kind], body, CONSOLE_SCRIPT).replace("<body>",
                                                           f'<body data-kind="{kind}">', 1)
