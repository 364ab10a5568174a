"""PNG figures of a law (matplotlib is optional: ``pip install 'exprsearch[plot]'``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import sympy

from .compile import factor_symbol
from .configs import setting
from .data import Dataset
from .errors import ExprsearchError
from .explain import Explanation, explain
from .law import Law


class PlotError(ExprsearchError, ImportError):
    """Plots were asked for but matplotlib is not installed."""


def require_matplotlib():
    """matplotlib's pyplot on the Agg backend, or a PlotError saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise PlotError("plots need matplotlib: pip install 'exprsearch[plot]' (or pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def default_view(law: Law, data: Dataset | None = None,
                 factor: str | None = None) -> tuple[str, np.ndarray, dict[str, float]]:
    """A factor the law trades off (one term falls with it, another grows), else the one with the
    widest measured range (or ``factor``, where given); from its smallest value to 8× its largest.
    The other factors are held at a measured combination (the one measured along most values of
    the factor, nearest the middle of their ranges) so that the curve passes through real
    measurements; without data, at the geometric middle of their measured ranges."""
    used = [f for f in law.factors if law.uses(f)] or list(law.factors)

    def spread(f: str) -> float:
        low, high = law.domain.get(f, [1.0, 1.0])
        return high / low if low > 0 else high - low

    def trades_off(f: str) -> bool:
        x = factor_symbol(f)
        signs = {sympy.sign(sympy.diff(t, x)) for _, t in law.terms() if t.has(x)}
        return bool({-1, 1} <= {int(s) for s in signs if s.is_number})

    factor = factor or max(used, key=lambda f: (trades_off(f), spread(f)))
    low, high = law.domain.get(factor, [1.0, 1.0])
    values = np.geomspace(low, 8 * high, 60) if low > 0 else np.linspace(low, 8 * high, 60)
    middle = {}
    for f in law.factors:
        if f != factor:
            lo, hi = law.domain.get(f, [1.0, 1.0])
            middle[f] = float(np.sqrt(lo * hi)) if lo > 0 else (lo + hi) / 2
    if data is None or not middle or not set(middle) <= set(data.factors):
        return factor, values, middle
    return factor, values, _measured_level(data, factor, middle)


def _measured_level(data: Dataset, factor: str, middle: dict[str, float]) -> dict[str, float]:
    """The measured combination of the other factors with the most distinct values of ``factor``,
    ties to the one nearest ``middle`` (in log scale where the values are positive)."""
    others = list(middle)
    table = np.column_stack([data.column(f) for f in others])
    along_factor = data.column(factor)
    best, best_key = None, None
    for level in np.unique(table, axis=0):
        rows = np.all(table == level, axis=1)
        distance = sum(abs(np.log(v / middle[f])) if v > 0 and middle[f] > 0 else abs(v - middle[f])
                       for f, v in zip(others, level))
        key = (-len(np.unique(along_factor[rows])), distance)
        if best_key is None or key < best_key:
            best, best_key = level, key
    return {f: float(v) for f, v in zip(others, best)}


def matching_rows(data: Dataset, fixed: dict[str, float]) -> np.ndarray:
    """The rows measured at the ``fixed`` values of the other factors (a boolean mask)."""
    mask = np.ones(data.n_rows, dtype=bool)
    for f, v in fixed.items():
        if f in data.factors:
            mask &= np.isclose(data.column(f), v, rtol=1e-9, atol=0)
    return mask


def _measured(data: Dataset) -> str:
    """What a point of ``data`` is: a measurement, or a run of a per-step log (its steps' median,
    or its last step where the target is a clock)."""
    if not data.steps:
        return "measurements"
    return "runs (each at its last step)" if data.clock else "runs (each the median of its steps)"


