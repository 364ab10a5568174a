"""A self-contained HTML page for a law: the equation (rendered as MathML by any browser without
scripts, with its LaTeX source alongside), metrics, the Pareto front, the explanation and the figures embedded as PNG."""

from __future__ import annotations

import base64
import csv
import html
import io
from pathlib import Path

from sympy.printing.mathml import mathml

from .explain import Explanation
from .export import latex
from .law import Law


def html_page(law: Law, front_csv: str, explanation: Explanation | None, figures: list[Path],
              notes: list[str] = ()) -> str:
    """The report as one HTML string."""
    equation = mathml(law.template.xreplace(_rounded(law)), printer="presentation")
    rows = list(csv.DictReader(io.StringIO(front_csv)))
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>exprsearch: {html.escape(law.target)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}"
        "td.law{text-align:left;font-family:monospace}tr.chosen{background:#eef6ee}math{font-size:130%}</style>",
        "</head><body>",
        f"<h1>Law of {html.escape(law.target)}</h1>",
        f"<p><math display='block'><mi>{html.escape(law.target)}</mi><mo>=</mo>{equation}</math></p>",
        f"<details><summary>LaTeX</summary><pre>{html.escape(latex(law))}</pre></details>",
        f"<p>Chosen by {html.escape(law.selection)}.</p>",
        _metrics(law),
    ]
    if explanation is not None:
        parts.append("<h2>Explanation</h2><ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in explanation.sentences) + "</ul>")
    parts.append("<h2>Pareto front</h2>" + _front(rows))
    for note in notes:
        parts.append(f"<p><em>{html.escape(note)}</em></p>")
    for path in figures:
        data = base64.b64encode(Path(path).read_bytes()).decode()
        parts.append(f"<figure><img alt='{html.escape(Path(path).stem)}' src='data:image/png;base64,{data}'></figure>")
    parts.append(f"<p><small>exprsearch {html.escape(law.version)}, grammar {html.escape(str(law.grammar.get('name')))}, "
                 f"seed {law.seed}, dataset {html.escape(str(law.dataset.get('path')))}</small></p></body></html>\n")
    return "\n".join(parts)


def _rounded(law: Law) -> dict:
    import sympy

    return {sympy.Symbol(k, real=True): sympy.Float(v, 4) for k, v in law.constants.items()}


def _metrics(law: Law) -> str:
    cells = "".join(f"<tr><th>{html.escape(k)}</th><td>{'' if v is None else f'{v:.4g}'}</td></tr>"
                    for k, v in law.metrics.items())
    return f"<table>{cells}</table>"


def _front(rows: list[dict]) -> str:
    head = "<tr><th>complexity</th><th>constants</th><th>MAPE %</th><th>CV MAPE %</th><th>R²</th><th>law</th></tr>"
    body = "".join(
        f"<tr class='{'chosen' if r['chosen'] == 'yes' else ''}'><td>{r['complexity']}</td><td>{r['constants']}</td>"
        f"<td>{float(r['mape_pct']):.3g}</td><td>{float(r['cv_mape_pct']):.3g}</td><td>{float(r['r2']):.4f}</td>"
        f"<td class='law'>{html.escape(r['law'])}</td></tr>" for r in rows)
    return f"<table>{head}{body}</table>"
