"""Printers of a law (LaTeX, an importable Python module) and writers of the result files."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import signal
import stat
import tempfile
from pathlib import Path

import numpy as np
import sympy

from .errors import OutputError
from .law import Law
from .rank import Ranking
from .reciprocal import reciprocal_of
from .vocabulary import to_latex, to_numpy_code, to_readable, to_text

FILES = ("law.json", "law.tex", "law.py", "front.csv")


def shown_digits(value: float, interval: list[float] | None = None, default: int = 4) -> int:
    """Significant digits worth showing for a constant: down to the leading digit of its 95 %
    interval's half-width (the data cannot tell the digits after it), between 2 and 6; ``default``
    where the law has no interval."""
    if not interval or value == 0:
        return default
    half = (interval[1] - interval[0]) / 2
    if not np.isfinite(half) or half <= 0:
        return default
    digits = int(np.floor(np.log10(abs(value))) - np.floor(np.log10(half))) + 1
    return int(np.clip(digits, 2, 6))


def rounded_constants(law: Law) -> dict[sympy.Symbol, sympy.Float]:
    """The law's constants as sympy Floats rounded to the digits the data support."""
    return {sympy.Symbol(k, real=True): sympy.Float(v, shown_digits(v, law.intervals.get(k)))
            for k, v in law.constants.items()}


def rounded_text(law: Law) -> str:
    """The law as plain text with constants rounded for reading."""
    return to_readable(law.template.xreplace(rounded_constants(law)))


FIGURES = ("measured_vs_predicted.png", "law_along.png", "breakdown.png", "front.png")
REPORT = "report.html"


def check_free(directory: str | Path, names: tuple[str, ...] = FILES) -> None:
    """Raise if ``directory`` already holds any of ``names``, before any work is done."""
    existing = [name for name in names if (Path(directory) / name).exists()]
    if existing:
        raise OutputError(
            f"'{directory}' already holds {', '.join(existing)}; "
            "pass --out to choose another directory or --force to replace them"
        )
    if Path(directory).exists() and not Path(directory).is_dir():
        raise OutputError(f"'{directory}' exists and is not a directory; pass another --out")
    check_writable(directory)


def check_writable(directory: str | Path) -> None:
    """Raise if files cannot be written in ``directory`` (or it cannot be made), before any work is
    done: tried in its nearest existing folder with a temporary folder, which is removed."""
    folder = Path(directory).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        if not folder.is_dir():
            raise NotADirectoryError(f"'{folder}' is a file")
        with _signals_held():  # a Ctrl-C or SIGTERM between making and removing it would leave it behind
            os.rmdir(tempfile.mkdtemp(dir=folder, prefix=".exprsearch-"))
    except OSError as exc:
        raise OutputError(f"cannot write results to '{directory}' ({exc.strerror or exc}); pass another --out") from None


def latex(law: Law) -> str:
    """The law as a LaTeX equation, constants rounded to the digits the data support."""
    rhs = to_latex(law.template.xreplace(rounded_constants(law)))
    column = reciprocal_of(law.target)  # 1/tokens_per_s is written as a fraction
    target = to_latex(sympy.Symbol(law.target)) if column is None else f"\\frac{{1}}{{{to_latex(sympy.Symbol(column))}}}"
    return f"\\begin{{equation}}\n  {target} = {rhs}\n\\end{{equation}}\n"


def python_module(law: Law) -> str:
    """Source of a module, needing only numpy, whose ``predict`` evaluates the law."""
    arguments = ", ".join(law.factors)
    # a factor may be named numpy (or like a builtin): the module's own names must not clash
    module = "numpy"
    while module in law.factors:
        module += "_"
    imported = "import numpy\n\n" if module == "numpy" else f"import numpy as {module}\n\n"
    conversions = "".join(f"    {f} = {module}.asarray({f}, dtype={module}.float64)\n" for f in law.factors)
    shape = f"{module}.broadcast({', '.join(law.factors)}).shape" if len(law.factors) > 1 else f"{law.factors[0]}.shape"
    target = _docstring_safe(law.target)
    return (
        f'"""{target} = {to_text(law.expression)}\n\n'
        f"Fitted by exprsearch {law.version} with grammar '{law.grammar.get('name')}'; "
        f'this module needs only numpy.\n"""\n\n'
        f"{imported}"
        f"FACTORS = {tuple(law.factors)!r}\n"
        f"TARGET = {law.target!r}\n\n\n"
        f"def predict({arguments}):\n"
        f'    """Predicted {target}; arguments are numbers or numpy arrays that broadcast."""\n'
        f"{conversions}"
        f"    return {module}.zeros({shape}) + ({to_numpy_code(law.expression, module)})\n"
    )


