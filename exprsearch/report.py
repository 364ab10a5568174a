"""A self-contained HTML page for a law: the equation (rendered as MathML by any browser without
scripts, with its LaTeX source alongside), metrics, the Pareto front, the explanation and the figures embedded as PNG."""

from __future__ import annotations

import base64
import csv
import html
import io
import math
from collections.abc import Sequence
from pathlib import Path

from sympy.printing.mathml import mathml

from .compile import factor_symbol
from .configs import described
from .explain import Explanation
from .export import HELD_OUT_LOST, latex, rounded_constants
from .grouped import group_name
from .law import Law
from .vocabulary import ExpressionSyntaxError, parse, to_readable

# What each metric in law.json means, for people reading the report.
METRIC_LABELS = {
    "mape_pct": "mean absolute percentage error (%)",
    "cv_mape_pct": "cross-validated error (%)",
    "holdout_mape_pct": "error on the held-out largest values (%)",
    "rmse": "root-mean-square error",
    "r2": "R² (share of variance explained)",
    "extended_bic": "extended BIC (lower is better)",
    "lack_of_fit_p": "lack-of-fit test p-value (small: the law misses a trend)",
    "noise_sd_pct": "measured noise between repetitions (%)",
    "rows": "measurements",
}


def html_page(law: Law, front_csv: str, explanation: Explanation | None, figures: list[Path],
              notes: list[str] = ()) -> str:
    """The report as one HTML string."""
    # an explicit product sign: multi-letter factor names would otherwise run together
    equation = mathml(law.template.xreplace(rounded_constants(law)), printer="presentation", mul_symbol="dot")
    rows = list(csv.DictReader(io.StringIO(front_csv)))
    of = _source(law)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>exprsearch: {html.escape(law.target)}{html.escape(of and ' of ' + of)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}"
        "td.law{text-align:left;font-family:monospace}tr.chosen{background:#eef6ee}math{font-size:130%}</style>",
        "</head><body>",
        f"<h1>Law of {html.escape(law.target)}</h1>",
        *([f"<p>Fitted to {html.escape(of)}.</p>"] if of else []),
        f"<p><math display='block'><mi>{html.escape(law.target)}</mi><mo>=</mo>{equation}</math></p>",
        f"<details><summary>LaTeX</summary><pre>{html.escape(latex(law))}</pre></details>",
        f"<p>Chosen by {html.escape(law.selection)}.</p>",
        _metrics(law),
    ]
    if explanation is not None:
        parts.append("<h2>Explanation</h2><ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in explanation.sentences) + "</ul>")
    parts.append("<h2>Pareto front</h2>" + _front(rows, law))
    for note in notes:
        parts.append(f"<p><em>{html.escape(note)}</em></p>")
    parts += [_figure(path) for path in figures]
    parts.append(f"<p><small>exprsearch {html.escape(law.version)}, grammar {html.escape(str(law.grammar.get('name')))}, "
                 f"seed {law.seed}, dataset {html.escape(str(law.dataset.get('path')))}</small></p></body></html>\n")
    return "\n".join(parts)


def _figure(path: str | Path) -> str:
    """A PNG figure embedded in the page, so that the page is one file."""
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f"<figure><img alt='{html.escape(Path(path).stem)}' src='data:image/png;base64,{data}'></figure>"


def _metrics(law: Law) -> str:
    cells = "".join(f"<tr><th>{html.escape(METRIC_LABELS.get(k, k))}</th><td>{_number(k, v)}</td></tr>"
                    for k, v in law.metrics.items())
    return f"<table>{cells}</table>"


def _number(key: str, value: float | None) -> str:
    if value is None:
        return ""
    if key == "rows":
        return f"{int(value)}"
    if key == "lack_of_fit_p" and value < 0.001:
        return "&lt; 0.001"
    return f"{value:.4f}" if key == "r2" else f"{value:.3g}"


def _front(rows: list[dict], law: Law) -> str:
    head = ("<tr><th>complexity</th><th>constants</th><th>error %</th><th>cross-validated %</th>"
            "<th>held-out %</th><th>R²</th><th>law</th></tr>")
    body = "".join(
        f"<tr class='{'chosen' if r['chosen'] == 'yes' else ''}'><td>{r['complexity']}</td><td>{r['constants']}</td>"
        f"<td>{float(r['mape_pct']):.3g}</td><td>{float(r['cv_mape_pct']):.3g}</td>"
        f"<td>{_optional(r.get('holdout_mape_pct'))}</td><td>{float(r['r2']):.4f}</td>"
        f"<td class='law'>{html.escape(_readable(r['law'], law))}</td></tr>" for r in rows)
    lost = any(r.get("holdout_mape_pct") and not math.isfinite(float(r["holdout_mape_pct"])) for r in rows)
    note = f"<p>{html.escape(HELD_OUT_LOST)}.</p>" if lost else ""
    return f"<table>{head}{body}</table>{note}"


def _optional(text: str | None) -> str:
    """A held-out error as the front table shows it: blank where none was measured, a dash where
    the held-out values cannot check the law (an infinite error; :data:`HELD_OUT_LOST`)."""
    if not text:
        return ""
    return f"{float(text):.3g}" if math.isfinite(float(text)) else "—"


def _readable(text: str, law: Law, digits: int = 4) -> str:
    """A front law from front.csv (exact constants) with its constants at ``digits`` significant digits."""
    try:
        expr = parse(text, {f: factor_symbol(f) for f in law.factors})
    except ExpressionSyntaxError:
        return text
    return to_readable(expr, digits)


def profile_page(rows: list, context: dict, figures: Sequence[Path] = ()) -> str:
    """A page ranking a profile's series by predicted growth (the ``profile`` command's report):
    which call paths stop scaling first, with each one's law and dominant terms, and ``figures``
    (``profile --plot``'s growth.png, and phases.png for a table of phases) below the ranking."""
    from .profiles import ranked, ranked_by

    where = described(context.get("at", {})) or "the largest measured values"
    head = ("<tr><th>#</th><th>series</th><th>growth</th><th>predicted there</th><th>dominant term there</th>"
            "<th>dominant at the largest measured</th><th>error %</th><th>law</th></tr>")
    body = "".join(
        f"<tr><td>{i}</td><td class='law'>{html.escape(r.series)}</td><td>{'—' if r.blind else f'{r.growth:.3g}×'}</td>"
        f"<td>{r.predicted_at:.4g}</td><td class='law'>{html.escape(r.dominant_at)}</td>"
        f"<td class='law'>{html.escape(r.dominant_largest)}</td><td>{r.mape_pct:.3g}</td>"
        f"<td class='law'>{html.escape(r.law)}</td></tr>"
        for i, r in enumerate([r for r in ranked(rows) if not r.error], start=1))
    failed = "".join(f"<li>{html.escape(r.series)}: {html.escape(r.error)}</li>" for r in rows if r.error)
    return "\n".join([
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>exprsearch profile: {html.escape(str(context.get('data')))}</title>",
        "<style>body{font-family:sans-serif;max-width:80em;margin:2em auto;line-height:1.4}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}"
        "td.law{text-align:left;font-family:monospace}</style></head><body>",
        f"<h1>Which call paths stop scaling first</h1><p>{len(rows)} series of "
        f"{html.escape(str(context.get('data')))}, grammar {html.escape(str(context.get('grammar')))}, ranked by "
        f"{html.escape(ranked_by(rows))} from the largest measured configuration to {html.escape(where)} "
        f"(factors not given there × {context.get('scale', 2):g}).</p>",
        f"<table>{head}{body}</table>",
        *(_figure(f) for f in figures),
        "<p>—: the law leaves out a factor the data vary, with too few configurations for a law that holds it (the "
        "series' notes in laws.csv say which).</p>" if any(r.blind for r in rows if not r.error) else "",
        f"<h2>Series not modelled</h2><ul>{failed}</ul>" if failed else "",
        "</body></html>\n",
    ])


def _source(law: Law) -> str:
    """Which measurements the law was fitted to, as law.json records them: the file, and its series,
    sheet or --by group (model=AlexNet), so that a page among several says which it is."""
    data = law.dataset or {}
    path = data.get("path")
    within = [data["series"]] if data.get("series") else []
    within += [f"sheet {data['sheet']}"] if data.get("sheet") else []
    within += [group_name(data["group"].items())] if data.get("group") else []
    if not path:
        return ", ".join(within)
    return f"{Path(path).name}" + (f" ({', '.join(within)})" if within else "")