def measured_vs_predicted(law: Law, data: Dataset, path: Path) -> Path:
    plt = require_matplotlib()
    predicted = law.predict({f: data.column(f) for f in law.factors})
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.scatter(data.y, predicted, s=14, alpha=0.7, label=_measured(data))
    low, high = min(data.y.min(), predicted.min()), max(data.y.max(), predicted.max())
    ax.plot([low, high], [low, high], "k--", lw=1, label="predicted = measured")
    ax.set(xscale="log", yscale="log", xlabel=f"measured {law.target}", ylabel=f"predicted {law.target}",
           title="Measured vs predicted")
    ax.legend()
    return _save(fig, path)


def along(law: Law, e: Explanation, path: Path, data: Dataset | None = None) -> Path:
    """The law along one factor: measured range marked, extrapolation shaded, ±CV error band."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    x, y = e.values, e.total
    ax.plot(x, y, lw=2, label=f"law ({law.target})")
    if law.bootstrap:
        columns = {e.factor: x, **{k: np.full_like(x, v) for k, v in e.fixed.items()}}
        low, high = law.predict_interval(columns)
        widened = law.octave_error > 0 and bool((law.octaves_outside(columns) > 0).any())
        ax.fill_between(x, low, high, alpha=0.2, label=f"95 % prediction interval ({len(law.bootstrap)} bootstrap fits"
                        + (f";\nwidened {100 * law.octave_error:.2g} % (1 sd) per doubling beyond the data)" if widened else ")"))
    else:
        band = (law.metrics.get("cv_mape_pct") or 0) / 100
        ax.fill_between(x, y * (1 - band), y * (1 + band), alpha=0.2, label=f"± cross-validated error ({100 * band:.2g} %)")
    low, high = law.domain.get(e.factor, [x.min(), x.max()])
    ax.axvspan(high, x.max(), color="grey", alpha=0.15, label="extrapolation")
    ax.axvline(low, color="grey", lw=0.8)
    ax.axvline(high, color="grey", lw=0.8)
    if data is not None and e.factor in data.factors:
        rows = matching_rows(data, e.fixed)
        if rows.any():  # only the measurements the curve is drawn for
            where = f" at {_levels(e.fixed)}" if e.fixed else ""
            ax.scatter(data.column(e.factor)[rows], data.y[rows], s=12, color="k", alpha=0.6,
                       label=f"{_measured(data)}{where} ({int(rows.sum())})", zorder=3)
    if e.limit is not None and e.limit.value > x.min():
        ax.axvline(e.limit.value, color="red", ls=":", label=f"limit {e.factor} ≈ {e.limit.value:.3g}")
    fixed = _levels(e.fixed)
    ax.set(xscale="log" if x.min() > 0 else "linear", yscale="log" if (y > 0).all() else "linear",
           xlabel=e.factor, ylabel=law.target,
           title=f"{law.target} along {e.factor}" + (f" ({fixed})" if fixed else ""))
    ax.legend(fontsize=8)
    return _save(fig, path)


def breakdown(law: Law, e: Explanation, path: Path) -> Path:
    """Each term's contribution along the factor, stacked."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    labels = [f"{label}: {term}" for label, term in zip(e.labels, e.terms)]
    ax.stackplot(e.values, np.clip(e.contributions, 0, None), labels=labels, alpha=0.8)
    fixed = _levels(e.fixed)
    ax.set(xscale="log" if e.values.min() > 0 else "linear", xlabel=e.factor, ylabel=law.target,
           title=("Where the rate comes from" if law.rate else "Where the time goes") + (f" ({fixed})" if fixed else ""))
    ax.legend(fontsize=8, loc="upper left")
    return _save(fig, path)


