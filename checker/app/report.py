"""Reports of ``flcheck check``: terminal table and a Markdown or HTML report with pictures.

Generic renderer: it reads a ``CheckReport`` of :mod:`checker.app.check` duck-typed (``results`` with
``name, kind, verdict, value_text, evidence``; ``kripke``; ``to_json()``; ``artefacts`` with attack
trees and privacy distributions; ``scenario`` with locations, links and placements) and never imports
flmodel. Pictures (matplotlib, Agg backend): the location graph (networkx spring layout, seeded) with
the actors at their locations, each attack tree (a top-down layered drawing), and for each privacy
property the two output distributions with the per-outcome log-ratio against ±ε. HTML embeds the
images as base64; Markdown writes them beside the ``.md`` file, under names taken from their content, as
one unit with the report (an interrupted write leaves the old report and pictures, or the new ones).
Every text that comes from the input is escaped for the format (Markdown: :func:`md_text`,
:func:`md_code`, :func:`md_block`; HTML: ``html.escape``).
"""

from __future__ import annotations

import base64
import glob
import hashlib
import html
import io
import math
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from checker.attack_trees.export import display_children, node_label
from checker.io.files import write_unit
from checker.render import value_text
from checker.terminal import TerminalText, terminal_text

__all__ = ["figure_png", "md_block", "md_code", "md_text", "render_table", "write_report"]


def _cell(text: str, width: int | None) -> str:
    text = text.replace("\n", " ")
    return text if width is None or len(text) <= width else text[: width - 1] + "…"


def trace_lines(trace: dict[str, Any] | None) -> list[str]:
    """A witness or counterexample (the JSON of :meth:`checker.mc.evidence.Trace.to_json`) as lines:
    the first state with its values, then each step ``--action--> state: changed values``, the nested
    parts (``then``) and the loop back of a lasso."""
    if not trace:
        return []
    nested = {t["step"]: t["shows"] for t in trace.get("then", [])}
    lines = [f"{trace['kind']} of {trace['shows']}:"]
    for i, step in enumerate(trace["steps"]):
        vals = ", ".join(f"{k}={_json_text(v)}" for k, v in step["changed"].items())
        head = step["name"] if i == 0 else f"--{step['action']}--> {step['name']}"
        lines.append(f"{head}: {vals}" if vals else head)
        if i in nested:
            lines.append(f"  ({step['name']} satisfies {nested[i]}; the next steps show it)")
    if trace.get("loop_start") is not None:
        lines.append(f"--{trace['loop_action']}--> back to {trace['steps'][trace['loop_start']]['name']} "
                     "(the cycle repeats forever)")
    return lines


def _json_text(value: Any) -> str:
    """A JSON value of a trace as the terminal prints model values: lists in braces without quotes,
    ``true``/``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "{" + ", ".join(_json_text(v) for v in value) + "}"
    return str(value)


def statement_text(report: Any, result: Any) -> str:
    """What a property claims, for the reports' formula column: a CTL property's formula (as parsed),
    any other kind's statement as declared (``privacy epsilon <= ln(6) between hot``, ``probability
    uniform == 33/50 reach round = 1``, ``attack_tree exists seen_sat3``), else the result's formula."""
    if result.kind != "ctl":
        for p in getattr(report.scenario, "properties", ()):
            if p.name == result.name:
                text: str = p.text()
                return text.split(": ", 1)[1].rstrip(";")
    return str(result.formula or "")


def _violations(report: Any) -> list[tuple[str, str, list[str]]]:
    """(property, formula, counterexample lines) of every violated property that has a path."""
    out = []
    for r in report.results:
        trace = r.details.get("trace")
        if str(r.verdict) == "violated" and trace and trace.get("kind") == "counterexample":
            out.append((r.name, r.formula, trace_lines(trace)))
    return out


