"""The HTML page around the report: its styles, its one small script, its header.

Nothing is fetched: the Content-Security-Policy is ``default-src 'none'`` (inline styles
and script allowed, images only as ``data:``), the icon is an empty ``data:`` URL and the
fonts are the system's."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

#: One colour per kind of shape; a legend swatch of the same class shows it.
_COLOURS = {
    "e0": "#5c8fd6", "e1": "#9dbde8", "q0": "#f2b233", "q1": "#f7d58a",
    "before": "#e6e8ec", "no-epoch": "#c5cad3", "diverge": "#d81b60",
    "unfenced": "#43a047", "fenced": "#fb8c00", "controlled_shutdown": "#8e9fb0",
    "shut_down": "#607080", "registered": "#26a69a", "unregistered": "#eceff1",
    "unknown": "#d0d4da", "silent": "#f4f5f7", "registration": "#263238", "crash": "#d32f2f",
    "storm": "#8e24aa",
    "snapshot": "#5e35b1", "snapshot-deleted": "#b0a4cf", "between": "#90caf9",
    "deleted": "#bdbdbd", "log-start": "#111",
    "g0": "#64a5e8", "g1": "#a3c9f0", "damaged": "#d32f2f", "warned": "#f9a825",
    "cut": "#c62828", "p-ok": "#a5d6a7", "p-info": "#90caf9", "p-warning": "#ffb74d",
    "p-error": "#e53935", "many": "#7e8a99", "committed": "#00897b", "track": "#cfd8dc",
}

CSS = """
:root{--ink:#1d2433;--mute:#5b6474;--line:#d9dee7;--panel:#f6f8fb;--ok:#2e7d32;
--warn:#b26a00;--err:#c62828;--info:#1565c0;font-family:system-ui,-apple-system,"Segoe UI",
Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:#fff}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{margin:0 auto;max-width:1120px;padding:24px 28px 60px;line-height:1.45}
h1{font-size:22px;margin:0 0 2px}
h2{font-size:17px;margin:30px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.sub{color:var(--mute);font-size:13px;margin:0 0 18px;word-break:break-all}
.verdicts{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:10px}
.verdict{border:1px solid var(--line);border-left:6px solid var(--mute);border-radius:6px;
padding:7px 11px;background:var(--panel)}
.verdict.ok{border-left-color:var(--ok)}.verdict.warning{border-left-color:var(--warn)}
.verdict.error{border-left-color:var(--err)}.verdict.none{opacity:.65}
.verdict b{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--mute)}
.verdict em{float:right;font-style:normal;font-weight:600;font-size:12px}
.verdict.ok em{color:var(--ok)}.verdict.warning em{color:var(--warn)}
.verdict.error em{color:var(--err)}.verdict span{display:block;font-size:13px}
h3{font-size:14px;margin:16px 0 4px}
.next{margin:0;padding-left:18px;font-size:13px}.next li{margin:3px 0}
.next b{text-transform:uppercase;font-size:11px;letter-spacing:.05em;color:var(--mute)}
.next code{overflow-wrap:anywhere}
code{background:#eef1f5;padding:1px 4px;border-radius:3px;font-size:12px}
figure.picture{margin:12px 0 24px;break-inside:avoid}
figcaption{font-weight:600;font-size:14px}
.note{color:var(--mute);font-size:13px;margin:2px 0 6px}
svg.chart{display:block;width:100%;height:auto;font-size:11px}
svg .band{fill:#f7f8fa}svg .grid{stroke:#e3e6eb}svg .axis{stroke:#9aa3af}
svg .tick{fill:var(--mute);text-anchor:middle}
svg .axis-label{fill:var(--mute);text-anchor:end}
svg .lane-label{fill:var(--ink);text-anchor:end;font-size:12px}
svg .span.silent{stroke:#9aa3ad;stroke-dasharray:3 2;stroke-width:1}
.swatch.silent{border:1px dashed #9aa3ad}
svg .lane[data-kind=quorum] .lane-label{font-style:italic}
svg .span{stroke:#fff;stroke-width:.6}
svg .span-label{fill:#10151f;text-anchor:middle;pointer-events:none;font-size:10.5px}
svg .span.cut{fill:url(#cut-hatch);stroke:#c62828;stroke-width:1.2}
.swatch.cut{background:repeating-linear-gradient(135deg,#c62828 0 2px,transparent 2px 5px)}
svg .span.unregistered{stroke:#cfd8dc}
svg .mark{stroke:#fff;stroke-width:1}
svg .rule line{stroke:#d81b60;stroke-width:1.5;stroke-dasharray:4 3}
svg .rule polygon{fill:#d81b60}
svg rect:hover,svg polygon:hover,svg circle:hover{stroke:#000;stroke-width:1.2}
svg.pos{display:block}svg.pos .tick-left{fill:var(--mute);font-size:11px}
.legend{font-size:12px;color:var(--mute);display:flex;flex-wrap:wrap;gap:3px 16px;
margin-top:4px}
.swatch{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;
vertical-align:-1px;border:1px solid rgba(0,0,0,.15)}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--panel);position:sticky;top:0;cursor:pointer;user-select:none}
th[data-sort=asc]::after{content:" ▲"}th[data-sort=desc]::after{content:" ▼"}
td.sev-error{color:var(--err);font-weight:600}td.sev-warning{color:var(--warn);font-weight:600}
td.sev-info{color:var(--info)}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.file{word-break:break-all;min-width:230px;max-width:360px;font-size:12px}
.verdict-truncated,.verdict-undefined,.verdict-out_of_range{color:var(--err);font-weight:600}
.verdict-no_epoch{color:var(--warn)}
.filters{display:flex;gap:14px;flex-wrap:wrap;align-items:center;margin:6px 0 8px;font-size:13px}
.filters input,.filters select{font:inherit;padding:2px 6px}
#f-shown{color:var(--mute)}
#tip{position:fixed;display:none;z-index:9;pointer-events:none;max-width:520px;
background:#263238;color:#fff;font-size:12px;line-height:1.35;padding:5px 8px;
border-radius:4px;white-space:pre-wrap;box-shadow:0 2px 6px rgba(0,0,0,.25)}
.codes{display:flex;flex-wrap:wrap;gap:6px;margin:4px 0 8px}
.chip{font:inherit;font-size:12px;border:1px solid var(--line);border-radius:12px;
background:var(--panel);padding:1px 10px;cursor:pointer}
.chip.sev-error{border-color:var(--err);color:var(--err)}
.chip.sev-warning{border-color:var(--warn);color:var(--warn)}
.chip.sev-info{border-color:var(--info);color:var(--info)}
@media print{body{max-width:none;padding:0;font-size:11px}.filters,.codes,#tip{display:none}
th{position:static}h2{break-after:avoid}tr,.verdict{break-inside:avoid}
.verdicts{grid-template-columns:repeat(4,1fr)}
svg rect:hover,svg polygon:hover,svg circle:hover{stroke:none}}
""" + "".join(f".{k}{{fill:{v};background:{v}}}" for k, v in _COLOURS.items())

#: The pictures' tooltips (shown at once, where the browser's own wait a second: the SVG
#: titles become data-tip, so without script the browser's own still show), then the
#: findings table's filters and sorting.
SCRIPT = """
(function(){
var tip=document.createElement('div');tip.id='tip';document.body.appendChild(tip);
document.querySelectorAll('svg.chart title, svg.pos title').forEach(function(t){
  var p=t.parentNode;if(p.tagName==='svg')return;
  p.setAttribute('data-tip',t.textContent);t.remove();});
function hide(){tip.style.display='none';}
document.addEventListener('mousemove',function(e){
  var el=e.target.closest?e.target.closest('[data-tip]'):null;
  if(!el){hide();return;}
  tip.textContent=el.getAttribute('data-tip');tip.style.display='block';
  var x=Math.min(e.clientX+14,innerWidth-tip.offsetWidth-8),y=e.clientY+16;
  if(y+tip.offsetHeight>innerHeight-4)y=e.clientY-tip.offsetHeight-10;
  tip.style.left=Math.max(4,x)+'px';tip.style.top=y+'px';});
document.addEventListener('mouseleave',hide);
})();
(function(){
var table=document.getElementById('findings');
if(!table)return;
var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
var sev=document.getElementById('f-sev'),code=document.getElementById('f-code'),
    file=document.getElementById('f-file'),shown=document.getElementById('f-shown');
function apply(){var s=sev.value,c=code.value,f=file.value.toLowerCase(),k=0;
  rows.forEach(function(r){var ok=(!s||r.dataset.severity===s)&&(!c||r.dataset.code===c)&&
    (!f||r.dataset.file.toLowerCase().indexOf(f)>=0);r.hidden=!ok;if(ok)k++;});
  var all=+table.dataset.total,n=function(v){return v.toLocaleString('en-US');};
  shown.textContent=n(k)+' of '+n(rows.length)+' rows shown'+(all>rows.length?
    ' (the page lists '+n(rows.length)+' of '+n(all)+' findings)':'');}
[sev,code,file].forEach(function(el){el.addEventListener('input',apply);
  el.addEventListener('change',apply);});
apply();
document.querySelectorAll('.codes .chip').forEach(function(b){
  b.addEventListener('click',function(){code.value=code.value===b.dataset.code?'':
    b.dataset.code;apply();});});
Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
  th.addEventListener('click',function(){var asc=th.dataset.sort!=='asc';
    Array.prototype.forEach.call(table.tHead.rows[0].cells,function(o){delete o.dataset.sort});
    th.dataset.sort=asc?'asc':'desc';var num=th.classList.contains('num');
    rows.sort(function(a,b){var x=a.cells[i].textContent,y=b.cells[i].textContent;
      var d=num?(Number(x)||-1)-(Number(y)||-1):x.localeCompare(y);return asc?d:-d;});
    rows.forEach(function(r){body.appendChild(r)});});});
})();
"""

#: Nothing may be fetched, whatever the page holds.
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "img-src data:")


def page(title: str, subtitle: str, sections: Sequence[str]) -> str:
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            "<meta name=\"generator\" content=\"kmeta\">"
            "<link rel=\"icon\" href=\"data:,\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{escape(title)}</h1><p class=\"sub\">{escape(subtitle)}</p>"
            + _DEFS + "".join(sections) + f"<script>{SCRIPT}</script></body></html>")


#: Shared by every picture of the page: the stripes that mark what repair would cut.
_DEFS = ('<svg width="0" height="0" style="position:absolute" aria-hidden="true">'
         '<defs><pattern id="cut-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
         'patternTransform="rotate(45)"><rect width="1.5" height="6" fill="#c62828" fill-opacity=".6"/>'
         '</pattern></defs></svg>')
