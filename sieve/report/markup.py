"""The HTML of the report: escaping at every sink, the page around a body, its style and its one script.

Every page carries its style and its sorting script inline, each allowed by its hash in a strict
Content-Security-Policy `<meta>`: nothing else may load or run, so a page works the same from
`file://` (where 'self' matches nothing reliably) and from a static host.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Iterable, Sequence
from typing import Any

from sieve.safe_text import visible

# The TUI's highlight colours (sieve/tui/app.py HIGHLIGHT_VARIABLES and THEME_VARIABLES), copied: the report
# never imports the app. Light values for a white page; the dark ones under prefers-color-scheme.
LIGHT = {
    "score": "#a9cdf0",
    "counter": "#e6b8ea",
    "probe": "#9fded2",
    "deduction": "#f5c59a",
    "judgment": "#c5e09a",
    "note": "#b4b4b4",
    "exact": "#116329",
    "fuzzy": "#7a4d00",
    "absent": "#a40e26",
    "player": "#7a2fa0",
    "total": "#084f8c",
}
DARK = {
    "score": "#1f4e79",
    "counter": "#6b2d6b",
    "probe": "#1d5e57",
    "deduction": "#7a3b12",
    "judgment": "#3d5a1a",
    "note": "#4a4a4a",
    "exact": "#5fd75f",
    "fuzzy": "#d7af00",
    "absent": "#ff5f5f",
    "player": "#d787d7",
    "total": "#5fafd7",
}
HIGHLIGHT_KINDS = ("score", "counter", "probe", "deduction", "judgment", "note", "excerpt")
VERDICTS = ("exact", "fuzzy", "absent", "player")


def _variables(colours: dict[str, str]) -> str:
    return " ".join(f"--{name}: {value};" for name, value in colours.items())


CSS = (
    ":root { color-scheme: light dark; " + _variables(LIGHT) + " --fg: #1a1a1a; --bg: #ffffff; --line: #d0d0d0; }\n"
    "@media (prefers-color-scheme: dark) { :root { "
    + _variables(DARK)
    + " --fg: #e8e8e8; --bg: #161616; --line: #444; } }\n"
    + """
body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0 auto;
  max-width: 72rem; padding: 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; } h3 { font-size: 1.05rem; }