def render_table(report: Any, *, evidence_width: int | None = 90, colour: bool = False) -> str:
    """The terminal table: property, kind, verdict, figure, evidence; with a header line (scenario,
    structure size, time) and a summary line. ``evidence_width``: where the evidence is cut (``None``:
    never, ``--wide``); ``colour``: ANSI colours for a terminal (:func:`checker.tables.table_text`'s
    ``colour``, verdicts green/red/yellow)."""
    k = report.kripke
    head = (f"{report.scenario.name}\n{report.scenario_path}: {k.num_states} states, {k.num_transitions} "
            f"transitions" + ("" if k.complete else f" (INCOMPLETE: {k.limit_reason})")
            + f"; explored in {report.explore_seconds:.2f} s, checked in {report.total_seconds:.2f} s")
    rows = [("property", "kind", "verdict", "figure", "evidence")]
    for r in report.results:
        rows.append((r.name, r.kind, str(r.verdict), _cell(r.value_text, 28),
                     _cell(r.evidence, evidence_width)))
    from checker.tables import table_text  # lazy: the one table renderer (rich only on a terminal)

    lines = [terminal_text(head), "", table_text(rows, rule=True, colour=colour)]
    counts: dict[str, int] = {}
    for r in report.results:
        counts[str(r.verdict)] = counts.get(str(r.verdict), 0) + 1
    lines.append("")
    lines.append(", ".join(f"{n} {v}" for v, n in counts.items()) or "no properties")
    text = "\n".join(lines)  # the header escaped here, the cells by the table
    return TerminalText(text) if colour else text


# ------------------------------------------------------------------------------------------ pictures
def figure_png(draw: Callable[[Any], None], size: tuple[float, float]) -> bytes:
    import matplotlib  # lazy: matplotlib is slow to import and only needed for --report

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt  # lazy: after selecting the Agg backend

    fig = plt.figure(figsize=size)
    try:
        draw(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        return buf.getvalue()
    finally:
        plt.close(fig)


def location_graph_png(scenario: Any) -> bytes:
    """The location graph ``gra`` with the actors placed at their locations (``aloc``)."""
    import networkx as nx  # lazy: only the location picture of --report needs it

    g = nx.DiGraph()
    for n in scenario.locations:
        g.add_node(n.name)
    for lk in scenario.links:
        g.add_edge(lk.a, lk.b)
        if not lk.directed:
            g.add_edge(lk.b, lk.a)
    at: dict[str, list[str]] = {}
    placed = ([scenario.server] if scenario.server else []) + list(scenario.clients) + list(scenario.actors)
    for p in placed:
        at.setdefault(p.location, []).append(p.actor)
    att = scenario.attacker
    if att is not None and att.location is not None and all(p.actor != att.name for p in placed):
        at.setdefault(att.location, []).append(att.name)
    pos = nx.spring_layout(g, seed=7) if len(g) > 1 else {n: (0.0, 0.0) for n in g}
    server_loc = scenario.server.location if scenario.server else None

    def draw(fig: Any) -> None:
        ax = fig.add_subplot(111)
        colours = ["#f4a261" if n == server_loc else "#8ecae6" for n in g.nodes]
        nx.draw_networkx_edges(g, pos, ax=ax, arrows=any(lk.directed for lk in scenario.links),
                               edge_color="#555")
        nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colours, node_size=1400)
        labels = {n: n + ("\n" + ", ".join(at[n]) if n in at else "") for n in g.nodes}
        nx.draw_networkx_labels(g, pos, labels=labels, ax=ax, font_size=8)
        ax.set_title("locations (gra) and actors (aloc)")
        ax.axis("off")

    return figure_png(draw, (6.5, 4.5))


def attack_tree_png(tree: Any, kripke: Any, goal_text: str) -> bytes:
    """A layered top-down drawing of an IIIf attack tree (shared sub-attacks drawn once per use;
    at most 60 nodes are drawn)."""
    nodes: list[tuple[int, int, str, str]] = []  # (id, depth, kind, label)
    edges: list[tuple[int, int]] = []

    def walk(node: Any, depth: int, is_root: bool) -> int:
        nid = len(nodes)
        kids = display_children(node, True)
        label = node_label(node, kripke, goal_text=goal_text, n_children=len(kids), is_root=is_root)
        nodes.append((nid, depth, node.kind, label))
        for c in kids:
            if len(nodes) >= 60:
                break
            cid = walk(c, depth + 1, False)
            edges.append((nid, cid))
        return nid

    walk(tree, 0, True)
    by_depth: dict[int, list[int]] = {}
    for nid, depth, _, _ in nodes:
        by_depth.setdefault(depth, []).append(nid)
    xy: dict[int, tuple[float, float]] = {}
    for depth, ids in by_depth.items():
        for i, nid in enumerate(ids):
            xy[nid] = ((i + 1) / (len(ids) + 1), -depth)
    width = max(6.0, 3.2 * max(len(v) for v in by_depth.values()))
    height = max(2.5, 1.3 * len(by_depth))

    def draw(fig: Any) -> None:
        ax = fig.add_subplot(111)
        for a, b in edges:
            ax.plot([xy[a][0], xy[b][0]], [xy[a][1], xy[b][1]], color="#777", zorder=1)
        colour = {"and": "#ffd166", "or": "#90be6d", "base": "#e0e0e0"}
        for nid, _, kind, label in nodes:
            text = "\n".join(_wrap(label, 28)[:4])
            ax.text(xy[nid][0], xy[nid][1], f"[{kind}]\n{text}", ha="center", va="center", fontsize=7,
                    bbox={"boxstyle": "round", "fc": colour.get(kind, "#e0e0e0"), "ec": "#444"}, zorder=2)
        ax.set_xlim(0, 1)
        ax.set_ylim(-max(by_depth) - 0.6, 0.6)
        ax.set_title(f"attack tree for goal: {goal_text}", fontsize=9)
        ax.axis("off")

    return figure_png(draw, (width, height))


