#include "reports/html_page.h"

#include "reports/text.h"

namespace faultline::report::internal {
namespace {

constexpr std::string_view kStyle = R"CSS(
:root { --pass:#2e7d4f; --pass-bg:#e6f4ea; --fail:#c62828; --fail-bg:#fdecea;
        --error:#9a5b00; --error-bg:#fff3dc; --na:#6b7280; --line:#d9dde3; --muted:#5f6670; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1d232b; background: #f5f6f8; }
.page { max-width: 1320px; margin: 0 auto; padding: 20px 24px 60px; }
h1 { font-size: 22px; margin: 0 0 10px; }
h2 { font-size: 17px; margin: 28px 0 10px; }
h3 { font-size: 14px; margin: 18px 0 6px; color: var(--muted); text-transform: uppercase;
     letter-spacing: .04em; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
                   font-size: 12.5px; }
header.run { background: #fff; border: 1px solid var(--line); border-radius: 8px;
             padding: 16px 20px; border-top: 6px solid var(--pass); }
header.run.fail { border-top-color: var(--fail); }
header.run.error { border-top-color: var(--error); }
.counts { display: flex; gap: 10px; margin: 4px 0 12px; flex-wrap: wrap; }
.count { padding: 4px 12px; border-radius: 999px; font-weight: 600; font-size: 15px; }
.count.pass { background: var(--pass-bg); color: var(--pass); }
.count.fail { background: var(--fail-bg); color: var(--fail); }
.count.error { background: var(--error-bg); color: var(--error); }
.count.advisory { background: #fff4e0; color: #8a5300; }
.count.zero { background: #eef0f3; color: var(--muted); font-weight: 500; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.filters { margin: 18px 0 10px; display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
input.filter { position: absolute; opacity: 0; pointer-events: none; }
.filters label, .filters button { border: 1px solid var(--line); background: #fff; border-radius: 6px;
       padding: 4px 12px; cursor: pointer; font: inherit; }
.filters input[type=search] { margin-left: auto; padding: 5px 10px; border: 1px solid var(--line);
       border-radius: 6px; font: inherit; min-width: 260px; }
#show-all:checked ~ .filters label[for=show-all], #show-fail:checked ~ .filters label[for=show-fail],
#show-error:checked ~ .filters label[for=show-error],
#show-pass:checked ~ .filters label[for=show-pass],
#show-advisory:checked ~ .filters label[for=show-advisory] { background: #1d232b; color: #fff;
       border-color: #1d232b; }
#show-fail:checked ~ main .scenario:not(.fail), #show-error:checked ~ main .scenario:not(.error),
#show-pass:checked ~ main .scenario:not(.pass),
#show-advisory:checked ~ main .scenario:not(.has-advisory), .scenario.hidden-by-name { display: none; }
.filters label[for=show-advisory] { border-color: #e8b96a; color: #8a5300; }
a.count { text-decoration: none; }
a.count.advisory:hover { text-decoration: underline; }
details.scenario { background: #fff; border: 1px solid var(--line); border-left: 5px solid var(--pass);
       border-radius: 6px; margin: 6px 0; }
details.scenario.fail { border-left-color: var(--fail); }
details.scenario.error { border-left-color: var(--error); }
details.scenario > summary { cursor: pointer; padding: 8px 12px; display: flex; gap: 10px;
       align-items: baseline; list-style-position: outside; }
details.scenario > summary::-webkit-details-marker { color: var(--muted); }
summary .name { font-weight: 600; overflow-wrap: anywhere; }
summary .where { color: var(--muted); font-size: 12.5px; }
summary .ids { color: var(--fail); font-family: ui-monospace, monospace; font-size: 12.5px; }
summary .ids.advisory { color: #8a5300; }
summary .facts { margin-left: auto; color: var(--muted); font-size: 12.5px; white-space: nowrap; }
.badge { display: inline-block; min-width: 44px; text-align: center; border-radius: 4px;
         padding: 0 6px; font-size: 12px; font-weight: 700; text-transform: uppercase; }
.badge.pass { background: var(--pass-bg); color: var(--pass); }
.badge.fail { background: var(--fail-bg); color: var(--fail); }
.badge.advisory { background: #fff4e0; color: #8a5300; }
.badge.error { background: var(--error-bg); color: var(--error); }
.badge.na { background: #eef0f3; color: var(--na); }
.scenario .body { padding: 0 16px 14px; border-top: 1px solid var(--line); }
.description { margin: 10px 0 4px; }
.facts-line { color: var(--muted); font-size: 12.5px; margin: 0; overflow-wrap: anywhere; }
.note { background: #eef3fb; border-left: 3px solid #1f6feb; padding: 6px 10px; margin: 10px 0; }
pre.error-text { background: var(--error-bg); color: #5a3500; padding: 8px 10px; border-radius: 4px;
       white-space: pre-wrap; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid var(--line); }
th { font-size: 12px; color: var(--muted); font-weight: 600; background: #fafbfc; }
td.num, th.num { text-align: right; white-space: nowrap; }
table.checks td:first-child { white-space: nowrap; font-family: ui-monospace, monospace; font-size: 12.5px; }
table.checks tr.fail td { background: #fff7f6; }
table.checks tr.na td { color: var(--na); }
pre.evidence { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 16em;
       overflow: auto; }
dl.metrics { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 8px;
       margin: 0; }
dl.metrics div { background: #f7f8fa; border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; }
dl.metrics dt { font-size: 12px; color: var(--muted); }
dl.metrics dd { margin: 0; font-size: 16px; font-weight: 600; }
svg.timeline { width: 100%; height: auto; display: block; background: #fff; }
.source { font: 11px ui-monospace, monospace; color: var(--muted); margin-top: 2px; }
svg.timeline text { font: 11px system-ui, sans-serif; fill: #1d232b; }
svg.timeline .tick { text-anchor: middle; fill: var(--muted); font-size: 10.5px; }
svg.timeline .grid { stroke: #eceef1; }
svg.timeline .axis { stroke: #9aa1ab; }
svg.timeline .lane-name { font-weight: 600; font-size: 12px; }
svg.timeline .lane-end { font-size: 10.5px; }
svg.timeline .bar { fill-opacity: .16; stroke-width: 1.2; }
svg.timeline .bar.open { stroke-dasharray: 4 3; }
svg.timeline .bytes { fill: none; stroke-width: 1.6; }
svg.timeline .bytes-label { font-size: 10px; fill: var(--muted); }
svg.timeline .stall { opacity: .7; }
svg.timeline .stall-label { text-anchor: middle; font-size: 10.5px; font-weight: 600; fill: #6b4500; }
svg.timeline .stall-label-bg { fill: #fff; stroke: #f0a000; stroke-width: .8; }
svg.timeline .hello { fill: #8a919b; }
svg.timeline .client-bg { fill: #f7f8fa; }
svg.timeline .chunks { stroke: #8a919b; stroke-width: 1; }
svg.timeline .cross { stroke-width: 2.4; fill: none; }
svg.timeline .bracket { fill: none; stroke-width: 1.6; }
svg.timeline .bracket.moot { stroke-dasharray: 2 3; opacity: .55; }
svg.timeline .drift { stroke: #8a919b; stroke-dasharray: 3 3; fill: none; }
svg.timeline .note { font-size: 10.5px; fill: #8a4b00; paint-order: stroke; stroke: #f7f8fa;
       stroke-width: 3px; stroke-linejoin: round; }
svg.timeline .marker-label { font-size: 10.5px; font-weight: 600; paint-order: stroke;
       stroke: #f7f8fa; stroke-width: 3px; stroke-linejoin: round; }
svg.timeline .terminal-line { stroke-dasharray: 2 3; stroke-width: 1; opacity: .7; }
svg.timeline .cancel { stroke: #222; stroke-dasharray: 6 3; stroke-width: 1.4; }
svg.timeline .band { fill-opacity: .13; stroke-opacity: .55; stroke-width: .8; stroke-dasharray: 3 2; }
svg.timeline .floor { stroke-width: 2; }
svg.timeline .mark { stroke: #1d232b; stroke-width: 1.6; }
svg.timeline .mark.out { stroke: #c62828; stroke-width: 3; }
svg.timeline .bound-label { font-size: 10px; font-weight: 600; }
svg.timeline .bound-label.out { fill: #c62828; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
svg.timeline .bound-label.end { text-anchor: end; }
svg.timeline .deadline { stroke-dasharray: 8 3; stroke-width: 1.4; }
svg.timeline .call-attempt { font-size: 9.5px; fill: #1d232b; }
svg.timeline .cross.small { stroke-width: 1.8; }
.timeline-box { border: 1px solid var(--line); border-radius: 6px; padding: 6px; background: #fff; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; color: var(--muted);
       margin: 6px 2px 0; }
.legend-title { font-weight: 600; color: #1d232b; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 4px;
       vertical-align: -2px; opacity: .8; }
.swatch.hatch { background: repeating-linear-gradient(45deg, #f0a000 0 3px, #fff8e1 3px 6px); }
.swatch.band { background: var(--c); opacity: .45; outline: 1px dashed var(--c); }
.swatch.line { width: 0; border-left: 2px dashed var(--c); border-radius: 0; opacity: 1; }
details.more { margin-top: 10px; }
details.more > summary { cursor: pointer; color: var(--muted); }
table.events td { font-size: 12.5px; }
table.events td.detail { font-family: ui-monospace, monospace; font-size: 12px; overflow-wrap: anywhere; }
pre.stderr { background: #1d232b; color: #e6e6e6; padding: 8px 10px; border-radius: 4px;
       white-space: pre-wrap; overflow-wrap: anywhere; max-height: 24em; overflow: auto; }
table.matrix td.cell { font-family: ui-monospace, monospace; font-size: 12.5px; }
table.matrix td.pass { background: var(--pass-bg); color: var(--pass); }
table.matrix td.fail { background: var(--fail-bg); color: var(--fail); }
table.matrix td.error { background: var(--error-bg); color: var(--error); }
table.matrix td.none { color: var(--na); }
footer { margin-top: 30px; color: var(--muted); font-size: 12px; }
section.overview table.failures td.id { font-family: ui-monospace, monospace; font-size: 12.5px;
       white-space: nowrap; color: var(--fail); }
section.overview code.reproduce { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; }
table.failures tr.scenario-row td, table.failures tr.check-row td { background: #f3f4f6;
       border-top: 2px solid var(--line); }
table.failures tr.scenario-row a { font-weight: 600; }
table.failures tr.scenario-row .where, table.failures tr.check-row .where { color: var(--muted);
       font-size: 12.5px; margin-left: 6px; }
table.failures tr.scenario-row .source { font: 11px ui-monospace, monospace; color: var(--muted);
       margin-left: 6px; }
table.failures div.reproduce { font-size: 12px; color: var(--muted); margin-top: 2px; }
table.failures td.runs { white-space: nowrap; font-size: 12.5px; }
table.failures td.runs ul { margin: 4px 0 0; padding-left: 16px; }
table.failures details.runs > summary { cursor: pointer; }
table.failures pre.evidence { max-height: 6.5em; }
table.advisory-list .id { font-family: ui-monospace, monospace; font-weight: 700; color: #8a5300; }
section.advisories h2 { color: #8a5300; }
section.overview p.all-passed { background: var(--pass-bg); color: var(--pass); font-weight: 600;
       padding: 8px 12px; border-radius: 6px; }
table.reps td { font-size: 12.5px; }
table.reps td.ids { color: var(--fail); font-family: ui-monospace, monospace; }
)CSS";

// Progressive enhancement: a name filter and expand/collapse-all buttons; and the on-demand
// rendering of a run report's collapsed sections (their <template> body, the table of their other
// runs from the embedded `faultline-runs` data) when opened, or when a link's anchor is inside.
constexpr std::string_view kScript = R"JS(
(function () {
  var byGroup = null;
  function rowsOf(group) {
    if (byGroup === null) {
      byGroup = {};
      var el = document.getElementById('faultline-runs');
      (el ? JSON.parse(el.textContent) : []).forEach(function (r) {
        (byGroup[r[0]] = byGroup[r[0]] || []).push(r);
      });
    }
    return byGroup[group] || [];
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c];
    });
  }
  function ms(v) {
    if (v === null) return '–';
    return v < 1000 ? v.toFixed(v < 10 ? 1 : 0) + ' ms' : (v / 1000).toFixed(2) + ' s';
  }
  // A section's rows: the first FIRST_ROWS at once (a table of 10,000 rows takes seconds to lay
  // out), the rest when asked for or when an anchor points into them.
  var FIRST_ROWS = 200;
  function row(r) {
    return '<tr id="' + esc(r[1]) + '"><td><a href="#' + esc(r[1]) + '">' + r[2] +
      '</a></td><td class="mono">' + r[3] + '</td><td class="num">' + ms(r[4]) +
      '</td><td class="num">' + ms(r[5]) + '</td><td class="num">' + r[6] +
      '</td><td class="ids">' + esc(r[7]) + '</td><td class="mono">' + esc(r[8]) + '</td></tr>';
  }
  function fill(d, all) {
    var body = d.querySelector(':scope > .body > table.reps > tbody');
    if (!body) return;
    var rows = rowsOf(d.dataset.group);
    var shown = all ? rows : rows.slice(0, FIRST_ROWS);
    body.innerHTML = shown.map(row).join('') + (shown.length < rows.length
      ? '<tr class="more-rows"><td colspan="7"><button type="button">Show all ' + rows.length +
        ' runs</button></td></tr>' : '');
    var more = body.querySelector('tr.more-rows button');
    if (more) more.addEventListener('click', function () { fill(d, true); });
  }
  function render(d) {
    if (d.dataset.rendered) return;
    d.dataset.rendered = '1';
    var t = d.querySelector(':scope > .body > template');
    if (t) t.replaceWith(t.content);
    fill(d, false);
  }
  document.addEventListener('toggle', function (e) {
    var d = e.target;
    if (d.open && d.classList && d.classList.contains('group')) render(d);
  }, true);
  document.querySelectorAll('details.group[open]').forEach(render);
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var el = document.getElementById(id);
    var group = el ? el.closest('details.group') : document.getElementById(id.replace(/-\d+$/, ''));
    if (group && group.classList.contains('group')) { group.open = true; render(group); }
    el = document.getElementById(id);
    if (!el && group && group.classList.contains('group')) {
      fill(group, true);
      el = document.getElementById(id);
    }
    if (el) el.scrollIntoView();
  }
  window.addEventListener('hashchange', reveal);
  reveal();
})();
(function () {
  var box = document.getElementById('name-filter');
  if (!box) return;
  box.hidden = false;
  box.addEventListener('input', function () {
    var q = box.value.trim().toLowerCase();
    document.querySelectorAll('.scenario').forEach(function (s) {
      s.classList.toggle('hidden-by-name', q !== '' && s.dataset.name.indexOf(q) < 0);
    });
  });
  function all(open) {
    document.querySelectorAll('details.scenario').forEach(function (d) { d.open = open; });
  }
  var expand = document.getElementById('expand-all');
  var collapse = document.getElementById('collapse-all');
  expand.hidden = false; collapse.hidden = false;
  expand.addEventListener('click', function () { all(true); });
  collapse.addEventListener('click', function () { all(false); });
})();
)JS";

}  // namespace

void WritePageStart(std::string_view title, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << XmlEscape(title) << "</title>\n<style>" << kStyle << "</style>\n"
      << "</head>\n<body>\n<div class=\"page\">\n";
}

void WritePageEnd(std::ostream& out) {
  out << "</div>\n<script>" << kScript << "</script>\n</body>\n</html>\n";
}

std::string_view VerdictClass(Verdict verdict) { return ToString(verdict); }

}  // namespace faultline::report::internal