# what a front's infinite held-out error (shown as a dash) means: docs/method.md, selection step 0
HELD_OUT_LOST = ("held-out % —: the held-out values cannot check the law: refitted without them, it loses a term "
                 "that varies, which rests on them alone, or it has more constants than the configurations left, "
                 "so its exponents stay where they put them")


def front_csv(ranking: Ranking) -> str:
    """The Pareto front as CSV, simplest law first, with the chosen one marked."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["complexity", "constants", "mape_pct", "cv_mape_pct", "holdout_mape_pct", "rmse", "r2",
                     "extended_bic", "lack_of_fit_p", "chosen", "law"])
    for i, s in enumerate(ranking.front):
        law = s.fit.candidate.template.xreplace(
            {sympy.Symbol(k, real=True): sympy.Float(v, 6) for k, v in s.fit.values.items()}
        )
        writer.writerow([
            s.complexity, s.n_constants, f"{s.mape:.6g}", f"{s.cv_mape:.6g}",
            "" if s.holdout_mape is None else f"{s.holdout_mape:.6g}", f"{s.rmse:.6g}",
            f"{s.r2:.6g}", f"{s.ebic:.6g}",
            "" if s.lack_of_fit_p is None else f"{s.lack_of_fit_p:.4g}",
            "yes" if i == ranking.chosen else "", to_text(law),
        ])
    return out.getvalue()


def _docstring_safe(text: str) -> str:
    """``text`` as it can stand in a docstring: a backslash or three quotes in a column's name
    would end it or escape what follows."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def write(law: Law, ranking: Ranking, directory: str | Path, overwrite: bool = False) -> list[Path]:
    """Write law.json, law.tex, law.py and front.csv into ``directory``.

    An existing file is replaced only with ``overwrite``; nothing is written before that check.
    """
    directory = Path(directory)
    targets = [directory / name for name in FILES]
    if not overwrite:
        check_free(directory)
    contents = [law.to_json(), latex(law), python_module(law), front_csv(ranking)]
    write_all(dict(zip(targets, contents)))
    return targets


def _mode(path: Path) -> int:
    """The permissions ``path`` keeps where it exists, else those a file created afresh gets
    (0666 less the umask, as an editor or ``open()`` would give it)."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


@contextlib.contextmanager
def _signals_held():
    """SIGINT and SIGTERM held off inside (delivered on leaving), where the platform can block them."""
    held = {signal.SIGINT, signal.SIGTERM}
    blocked = hasattr(signal, "pthread_sigmask")
    if blocked:
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def write_all(files: dict[Path, str | bytes]) -> None:
    """Write every file to a temporary file beside it, then rename them all into place with
    SIGINT and SIGTERM held off: an interrupted run leaves either the old files or the new ones,
    never a half-written file or a mix of the two."""
    staged = []
    try:
        for path, content in files.items():
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                staged.append((Path(temporary), path))
                with os.fdopen(handle, "wb") as stream:
                    stream.write(content.encode() if isinstance(content, str) else content)
                os.chmod(temporary, _mode(path))  # mkstemp's 0600 would keep the results from others
            except OSError as exc:  # a full disk, a folder that cannot be made: said, nothing replaced
                raise OutputError(f"could not write '{path}' ({exc.strerror or exc}); nothing was replaced") from None
        with _signals_held():
            for temporary, path in staged:
                os.replace(temporary, path)
            staged = []
    finally:
        for temporary, _ in staged:  # not renamed: interrupted before, or a write failed
            temporary.unlink(missing_ok=True)