def _wrap(text: str, width: int) -> list[str]:
    words = text.split()
    lines: list[str] = []
    cur = ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    if cur:
        lines.append(cur)
    return lines or [""]


def outcome_text_short(outcome: Any, limit: int = 18) -> str:
    """An outcome as a tick label: its text (:func:`checker.render.value_text`), cut at ``limit``."""
    text = value_text(outcome)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def privacy_png(d0: dict[Any, Any], d1: dict[Any, Any], eps: Any, title: str) -> bytes:
    """The two output distributions (D0, D1) and the log-ratio ``ln P0(o)/P1(o)`` per outcome against
    the stated ``±ε``."""
    def log_ratio(o: Any) -> float:
        a, b = float(d0.get(o, 0)), float(d1.get(o, 0))
        return math.log(a / b) if a > 0 and b > 0 else (math.inf if a > 0 else -math.inf)

    outcomes = sorted(set(d0) | set(d1), key=lambda o: (log_ratio(o), str(o)))
    if len(outcomes) > 80:  # keep the outcomes with the most extreme ratios
        outcomes = outcomes[:40] + outcomes[-40:]
    p0 = [float(d0.get(o, 0)) for o in outcomes]
    p1 = [float(d1.get(o, 0)) for o in outcomes]
    lr = [math.log(a / b) if a > 0 and b > 0 else (math.inf if a > 0 else -math.inf)
          for a, b in zip(p0, p1, strict=True)]
    e = float(eps)
    labels = [_wrap(outcome_text_short(o), 18)[0] for o in outcomes]

    def draw(fig: Any) -> None:
        ax1 = fig.add_subplot(211)
        xs = range(len(outcomes))
        ax1.bar([x - 0.2 for x in xs], p0, width=0.4, label="D0 (dataset)")
        ax1.bar([x + 0.2 for x in xs], p1, width=0.4, label="D1 (neighbour)")
        ax1.set_ylabel("probability")
        ax1.set_title(title, fontsize=9)
        ax1.legend(fontsize=7)
        ax1.set_xticks(list(xs))
        ax1.set_xticklabels(labels, rotation=90, fontsize=6)
        ax1.set_xlabel("outcome (what the attacker observes)", fontsize=8)
        ax2 = fig.add_subplot(212)
        finite = [v if math.isfinite(v) else (e * 1.5 if v > 0 else -e * 1.5) for v in lr]
        ax2.bar(list(xs), finite, color=["#d62828" if abs(v) > e + 1e-12 else "#457b9d" for v in lr])
        ax2.axhline(e, color="k", ls="--", lw=0.8)
        ax2.axhline(-e, color="k", ls="--", lw=0.8)
        for x, v, shown in zip(xs, lr, finite, strict=True):
            if not math.isfinite(v):  # an outcome only one dataset produces: the ratio is infinite
                ax2.annotate("+∞" if v > 0 else "−∞", (x, shown), ha="center", fontsize=7,
                             va="bottom" if v > 0 else "top")
        ax2.set_ylabel("ln P0/P1")
        ax2.set_xlabel(f"outcomes ({len(outcomes)} shown), sorted by ln P0/P1; dashed: ±ε = ±{e:.4g}; "
                       "bars marked ±∞: outcomes of one dataset only (drawn at ±1.5 ε)", fontsize=8)
        ax2.set_xticks(list(xs))
        ax2.set_xticklabels(labels, rotation=90, fontsize=6)
        fig.tight_layout()

    return figure_png(draw, (7.5, 6.5))