def front(rows: list[dict], path: Path) -> Path:
    """Error against complexity for the laws on the Pareto front, the chosen one marked."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    cx = [float(r["complexity"]) for r in rows]
    err = [float(r["mape_pct"]) for r in rows]
    ax.step(cx, err, where="post", color="grey", lw=1)
    ax.scatter(cx, err, zorder=3, label="Pareto front")
    chosen = [i for i, r in enumerate(rows) if r.get("chosen") == "yes"]
    if chosen:
        ax.scatter([cx[chosen[0]]], [err[chosen[0]]], s=120, facecolors="none", edgecolors="red", lw=2,
                   label="chosen law", zorder=4)
    ax.set(yscale="log", xlabel="complexity", ylabel="MAPE %", title="Error vs complexity")
    ax.legend()
    return _save(fig, path)


def pareto_set(choices: list, best, target: str, path: Path, budget: float | None = None) -> Path:
    """Time against cost for the configurations no other one beats on both, the choice marked,
    the time budget drawn (``optimize --plot``)."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    times, costs = [c.time for c in choices], [c.cost for c in choices]
    ax.plot(costs, times, "o-", color="tab:blue", label="Pareto set (time vs cost)")
    for c in choices:
        ax.annotate(", ".join(f"{k}={setting(v)}" for k, v in c.config.items()), (c.cost, c.time), fontsize=7,
                    textcoords="offset points", xytext=(4, 4))
    ax.scatter([best.cost], [best.time], s=140, facecolors="none", edgecolors="red", lw=2, label="choice", zorder=4)
    if budget is not None:
        ax.axhline(budget, color="grey", ls=":", label=f"budget {budget:g}")
    ax.set(xlabel="cost", ylabel=target, title="Time against cost")
    ax.legend(fontsize=8)
    return _save(fig, path)


def segments_along(pieces, path: Path, data: Dataset | None = None, fixed: dict[str, float] | None = None) -> Path:
    """A series' segments (:class:`exprsearch.segmented.Segmented`) along their factor: each law solid over
    its side of the change and dashed across the other, where it does not hold, the change marked,
    beside the measurements; the other factors at ``fixed``, else as :func:`default_view` holds them."""
    plt = require_matplotlib()
    factor, edges, names = pieces.factor, pieces.edges, pieces.names
    fixed = {**default_view(pieces.laws[-1], data, factor)[2], **(fixed or {})}
    fixed.pop(factor, None)
    low, high = pieces.domain.get(factor, [1.0, 1.0])
    x = np.geomspace(low, 4 * high, 200) if low > 0 else np.linspace(low, 4 * high, 200)
    columns = {factor: x, **{k: np.full_like(x, v) for k, v in fixed.items()}}
    fig, ax = plt.subplots(figsize=(7, 4.5))
    which = pieces.which(x)
    held = []  # what each law gives where it holds: the axis is drawn for these and the measurements
    for k, (law, name) in enumerate(zip(pieces.laws, names)):
        with np.errstate(all="ignore"):
            y = law.predict(columns)
        held.append(y[which == k])
        line, = ax.plot(x[which == k], y[which == k], lw=2, label=f"law of {name}")
        ax.plot(x, np.where((which != k) & (y > 0), y, np.nan), ls="--", lw=1, color=line.get_color(), alpha=0.6)
    for edge in edges:
        ax.axvline(edge, color="red", ls=":", label=f"change of regime, {factor} ≈ {edge:.4g}")
    ax.axvspan(high, x.max(), color="grey", alpha=0.15, label="extrapolation")
    if data is not None and factor in data.factors:
        rows = matching_rows(data, fixed)
        if rows.any():
            where = f" at {_levels(fixed)}" if fixed else ""
            ax.scatter(data.column(factor)[rows], data.y[rows], s=12, color="k", alpha=0.6,
                       label=f"{_measured(data)}{where} ({int(rows.sum())})", zorder=3)
    shown = np.concatenate([*held, data.y if data is not None else []])
    shown = shown[np.isfinite(shown) & (shown > 0)]
    if shown.size:
        ax.set_ylim(shown.min() / 2, shown.max() * 2)  # a law dashed where it does not hold may dive or soar
    ax.set(xscale="log" if x.min() > 0 else "linear", yscale="log", xlabel=factor, ylabel=pieces.target,
           title=f"{pieces.target} along {factor}, a law on each side of the change"
           + (f" ({_levels(fixed)})" if fixed else ""))
    ax.legend(fontsize=8)
    return _save(fig, path)


