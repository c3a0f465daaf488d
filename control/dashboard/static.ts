/**
 * The dashboard's only CSS and JavaScript, served from /dashboard/static/ so the CSP needs no inline code.
 * No build step: these strings are the files. URLs carry a content hash, so browsers may cache them forever.
 */

const CSS = `
:root{--fg:#1d2433;--muted:#5b6478;--bg:#f5f6fa;--card:#fff;--line:#e1e4ec;--accent:#3b5bdb;--accent-fg:#fff;--danger:#c92a2a;--ok:#237032;--warn-bg:#fff4e6;--warn:#a35200;--radius:8px}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
header.top{background:#1d2433;color:#fff}
header.top .bar{max-width:72rem;margin:0 auto;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:center}
header.top a{color:#fff;text-decoration:none}
header.top .brand{font-weight:700;font-size:1.1rem;letter-spacing:.02em}
header.top nav{display:flex;gap:.25rem 1.25rem;flex:1;white-space:nowrap}
header.top nav a{opacity:.85}header.top nav a[aria-current=page]{opacity:1;text-decoration:underline}
header.top .who{display:flex;gap:.75rem;align-items:center;font-size:.9rem;min-width:0}
header.top .who .email{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;max-width:18rem;opacity:.9}
header.top .who button{background:none;border:1px solid #fff6;color:#fff;padding:.2rem .6rem}
header.top .ws{position:relative;min-width:0}
header.top .ws summary{display:flex;align-items:center;gap:.3rem;cursor:pointer;list-style:none;border:1px solid #fff6;border-radius:6px;padding:.15rem .55rem;max-width:16rem}
header.top .ws summary::-webkit-details-marker{display:none}header.top .ws summary::after{content:"▾";font-size:.8rem}
header.top .ws-name{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-weight:600}
.ws-menu{position:absolute;left:0;top:calc(100% + .35rem);z-index:10;width:min(20rem,calc(100vw - 2rem));background:var(--card);color:var(--fg);border:1px solid var(--line);border-radius:var(--radius);box-shadow:0 6px 24px #0003;padding:.35rem}
.ws-menu ul{list-style:none;margin:0;padding:0}.ws-menu ul.ws-links{border-top:1px solid var(--line);margin-top:.35rem;padding-top:.35rem}
.ws-menu button{display:flex;width:100%;justify-content:space-between;gap:1rem;border:0;background:none;text-align:left;padding:.35rem .6rem}
.ws-menu button:hover,.ws-menu a:hover{background:var(--bg)}.ws-menu button[aria-current=true]{font-weight:700}.ws-menu button[aria-current=true]::before{content:"✓ "}
.ws-menu .ws-item{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;flex:1}
header.top .ws-menu a{display:block;color:var(--accent);padding:.35rem .6rem;border-radius:6px}
.ws-menu .ws-who{display:none;margin:0;padding:.35rem .6rem;border-bottom:1px solid var(--line);overflow-wrap:anywhere}
table+.card{margin-top:1rem}
main{max-width:72rem;margin:0 auto;padding:1.25rem 1rem 3rem}
main.narrow{max-width:26rem;padding-top:8vh}
h1{font-size:1.5rem;margin:0 0 1rem}h2{font-size:1.15rem;margin:1.5rem 0 .75rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:1rem 1.25rem;margin-bottom:1rem}
.card>h2:first-child{margin-top:0}
.head{display:flex;flex-wrap:wrap;gap:.5rem 1rem;justify-content:space-between;align-items:center;margin-bottom:1rem}.head h1{margin:0}
.muted{color:var(--muted)}.small{font-size:.85rem}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
label .hint,.hint{font-weight:400;color:var(--muted);font-size:.85rem}
input,select,textarea{font:inherit;width:100%;padding:.45rem .6rem;border:1px solid #c5cad6;border-radius:6px;background:#fff;color:var(--fg)}
input[type=checkbox]{width:auto;margin-right:.4rem}
label.check{display:flex;align-items:center;font-weight:400}
textarea{min-height:4.5rem}
input:focus,select:focus,textarea:focus,button:focus-visible,a:focus-visible{outline:2px solid var(--accent);outline-offset:1px}
button,.btn{font:inherit;display:inline-block;padding:.45rem .9rem;border-radius:6px;border:1px solid #c5cad6;background:#fff;color:var(--fg);cursor:pointer;text-decoration:none;line-height:1.4;white-space:nowrap}
.btn-primary{background:var(--accent);border-color:var(--accent);color:var(--accent-fg)}
.btn-danger{background:var(--danger);border-color:var(--danger);color:#fff}
.btn-small{padding:.15rem .5rem;font-size:.85rem}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin-top:1rem}
.inline{display:inline}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:0 1rem}.grid>.wide{grid-column:1/-1}
fieldset{border:1px solid var(--line);border-radius:var(--radius);padding:.5rem 1rem 1rem;margin:1rem 0;background:var(--card)}
legend{font-weight:700;padding:0 .4rem}
.rows .row{display:grid;grid-template-columns:8rem 8rem 1fr;gap:.5rem;margin-top:.5rem}
.rows.ab .row{grid-template-columns:1fr 7rem}
.flash{padding:.6rem .9rem;border-radius:6px;margin-bottom:1rem;background:#e6fcf5;border:1px solid #96f2d7}
.errors{padding:.6rem .9rem;border-radius:6px;margin-bottom:1rem;background:#fff5f5;border:2px solid var(--danger);color:var(--fg)}
.errors:focus{outline:3px solid var(--accent);outline-offset:2px}
.errors h2{font-size:1.05rem;margin:0 0 .25rem;color:var(--danger)}.errors p{margin:.25rem 0 0}
.errors ul{margin:.25rem 0 0;padding-left:1.2rem}.errors a{color:var(--danger);font-weight:600}
.err{color:var(--danger);font-size:.85rem;margin:.2rem 0 0;font-weight:600}
[aria-invalid=true]{border-color:var(--danger);box-shadow:0 0 0 1px var(--danger)}
.once{background:var(--warn-bg);border:1px solid #ffd8a8;border-radius:var(--radius);padding:1rem;margin-bottom:1rem}
.once strong{color:var(--warn)}
.copyrow{display:flex;gap:.5rem;align-items:center;margin:.5rem 0}.copyrow input{flex:1;min-width:0}
.filters{display:grid;grid-template-columns:2fr 1fr 1fr 1fr 1fr auto;gap:.5rem;align-items:end}
.filters label{margin:0 0 .2rem;font-size:.85rem}
.filters>div{min-width:0}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:var(--radius)}
th,td{text-align:left;padding:.55rem .7rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
td.target{max-width:22rem;overflow-wrap:anywhere}
.tag{display:inline-block;background:#edf2ff;color:#364fc7;border-radius:99px;padding:0 .55rem;font-size:.8rem;margin:0 .2rem .2rem 0;text-decoration:none;overflow-wrap:anywhere}
.status{font-size:.8rem;border-radius:4px;padding:.05rem .4rem;background:#e9ecef}
.status-active{background:#d3f9d8;color:var(--ok)}.status-paused{background:#fff3bf}.status-archived{background:#e9ecef;color:var(--muted)}
.status-revoked{background:#ffe3e3;color:var(--danger)}
.state-live{background:#d3f9d8;color:var(--ok)}.state-scheduled{background:#d0ebff;color:#1864ab}
.state-expired{background:#ffe3e3;color:var(--danger)}.state-limit_reached{background:#ffe8cc;color:var(--warn)}
.state-paused{background:#fff3bf}.state-archived{background:#e9ecef;color:var(--muted)}
.pager{display:flex;gap:.75rem;justify-content:space-between;margin-top:1rem}
.totals{display:grid;grid-template-columns:repeat(auto-fit,minmax(9rem,1fr));gap:1rem}
.totals .card,.charts .card{margin:0}
.totals{margin-bottom:1rem}
.totals .num{font-size:1.7rem;font-weight:700}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(20rem,1fr));gap:1rem}
.chart .bar{fill:var(--accent)}.chart .bar-zero{fill:#dbe4ff}.chart .bar-visitors{fill:#1c2f8a}.chart .baseline{stroke:#c5cad6;stroke-width:1}
.card h3{font-size:1rem;margin:0 0 .6rem}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.series svg{width:100%;height:12rem;display:block}
.series .ticks{display:flex;justify-content:space-between;margin-top:.25rem;white-space:nowrap;gap:.5rem}
.series .legend{display:flex;flex-wrap:wrap;align-items:center;gap:.3rem .5rem;margin-bottom:.4rem}
.key{display:inline-block;width:.8rem;height:.8rem;border-radius:2px}.key-clicks{background:var(--accent)}.key-visitors{background:#1c2f8a}
details.figures{margin-top:.6rem}details.figures summary{cursor:pointer;color:var(--accent)}
.scroll{max-height:20rem;overflow:auto;margin-top:.4rem}
.figures-table th,.figures-table td{padding:.25rem .6rem;font-size:.85rem}
.figures-table td{text-align:right;font-variant-numeric:tabular-nums}
table.bd{border:0;table-layout:fixed}
table.bd th,table.bd td{border:0;padding:.2rem .3rem;vertical-align:middle}
table.bd thead th{font-size:.72rem}
table.bd thead th:nth-child(1){width:42%}table.bd thead th:nth-child(3),table.bd thead th:nth-child(4){width:4.5rem;text-align:right}
table.bd .blabel{font-weight:400;font-size:.9rem;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;text-transform:none;letter-spacing:0;color:var(--fg)}
table.bd .blabel a.active{font-weight:700}table.bd .blabel a.active::before{content:"✓ "}
table.bd svg{width:100%;height:.9rem;display:block}
table.bd .bnum{font-size:.85rem;color:var(--muted);font-variant-numeric:tabular-nums;text-align:right}
.range{display:grid;gap:.6rem}
.pick{display:flex;flex-wrap:wrap;align-items:center;gap:.3rem .6rem}
.pick-label{font-weight:600;min-width:5.5rem}
.segs{display:flex;flex-wrap:wrap;border:1px solid #c5cad6;border-radius:6px;overflow:hidden}
.seg{padding:.3rem .7rem;text-decoration:none;color:var(--fg);border-left:1px solid #c5cad6;white-space:nowrap}
.seg:first-child{border-left:0}
.seg[aria-current=true]{background:var(--accent);color:var(--accent-fg)}.seg-off{color:var(--muted);background:#f1f3f5;cursor:not-allowed}
.custom-range{display:flex;flex-wrap:wrap;align-items:flex-start;gap:.5rem 1rem}.custom-range .act{padding-top:1.55rem}
.custom-range label{margin:0 0 .2rem;font-size:.85rem}.custom-range .csv{margin-left:auto}
.chips{display:flex;flex-wrap:wrap;align-items:center;gap:.4rem .6rem;margin-bottom:1rem}
.chips ul{display:contents;list-style:none}.chips li{display:inline}
.chip{display:inline-block;background:#edf2ff;color:#364fc7;border:1px solid #bac8ff;border-radius:99px;padding:.1rem .6rem;font-size:.85rem;text-decoration:none;overflow-wrap:anywhere}
.overview{display:grid;grid-template-columns:1fr auto;gap:1rem;align-items:start}
.qr svg{width:10rem;height:10rem;display:block;background:#fff}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
@media (max-width:42rem){
  header.top .bar{justify-content:space-between}
  header.top nav{order:3;flex:1 0 100%;justify-content:space-between;max-width:22rem}
  header.top .who .email{max-width:11rem}
  header.top .bar{position:relative}
  header.top .ws{position:static;flex:0 1 auto}header.top .ws summary{max-width:100%}
  header.top .ws-menu{left:1rem;top:calc(100% - .25rem)}
  header.top .who .email{display:none}.ws-menu .ws-who{display:block}
  .filters{grid-template-columns:1fr 1fr}.filters .q{grid-column:1/-1}
  .overview{grid-template-columns:1fr}
  .rows .row{grid-template-columns:1fr 1fr}.rows .row .url{grid-column:1/-1}
  .rows.ab .row{grid-template-columns:1fr 5.5rem}.rows.ab .row .url{grid-column:auto}
  .pick-label{min-width:0;flex:1 0 100%}
  .segs{display:grid;grid-auto-flow:column;grid-auto-columns:1fr;width:100%}
  .seg{padding:.3rem .3rem;text-align:center;font-size:.9rem}
  .custom-range>div{flex:1 1 8.5rem}.custom-range .csv{margin-left:0}.custom-range{align-items:flex-end}.custom-range .act{padding-top:0}
  table.responsive,table.responsive tbody,table.responsive tr,table.responsive td{display:block;width:100%}
  table.responsive thead{display:none}
  table.responsive tr{border-bottom:2px solid var(--line);padding:.4rem 0}
  table.responsive td{border:0;padding:.2rem .7rem;max-width:none}
  table.responsive td[data-label]::before{content:attr(data-label);display:block;font-size:.75rem;text-transform:uppercase;color:var(--muted)}
  table.responsive td a{display:inline-block;min-height:24px;line-height:24px}
}
`;

