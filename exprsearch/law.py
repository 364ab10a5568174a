"""The chosen law: a fitted expression of named factors that predicts the target and
round-trips through JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import NormalDist

import numpy as np
import sympy

from .compile import factor_symbol, to_function
from .errors import LawError, did_you_mean, missing_file
from .roles import reads_as_rate
from .vocabulary import ExpressionSyntaxError, parse, to_text


@dataclass(frozen=True)
class Law:
    """``target = template(factors; constants)``, with the figures that justified it."""

    target: str
    factors: tuple[str, ...]
    template: sympy.Expr
    constants: dict[str, float]
    complexity: int
    metrics: dict[str, float | None] = field(default_factory=dict)
    domain: dict[str, list[float]] = field(default_factory=dict)
    grammar: dict[str, str | None] = field(default_factory=dict)
    dataset: dict[str, str | list[str] | None] = field(default_factory=dict)  # path, sha256, notes
    selection: str = ""
    seed: int = 0
    version: str = ""
    labels: tuple[str, ...] = ()
    intervals: dict[str, list[float]] = field(default_factory=dict)
    bootstrap: tuple[tuple[float, ...], ...] = ()  # refitted constants, in the order of ``constants``
    residual_sd: float = 0.0  # relative spread of the measurements around the law
    search: dict = field(default_factory=dict)  # the space, what was fitted, what was not searched
    target_kind: str = ""  # "time" or "rate" where said; "" reads it from the target's name

    @property
    def rate(self) -> bool:
        """Whether the target is a rate (a throughput: higher is better) rather than a time."""
        return self.target_kind == "rate" or (not self.target_kind and reads_as_rate(self.target))

    @property
    def held(self) -> dict[str, float]:
        """Factors every measurement held at one value, which the law leaves out, with that value."""
        return dict(self.dataset.get("held", {}))

    def plausible(self) -> list[Law]:
        """The laws the data could not tell from this one (``search.plausible``), as laws."""
        return [self._plausible_law(text) for text in self.search.get("plausible", [])]

    def _plausible_law(self, text: str) -> Law:
        symbols = {f: factor_symbol(f) for f in self.factors}
        return Law(self.target, self.factors, parse(text, symbols), {}, 0, target_kind=self.target_kind)

    def plausible_predictions(self, data: Mapping[str, object]) -> np.ndarray:
        """What the plausible laws that ``data`` gives every factor of predict there: ``(laws, rows)``
        (a law that uses a factor this one leaves out, and ``data`` lacks, cannot be evaluated)."""
        others = [o for o in self.plausible() if all(f in data for f in o.factors if o.uses(f))]
        if not others:
            return np.empty((0, 0))
        with np.errstate(all="ignore"):
            return np.array([np.atleast_1d(o.predict(data)) for o in others])

    def uses(self, factor: str) -> bool:
        """Whether the law's form holds ``factor`` (a factor of the data it may leave out)."""
        return factor_symbol(factor) in self.template.free_symbols

    def durations(self, predicted: np.ndarray, work: float | None = None) -> np.ndarray | None:
        """The time runs take, from the law's ``predicted`` target: for a time, the target itself,
        or ``work`` times it (a time per step or per sample, for runs of ``work`` steps); for a
        rate, ``work`` / the rate (None without ``work``: a rate alone gives no duration)."""
        if not self.rate:
            return predicted if work is None else work * predicted
        return None if work is None else work / predicted

    def predict_interval(self, data: Mapping[str, object], level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Prediction interval: the bootstrap spread of the law, widened by its residual spread
        and, beyond the measured range, by the error its form made on its own top octave when
        refitted without it (:attr:`octave_error`), per doubling. All three are relative
        (the fit's errors are), so they combine as factors of the prediction: a time or rate whose
        spread is wide gets a bound near zero, never one below it."""
        center = self.predict(data)
        curves = self.bootstrap_curves(data)
        tail = 100 * (1 - level) / 2
        low, high = np.percentile(curves, [tail, 100 - tail], axis=0)
        z = NormalDist().inv_cdf(1 - (1 - level) / 2)
        noise = self._noise_width(level, z)
        beyond = z * self.octave_error * self.octaves_outside(data)
        with np.errstate(divide="ignore", invalid="ignore"):
            below = np.sqrt(np.log(np.clip(low / center, 1e-300, 1)) ** 2 + noise**2 + beyond**2)
            above = np.sqrt(np.log(np.clip(high / center, 1, None)) ** 2 + noise**2 + beyond**2)
        return center * np.exp(-below), center * np.exp(above)

    def _noise_width(self, level: float, z: float) -> float:
        """The residual spread's half-width at ``level``: a law of k constants on n rows keeps
        n − k of their residuals' degrees of freedom, so its spread is √(n/(n − k)) times theirs
        and its quantile Student's t, not the normal's: three points and two constants tell the
        noise from one residual (a law.json without its row count: the normal, uncorrected)."""
        rows = self.metrics.get("rows")
        free = int(rows) - len(self.constants) if isinstance(rows, (int, float)) else 0
        if free < 1:
            return z * self.residual_sd
        from scipy.special import stdtrit  # imported where it runs: most commands never need it

        return float(stdtrit(free, 1 - (1 - level) / 2)) * self.residual_sd * math.sqrt(rows / free)

    @property
    def octave_error(self) -> float:
        """The relative error (a standard deviation) the law's form makes per doubling beyond its
        measurements: its error on each factor's top octave when fitted without it (the
        extrapolation check, ``holdout_mape_pct``; a mean absolute error, turned into a standard
        deviation as for normal errors), less the measurements' own spread, which the interval
        holds already; 0 where no factor had three values to check."""
        held = self.metrics.get("holdout_mape_pct")
        if held is None or not math.isfinite(held):
            return 0.0
        return math.sqrt(max(0.0, (held / 100) ** 2 * math.pi / 2 - self.residual_sd**2))

    def octaves_outside(self, data: Mapping[str, object]) -> np.ndarray:
        """How many doublings (or halvings) each configuration of ``data`` lies beyond the measured
        range, over the factors the law uses: the root of the sum of their squares, as each factor's
        shape errs on its own (0 inside the range, and at values of 0 or below)."""
        # one per configuration, as predict gives them, whatever factors the law uses
        total = np.zeros(np.broadcast_shapes(*(c.shape for c in self._columns(data))))
        for name, (low, high) in self.domain.items():
            if name not in data or not self.uses(name):
                continue
            values = np.asarray(data[name], dtype=float)
            with np.errstate(divide="ignore", invalid="ignore"):
                up = np.log2(values / high) if high > 0 else np.zeros_like(values)
                down = np.log2(low / values) if low > 0 else np.zeros_like(values)
            total = total + np.where(values > 0, np.maximum(0.0, np.maximum(up, down)), 0.0) ** 2
        return np.sqrt(total)

    def loose(self) -> dict[str, tuple[str, ...]]:
        """The constants whose 95 % interval is wider than their value, each with the factors of
        the terms it belongs to (none for the part of the target no factor changes)."""
        terms = sympy.Add.make_args(self.template)
        loose = {}
        for name, (low, high) in self.intervals.items():
            if high - low > abs(self.constants[name]):
                symbols = set().union(*(t.free_symbols for t in terms if sympy.Symbol(name, real=True) in t.free_symbols))
                loose[name] = tuple(f for f in self.factors if factor_symbol(f) in symbols)
        return loose

    def bootstrap_curves(self, data: Mapping[str, object]) -> np.ndarray:
        """The law refitted on each bootstrap resample, evaluated at ``data``: ``(resamples, n)``."""
        if not self.bootstrap:
            raise LawError("this law has no bootstrap samples; fit it with bootstrap resamples > 0")
        params = [sympy.Symbol(n, real=True) for n in self.constants]
        samples = np.array(self.bootstrap, dtype=float)
        columns = self._columns(data)
        shape = np.broadcast_shapes(*(c.shape for c in columns))
        curves = to_function(self.template, self.factors, params)(columns, [samples[:, i, None] for i in range(len(params))])
        return np.broadcast_to(curves, (len(samples), *shape)).astype(float)

    def terms(self) -> list[tuple[str, sympy.Expr]]:
        """The law's additive terms with constants inlined, each with the rule it came from."""
        terms = [inlined(t, self.constants) for t in sympy.Add.make_args(self.template)]
        labels = self.labels if len(self.labels) == len(terms) else ("term",) * len(terms)
        return list(zip(labels, terms))

    @property
    def expression(self) -> sympy.Expr:
        """The law with its constants inlined as numbers."""
        return inlined(self.template, self.constants)

    def predict(self, data: Mapping[str, object]) -> np.ndarray:
        """Predicted target for columns ``data[factor]`` (a DataFrame or a dict of arrays); a
        factor of the data the law does not use may be left out."""
        columns = self._columns(data)
        shape = np.broadcast_shapes(*(c.shape for c in columns))
        values = to_function(self.expression, self.factors)(columns)
        return np.broadcast_to(values, shape).astype(float)

    def _columns(self, data: Mapping[str, object]) -> list[np.ndarray]:
        """``data``'s column of each factor, as numbers; one the law does not use, where missing,
        is any number (the law does not change with it)."""
        used = [f for f in self.factors if self.uses(f)]
        missing = [f for f in used if f not in data]
        if missing:
            raise LawError(
                f"the law needs factor '{missing[0]}'{did_you_mean(missing[0], [str(k) for k in data])}; "
                f"it uses {', '.join(used)}"
            )
        return [np.asarray(data[f], dtype=float) if f in data else np.ones(()) for f in self.factors]

    def to_dict(self) -> dict:
        """Plain data for JSON: the expression and template as text sympy can parse back."""
        record = asdict(self)
        record["expression"] = to_text(self.expression)
        record["template"] = to_text(self.template)
        record["factors"] = list(self.factors)
        # strict JSON has no infinity: a held-out check the law failed (docs/method.md) is null
        record["metrics"] = {k: None if isinstance(v, float) and not math.isfinite(v) else v
                             for k, v in self.metrics.items()}
        record["terms"] = [{"rule": label, "template": to_text(term)} for label, term in
                           zip(self.labels, sympy.Add.make_args(self.template))]
        record["bootstrap"] = {"resamples": len(self.bootstrap), "residual_sd": self.residual_sd,
                               "samples": [list(b) for b in self.bootstrap]}
        order = ["expression", "template", "constants", "intervals", "target", "target_kind", "factors", "terms",
                 "metrics", "complexity", "domain", "selection", "search", "grammar", "dataset", "seed", "version",
                 "bootstrap"]
        return {key: record[key] for key in order if key != "target_kind" or self.target_kind}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_dict(cls, record: Mapping) -> Law:
        try:
            factors = tuple(record["factors"])
            constants = {str(k): float(v) for k, v in record["constants"].items()}
            symbols = {f: factor_symbol(f) for f in factors}
            symbols.update({k: sympy.Symbol(k, real=True) for k in constants})
            template = parse(record["template"], symbols)
            return cls(
                target=record["target"], factors=factors, template=template,
                constants=constants, complexity=int(record["complexity"]),
                metrics=dict(record.get("metrics", {})), domain=dict(record.get("domain", {})),
                grammar=dict(record.get("grammar", {})), dataset=dict(record.get("dataset", {})),
                selection=record.get("selection", ""), seed=int(record.get("seed", 0)),
                version=record.get("version", ""),
                labels=tuple(t["rule"] for t in record.get("terms", [])),
                intervals={k: list(v) for k, v in record.get("intervals", {}).items()},
                bootstrap=tuple(tuple(float(x) for x in b) for b in record.get("bootstrap", {}).get("samples", [])),
                residual_sd=float(record.get("bootstrap", {}).get("residual_sd", 0.0)),
                search=dict(record.get("search", {})), target_kind=_kind(record.get("target_kind", "")),
            )._checked()
        except KeyError as exc:
            raise LawError(f"the law has no '{exc.args[0]}' entry; is it a law.json from exprsearch?") from None
        except LawError:
            raise  # said of the entry it is about (_checked), not of the template
        except (ExpressionSyntaxError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise LawError(f"the law's template cannot be read: {exc}") from None

    def _checked(self) -> Law:
        held = self.dataset.get("held", {})
        if not isinstance(held, Mapping) or not all(
                isinstance(k, str) and _number(v) for k, v in held.items()):
            raise LawError(f"its dataset's 'held' is {held!r}; it maps factor names to the one value each was measured at")
        for name, span in self.domain.items():
            if not (isinstance(span, (list, tuple)) and len(span) == 2 and all(_number(v) for v in span)):
                raise LawError(f"its domain's '{name}' is {span!r}; it gives the smallest and largest value measured")
        held_out = self.metrics.get("holdout_mape_pct")
        if held_out is not None and not _number(held_out):
            raise LawError(f"its metrics' 'holdout_mape_pct' is {held_out!r}; it is the error in % on the held-out "
                           "largest values, or null")
        texts = self.search.get("plausible", [])
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise LawError(f"its search's 'plausible' is {texts!r}; it lists laws as text")
        for text in texts:  # each one must read as a law of the factors
            try:
                self._plausible_law(text)
            except (ExpressionSyntaxError, TypeError, ValueError) as exc:
                raise LawError(f"its search's 'plausible' holds {text!r}, which does not read as a law: {exc}") from None
        return self

    @classmethod
    def from_json(cls, text: str) -> Law:
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as exc:
            raise LawError(f"not valid JSON: {exc}") from None


def inlined(template: sympy.Expr, constants: Mapping[str, float]) -> sympy.Expr:
    """``template`` with its constants written in as numbers (17 digits: a double exactly)."""
    return template.xreplace({sympy.Symbol(k, real=True): sympy.Float(v, 17) for k, v in constants.items()})


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(value: object) -> str:
    if value not in ("", "time", "rate"):
        raise LawError(f"its target_kind is {value!r}; it is 'time' or 'rate'")
    return str(value)


def locate(path: str | Path) -> Path:
    """The law.json at ``path``, or in the folder ``path`` (what ``run --out`` names)."""
    path = Path(path)
    if path.is_dir():
        if not (path / "law.json").is_file():
            # run --by, --segments or a file of several series: a folder per law, or per series of segments
            inside = sorted(f.name for f in path.iterdir() if (f / "law.json").is_file() or any(f.glob("*/law.json")))
            if inside:
                shown = ", ".join(inside[:4]) + (", …" if len(inside) > 4 else "")
                raise LawError(f"'{path}' holds {len(inside)} {'law' if len(inside) == 1 else 'laws'}, each in its own "
                               f"folder ({shown}); give one, such as {path / inside[-1]}")
            raise LawError(f"'{path}' is a folder with no law.json in it; give the law.json that run wrote, "
                           "or the folder run --out wrote it to")
        return path / "law.json"
    if not path.is_file():
        raise LawError(missing_file("law", path))
    return path


def load(path: str | Path) -> Law:
    """Read a law.json file, or the one in the folder ``path``."""
    path = locate(path)
    try:
        return Law.from_json(path.read_text())
    except LawError as exc:
        if str(exc).startswith("not valid JSON") and path.suffix.lower() != ".json":
            raise LawError(f"'{path}' is not a law.json (it does not read as JSON); a law is what exprsearch run "
                           f"writes: find one with exprsearch run {path} --target COLUMN, and give its law.json") from None
        raise LawError(f"{path}: {exc}") from None