def _pictures(report: Any) -> list[tuple[str, str, bytes]]:
    """(file stem, caption, PNG) for every picture of the report."""
    out: list[tuple[str, str, bytes]] = [
        ("locations", "Location graph and actors", location_graph_png(report.scenario))]
    for name, (tree, goal) in report.artefacts.get("attack_trees", {}).items():
        out.append((f"attack_tree_{name}", f"Attack tree of property {name}",
                    attack_tree_png(tree, report.kripke, goal)))
    for name, item in report.artefacts.get("privacy", {}).items():
        if not item:
            continue
        d0, d1, names, eps, _res = item
        caption = f"Output distributions of property {name} (observing {', '.join(names)})"
        out.append((f"privacy_{name}", caption,
                    privacy_png(d0, d1, eps, f"{name}: NI-FL-DP at ε = {eps.text()}")))
    account = report.artefacts.get("accounting")  # checker.app.privacy_account: the run's ε vs rounds
    if account is not None:
        out.append(("privacy_run", "ε of the run against the rounds", account.plot_png()))
    return out


def md_text(text: object) -> str:
    """Text from the input as inline CommonMark that renders as that text: one line, its control
    characters shown as escapes (:func:`checker.terminal.terminal_text`), and every character that could
    open markup (emphasis, links, images, raw HTML, entities, table cells, code) escaped with a
    backslash, so a title ``<script>...`` is shown, never run.

    >>> print(md_text("<b>*x*</b> | [y](z) a_b _c_"))
    \\<b\\>\\*x\\*\\</b\\> \\| \\[y\\](z) a_b \\_c\\_
    """
    one_line = terminal_text(" ".join(str(text).splitlines()))
    # "_" between two letters or digits can neither open nor close emphasis: left as it is (snake_case)
    return re.sub(r"([\\`*\[\]<>&|!~#]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))", r"\\\1", one_line)


def md_code(text: object, *, in_table: bool = False) -> str:
    """Text from the input as a CommonMark code span (shown literally: no markup, no HTML), delimited by
    one backtick more than its longest run of backticks; ``in_table``: ``|`` escaped for a table cell."""
    one_line = terminal_text(" ".join(str(text).splitlines()))
    fence = "`" * (max((len(r) for r in re.findall(r"`+", one_line)), default=0) + 1)
    pad = " " if one_line.startswith(("`", " ")) or one_line.endswith(("`", " ")) else ""
    span = f"{fence}{pad}{one_line}{pad}{fence}"
    return span.replace("|", "\\|") if in_table else span