def profile_growth(factor: str, x: np.ndarray, curves: list[tuple[str, np.ndarray]], measured: float,
                   path: Path, rate: bool = False, total: int = 0, others: bool = False) -> Path:
    """The growth of a profile's series along one factor, each relative to its law at its largest
    measured values: where the series part, and which overtakes which beyond the measurements
    (``others``: some laws follow other factors too, held at their largest measured values)."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, y in curves:
        shown = name if len(name) <= 48 else name[:22] + "…" + name[-25:]  # a series' last part tells it apart
        ax.plot(x, y, lw=1.8, label=f"{shown} ({y[-1]:.3g}×)")
    if measured < x.max():
        ax.axvspan(measured, x.max(), color="grey", alpha=0.15, label="beyond the measurements")
    ax.axhline(1.0, color="grey", lw=0.8)
    positive = all((y > 0).all() for _, y in curves)
    ax.set(xscale="log" if x.min() > 0 else "linear", yscale="log" if positive else "linear",
           xlabel=factor + (" (the other factors at their largest measured values)" if others else ""),
           ylabel="growth (× the law at the largest measured values)",
           title=(f"The {len(curves)} of {total} series ranked first" if total > len(curves) else "The series")
           + f", along {factor}" + (" (rates: higher is better)" if rate else ""))
    ax.legend(fontsize=7, loc="upper left")
    return _save(fig, path)


def profile_phases(factor: str, x: np.ndarray, curves: list[tuple[str, np.ndarray]], measured: float, path: Path,
                   target: str, others: bool = False) -> Path:
    """The laws of a table's phases (fwd_s, bwd_s, comm_s) stacked along one factor: where a run's
    time goes as it grows, and which phase takes over beyond the measurements."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.stackplot(x, *[np.clip(y, 0, None) for _, y in curves], labels=[name for name, _ in curves], alpha=0.8)
    if measured < x.max():
        ax.axvspan(measured, x.max(), color="grey", alpha=0.15, label="beyond the measurements")
    ax.set(xscale="log" if x.min() > 0 else "linear", ylabel=target,
           xlabel=factor + (" (the other factors at their largest measured values)" if others else ""),
           title=f"Where the time goes along {factor}: the phases' laws stacked")
    ax.legend(fontsize=8, loc="upper left")
    return _save(fig, path)


def all_figures(law: Law, directory: Path, data: Dataset | None = None, front_rows: list[dict] | None = None,
                view: tuple[str, np.ndarray, dict[str, float]] | None = None) -> list[Path]:
    """Every figure that the inputs allow, written into ``directory``."""
    require_matplotlib()
    directory.mkdir(parents=True, exist_ok=True)
    factor, values, fixed = view or default_view(law, data)
    e = explain(law, factor, values, fixed)
    paths = [along(law, e, directory / "law_along.png", data), breakdown(law, e, directory / "breakdown.png")]
    if data is not None:
        paths.insert(0, measured_vs_predicted(law, data, directory / "measured_vs_predicted.png"))
    if front_rows:
        paths.append(front(front_rows, directory / "front.png"))
    return paths


def _levels(fixed: dict[str, float]) -> str:
    return ", ".join(f"{k} = {v:.4g}" for k, v in fixed.items())


def _plain_log_ticks(fig) -> None:
    """Log axes labelled 2, 3, 50 rather than 2×10⁰, 3×10⁰, 5×10¹ (which overlap on a narrow
    range); every minor tick labelled within a decade, those at 2 and 5 within two, none beyond."""
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}")
    for ax in fig.axes:
        for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            if axis.get_scale() != "log" or min(limits) <= 0:
                continue
            axis.set_major_formatter(plain)
            decades = np.log10(max(limits) / min(limits))
            shown = "23456789" if decades < 1 else "25" if decades < 2 else ""
            axis.set_minor_formatter(FuncFormatter(lambda v, _, shown=shown: f"{v:g}" if f"{v:.0e}"[0] in shown else ""))


def _save(fig, path: Path) -> Path:
    import io

    from .export import write_all

    _plain_log_ticks(fig)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, dpi=110, format="png")
    write_all({Path(path): png.getvalue()})  # whole or not at all
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