const JS = `
"use strict";
function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  var t = document.createElement("textarea");
  t.value = text; t.setAttribute("readonly", ""); t.style.position = "fixed"; t.style.opacity = "0";
  document.body.appendChild(t); t.select();
  try { document.execCommand("copy"); } finally { document.body.removeChild(t); }
  return Promise.resolve();
}
document.addEventListener("click", function (e) {
  // A link of the error summary: the field takes the focus, its label scrolled into view with it.
  var jump = e.target.closest("[data-error-summary] a[href^='#']");
  var field = jump && document.getElementById(jump.getAttribute("href").slice(1));
  if (field) {
    e.preventDefault();
    var label = document.querySelector('label[for="' + field.id + '"]');
    (label || field).scrollIntoView();
    field.focus({ preventScroll: true });
    return;
  }
  var copy = e.target.closest("[data-copy]");
  if (copy) {
    e.preventDefault();
    var label = copy.textContent;
    copyText(copy.getAttribute("data-copy")).then(function () {
      copy.textContent = "Copied!";
      setTimeout(function () { copy.textContent = label; }, 1500);
    }, function () { copy.textContent = "Press Ctrl+C"; });
    return;
  }
  var add = e.target.closest("[data-add-row]");
  if (add) {
    e.preventDefault();
    var box = document.querySelector('[data-rows="' + add.getAttribute("data-add-row") + '"]');
    var rows = box.querySelectorAll(".row");
    if (rows.length >= Number(box.getAttribute("data-max"))) return;
    var row = rows[rows.length - 1].cloneNode(true);
    // The new row's controls: empty, numbered as the server numbers rows (id name-index, "Rule 3 URL"), not invalid.
    row.querySelectorAll("input,select").forEach(function (c) {
      if (c.tagName === "INPUT") c.value = "";
      c.id = c.name + "-" + rows.length;
      c.setAttribute("aria-label", c.getAttribute("aria-label").replace(/[0-9]+/, String(rows.length + 1)));
      c.removeAttribute("aria-invalid");
      c.removeAttribute("aria-describedby");
    });
    box.appendChild(row);
  }
});
// A form that came back with problems: the summary takes the focus, so it is read out and Tab goes on to its links.
var summary = document.querySelector("[data-error-summary]");
if (summary) summary.focus();
// A comma-separated input with suggestions (tags): each suggestion completes the last item after those typed.
document.addEventListener("input", function (e) {
  var input = e.target;
  if (!input.matches || !input.matches("input[data-multi][list]")) return;
  var list = document.getElementById(input.getAttribute("list"));
  if (!list) return;
  if (!list.base) list.base = Array.prototype.map.call(list.options, function (o) { return o.value; });
  var cut = input.value.lastIndexOf(",");
  var before = cut < 0 ? "" : input.value.slice(0, cut + 1) + " ";
  var chosen = before.split(",").map(function (t) { return t.trim().toLowerCase(); });
  list.replaceChildren.apply(list, list.base.filter(function (t) { return chosen.indexOf(t.toLowerCase()) < 0; }).map(function (t) {
    var o = document.createElement("option");
    o.value = before + t;
    return o;
  }));
});
document.addEventListener("submit", function (e) {
  var msg = e.target.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) e.preventDefault();
});
`;

function asset(body: string, type: string) {
  const version = Bun.hash(body).toString(36);
  return { body, type, version };
}

export const ASSETS = {
  "app.css": asset(CSS, "text/css; charset=utf-8"),
  "app.js": asset(JS, "text/javascript; charset=utf-8"),
} as const;

export type AssetName = keyof typeof ASSETS;

export const assetUrl = (name: AssetName) => `/dashboard/static/${name}?v=${ASSETS[name].version}`;

export function serveAsset(name: string): Response {
  const a = Object.hasOwn(ASSETS, name) ? ASSETS[name as AssetName] : undefined; // not "constructor" or "__proto__"
  if (!a) return new Response("Not found", { status: 404, headers: { "content-type": "text/plain" } });
  return new Response(a.body, {
    headers: { "content-type": a.type, "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" },
  });
}