def md_block(lines: Iterable[str]) -> list[str]:
    """Lines from the input as a fenced CommonMark code block (shown literally), fenced by more backticks
    than any run in them."""
    body = [terminal_text(str(line)) for line in lines]
    longest = max((len(r) for line in body for r in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *body, fence]


#: A picture file of a Markdown report: ``<report stem>_<picture>.<first 12 hex digits of its SHA-256>.png``.
_PICTURE_NAME = r"{stem}_[A-Za-z0-9_-]+\.[0-9a-f]{{12}}\.png"


def _picture_file(report: Path, picture: str, png: bytes) -> Path:
    """Where a picture of a Markdown report goes: beside the report, named after its content, so that the
    new report's pictures never replace the old report's (the old report stays whole until the new one
    replaces it)."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", picture)
    return report.with_name(f"{report.stem}_{safe}.{hashlib.sha256(png).hexdigest()[:12]}.png")


def write_report(report: Any, path: str | Path, *, inputs: Iterable[str | Path] = ()) -> list[Path]:
    """Write the Markdown (``.md``) or HTML (``.html``/``.htm``) report; returns the files written.

    Markdown pictures go beside the report as ``<stem>_<picture>.<hash>.png``, named after their content
    and written with the report as one unit (:func:`checker.io.files.write_unit`): the pictures first,
    under their new names, then the report over the old one (the commit point), then the old report's
    pictures are removed. An interrupted write leaves the old report with its own pictures, or the new
    one with its own. Every text that comes from the input (title, names, formulas, evidence, the
    scenario) is escaped (:func:`md_text`, :func:`md_code`, :func:`md_block`; HTML: ``html.escape``). No
    file is written over one of ``inputs`` (the command's input files):
    :class:`checker.errors.InputError` instead."""
    inputs = list(inputs)
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".md", ".html", ".htm"):
        raise ValueError(f"report file must end in .md or .html, got {p.name!r}")
    pics = _pictures(report)
    k = report.kripke
    summary = (f"{k.num_states} states, {k.num_transitions} transitions"
               + ("" if k.complete else f" (incomplete: {k.limit_reason})")
               + f"; explored in {report.explore_seconds:.2f} s, total {report.total_seconds:.2f} s")
    sysdesc = report.to_json().get("system", {})
    if suffix == ".md":
        lines = [f"# flcheck report: {md_text(report.scenario.name)}", "",
                 f"Scenario file: {md_code(report.scenario_path)}",
                 "", md_text(summary), "", "## System", ""]
        lines += [f"- {md_text(k_)}: {md_text(v)}" for k_, v in sysdesc.items()]
        lines += ["", "## Properties", "", "| property | kind | formula | verdict | figure | evidence |",
                  "|---|---|---|---|---|---|"]
        for r in report.results:
            said = statement_text(report, r)
            formula = md_code(said, in_table=True) if said else ""
            lines.append(f"| {md_text(r.name)} | {md_text(r.kind)} | {formula} | **{md_text(r.verdict)}** | "
                         f"{md_text(r.value_text)} | {md_text(r.evidence)} |")
        if report.artefacts.get("accounting") is not None:
            lines += ["", report.artefacts["accounting"].section(html_output=False)]
        violations = _violations(report)
        if violations:
            lines += ["", "## Counterexamples", ""]
            for name, formula, steps in violations:
                lines += [f"### {md_text(name)}: {md_code(formula)}", "", *md_block(steps), ""]
        lines += ["", "## Pictures", ""]
        files: dict[Path, bytes] = {}
        for stem, caption, png in pics:
            picture = _picture_file(p, stem, png)
            files[picture] = png
            lines += [f"### {md_text(caption)}", "", f"![{md_text(caption)}](<{picture.name}>)", ""]
        lines += ["## Scenario", "", *md_block(report.scenario.to_text().rstrip().splitlines()), ""]
        files[p] = "\n".join(lines).encode("utf-8")  # last: the commit point of the set
        pattern = re.compile(_PICTURE_NAME.format(stem=re.escape(p.stem)))
        stale = [q for q in p.parent.glob(f"{glob.escape(p.stem)}_*.png")
                 if pattern.fullmatch(q.name) and q not in files] if p.parent.is_dir() else []
        written = write_unit(files, inputs=inputs, remove=stale)
        return [written[-1], *written[:-1]]

    def esc(text: str) -> str:
        return html.escape(terminal_text(text))

    rows = "".join(
        f"<tr class='{esc(str(r.verdict)).replace(' ', '-')}'><td>{esc(r.name)}</td>"
        f"<td>{esc(r.kind)}</td><td><code>{esc(statement_text(report, r))}</code></td>"
        f"<td><b>{esc(str(r.verdict))}</b></td><td>{esc(r.value_text)}</td><td>{esc(r.evidence)}</td></tr>"
        for r in report.results)
    cex = "".join(f"<h3>{esc(name)}: <code>{esc(formula)}</code></h3>"
                  f"<pre>{esc(chr(10).join(lines))}</pre>"
                  for name, formula, lines in _violations(report))
    if cex:
        cex = "<h2>Counterexamples</h2>" + cex
    if report.artefacts.get("accounting") is not None:
        cex = report.artefacts["accounting"].section(html_output=True) + cex
    imgs = "".join(
        f"<h3>{esc(c)}</h3><img alt='{esc(c)}' src='data:image/png;base64,"
        f"{base64.b64encode(png).decode('ascii')}'/>" for _, c, png in pics)
    sysrows = "".join(f"<li>{esc(str(k_))}: {esc(str(v))}</li>" for k_, v in sysdesc.items())
    doc = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>flcheck report: {esc(report.scenario.name)}</title><style>"
        "body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px;vertical-align:top;font-size:13px}"
        ".holds td:nth-child(4){color:#2a7}.violated td:nth-child(4){color:#c22}"
        ".unknown td:nth-child(4){color:#b80}img{max-width:100%}</style></head><body>"
        f"<h1>flcheck report: {esc(report.scenario.name)}</h1><p>Scenario file: <code>"
        f"{esc(str(report.scenario_path))}</code></p><p>{esc(summary)}</p><h2>System</h2><ul>{sysrows}</ul>"
        "<h2>Properties</h2><table><tr><th>property</th><th>kind</th><th>formula</th><th>verdict</th>"
        f"<th>figure</th><th>evidence</th></tr>{rows}</table>{cex}<h2>Pictures</h2>{imgs}"
        f"<h2>Scenario</h2><pre>{esc(report.scenario.to_text())}</pre></body></html>")
    return write_unit({p: doc.encode("utf-8")}, inputs=inputs)