nav { display: flex; flex-wrap: wrap; gap: 0.2rem 1rem; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border: 1px solid var(--line); padding: 0.2rem 0.45rem; text-align: left; vertical-align: top; }
th { background: color-mix(in srgb, var(--fg) 8%, var(--bg)); }
th.sortable { cursor: pointer; } th[aria-sort="ascending"]::after { content: " ▲"; }
th[aria-sort="descending"]::after { content: " ▼"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.sortable-table td, .sortable-table th { white-space: nowrap; }
tfoot td { font-weight: bold; }
.table-first { position: sticky; left: 0; background: var(--bg); }
.turn { border-left: 4px solid var(--line); margin: 1rem 0; padding: 0 0.8rem; }
.turn.user { border-left-color: var(--total); }
.turn.explored { border-left-style: dashed; }
.turn header { font-size: 0.85rem; opacity: 0.85; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
mark { color: inherit; border-radius: 2px; }
mark.k-score { background: var(--score); } mark.k-counter { background: var(--counter); }
mark.k-probe { background: var(--probe); } mark.k-deduction { background: var(--deduction); }
mark.k-judgment { background: var(--judgment); } mark.k-note { background: var(--note); }
mark.k-excerpt { background: transparent; border-bottom: 3px double var(--total); }
figure.excerpt { border-left: 4px solid var(--total); margin: 1rem 0; padding: 0 0.8rem; }
figure.excerpt blockquote { margin: 0.3rem 0; } ul.summaries li, ul.excerpt-list li { margin: 0.3rem 0; }
mark.v-fuzzy { text-decoration: underline; } mark.v-absent { text-decoration: line-through; }
mark.v-player { font-style: italic; }
mark mark { font-weight: bold; }
mark:target { outline: 3px solid var(--total); outline-offset: 2px; scroll-margin-top: 30vh; }
.legend mark { padding: 0 0.3rem; margin-right: 0.4rem; }
.verdict-exact { color: var(--exact); } .verdict-fuzzy { color: var(--fuzzy); }
.verdict-absent { color: var(--absent); } .verdict-player { color: var(--player); }
.quote { font-style: italic; }
.muted { opacity: 0.75; font-size: 0.85rem; }
details.alt { margin: 0.4rem 0; } dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 0 1rem; }
dl.meta dt { font-weight: bold; }
svg text { fill: var(--fg); font-size: 11px; }
figure { margin: 1rem 0; max-width: 100%; overflow-x: auto; }
svg { max-width: 100%; height: auto; }
p, dd, h1, h2, h3, summary { overflow-wrap: anywhere; }
"""
)

# Sorting a table by a header: the only script, allowed by its hash. No inline handlers anywhere.
SCRIPT = r"""
document.querySelectorAll("table.sortable-table").forEach(function (table) {
  var body = table.tBodies[0];
  table.querySelectorAll("th.sortable").forEach(function (th, column) {
    th.tabIndex = 0;
    function sort() {
      var down = th.getAttribute("aria-sort") === "ascending";
      table.querySelectorAll("th.sortable").forEach(function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[column];
        var v = cell ? (cell.getAttribute("data-sort") || cell.textContent) : "";
        var found = /^\s*(-?\d+(?:\.\d+)?)(?![\w.])/.exec(v);  // a total's first number: "21+3 / 24+4"
        return found ? [0, parseFloat(found[1])] : [1, v.trim().toLowerCase()];
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var order = x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0);
        return down ? -order : order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (event) { if (event.key === "Enter") { sort(); } });
  });
});
"""


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


CSP = (
    f"default-src 'none'; style-src {_hash(CSS)}; script-src {_hash(SCRIPT)}; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)


def esc(value: Any) -> str:
    """Outside text for HTML text or a quoted attribute: control and bidi characters made visible, then escaped."""
    if value is None:
        return ""
    return html.escape(visible(str(value)), quote=True)


_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def slug(value: str) -> str:
    """A name fit for a file or an anchor made from an id: the id itself when it is plain, else its hash."""
    if _SAFE_ID.fullmatch(value):
        return value
    return "h" + hashlib.sha256(value.encode()).hexdigest()[:16]


def page(title: str, body: str, nav: Sequence[tuple[str, str]] = ()) -> str:
    """A whole document: `title` is outside text (escaped here), `body` is HTML built by this package;
    `nav` links are (href made by the report, label)."""
    links = "".join(f'<a href="{esc(href)}">{esc(label)}</a>' for href, label in nav)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + (f"<nav>{links}</nav>\n" if links else "")
        + body
        + f"\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )


def cell(value: Any, *, number: bool = False, html_value: str | None = None, first: bool = False) -> str:
    """A table cell: outside text escaped, or HTML this package built (`html_value`); numbers sort as numbers."""
    classes = [c for c, on in (("num", number), ("table-first", first)) if on]
    cls = f' class="{" ".join(classes)}"' if classes else ""
    shown = html_value if html_value is not None else esc("" if value is None else value)
    sort = f' data-sort="{esc(value)}"' if number and value is not None else ""
    return f"<td{cls}{sort}>{shown}</td>"


def table(headers: Sequence[str], rows: Iterable[str], *, sortable: bool = True, foot: str = "") -> str:
    """A table of rows already made of `cell`s; `headers` are escaped here."""

    def head(n: int, h: str) -> str:
        classes = (["sortable"] if sortable else []) + (["table-first"] if n == 0 else [])
        return f'<th scope="col" class="{" ".join(classes)}">{esc(h)}</th>'

    th = "".join(head(n, h) for n, h in enumerate(headers))
    cls = ' class="sortable-table"' if sortable else ""
    body = "".join(f"<tr>{r}</tr>" for r in rows)
    tfoot = f"<tfoot>{foot}</tfoot>" if foot else ""
    return f'<div class="scroll"><table{cls}><thead><tr>{th}</tr></thead><tbody>{body}</tbody>{tfoot}</table></div>'
