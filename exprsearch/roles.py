"""What a table's numeric columns are besides settings: settings written through others (a global
batch = workers × batch per worker), and measurements of the runs (a rate, another statistic of
the time), which a law would only restate: nobody can set a throughput before the run."""

from __future__ import annotations

import itertools
import re

import numpy as np

from .reciprocal import reciprocal_of
from .rowsets import row_groups

_STATISTIC = ("mean|avg|average|median|std|stdev|stddev|sd|sem|stderr|var|variance|min|max|minimum|maximum|"
              "olympic|iqr|mad|p\\d{1,2}")
_SUFFIX = re.compile(rf"^(?P<of>.+?)[_\-. ]+(?P<statistic>{_STATISTIC})$", re.IGNORECASE)
_PREFIX = re.compile(rf"^(?P<statistic>{_STATISTIC})[_\-. ]+(?P<of>.+)$", re.IGNORECASE)
# a statistic named alone (a summary table's mean, sd, median of one measured quantity), or a bound
# of its confidence interval (ci_sd_left, median_ci_low): of the quantity the table does not name
_BARE = re.compile(rf"^(?:ci[_\-. ]+)?(?P<statistic>{_STATISTIC})"
                   r"(?:[_\-. ]+(?:ci[_\-. ]+)?(?:left|right|lower|upper|low|high|lo|hi))?$", re.IGNORECASE)
# statistics of the same runs lie 0.7-8.7 % from the time on the public tables (mean, median,
# min, max); a factor set by design explains it alone 40 % off or worse there
ALONE = 0.1
UNIQUE = 0.8  # a measurement differs on nearly every row; a factor set by design repeats its levels
# words that name what a run measures rather than what it is set to; a column so named that differs
# on most rows (a rate, a utilisation, a cost) is a measurement even where it does not give the time
_MEASUREMENT = re.compile(r"(?:^|[_\-. /])(throughput|speedup|speed|mfu|hfu|utili[sz]ation|util|efficiency|"
                          r"accuracy|loss|latency|duration|elapsed|runtime|timestamp|cost|"
                          r"per[_\-. ]?s(?:ec(?:ond)?)?)(?=$|[_\-. /])", re.IGNORECASE)  # runtime, timestamp: W&B's

# how many runs a row summarises (MLPerf's n_runs): the sample size of its statistics, not a setting
_COUNT = re.compile(r"^(?:n|num|number|count)[_\-. ]?(?:of[_\-. ]?)?(?:runs|repetitions|trials|measurements)$",
                    re.IGNORECASE)

# a bare statistic of how the runs scatter (a summary table's sd beside its time), and a bare count
# of the runs it was taken over: beside a target that names no statistic, its runs' spread
_DISPERSION = {"std", "sem", "var", "iqr", "mad"}
_RUNS = re.compile(r"^(?:count|runs|reps|repeats|repetitions|trials)$", re.IGNORECASE)

# how many samples a row's statistics summarise (hivemind's n, CM-DARE's n_samples): a sample size
# where the table holds such statistics, else perhaps a setting (a training set's n_samples)
_SAMPLES = re.compile(r"^(?:n|count|(?:n|num|number)[_\-. ]?(?:of[_\-. ]?)?samples|samples?[_\-. ]?count)$",
                      re.IGNORECASE)


def _crossed(X: np.ndarray, j: int, others: set[int]) -> bool:
    """Whether column ``j`` forms a full grid with one of ``others`` (every value with every value
    of it), as a designed factor does and a count of samples, near-constant with strays, does not."""
    for i in others:
        pairs = X[np.isfinite(X[:, [i, j]]).all(axis=1)][:, [i, j]]
        if len(_distinct_rows(pairs)) == len(np.unique(pairs[:, 0])) * len(np.unique(pairs[:, 1])):
            return True
    return False


def _summarised(names: list[str]) -> str | None:
    """The quantity of which the columns give two statistics or more (``steps_per_sec`` of its
    ``_mean`` and ``_std``), or None: then the rows summarise samples of it."""
    kinds: dict[str, set[str]] = {}
    for name in names:
        quantity = stem(name)
        if quantity is not None:
            kinds.setdefault(quantity, set()).add(statistic(name))
    return next((quantity for quantity, seen in kinds.items() if len(seen) >= 2), None)


# whole numbers that name a run rather than set it, each with the reason said for it: which of a
# configuration's repeated runs a row is (run 1, 2, …; CM-DARE's rep 0–12) or its seed, and a batch
# scheduler's number for the job that ran it (Slurm's JobID)
_SPACE = r"^(?:.*/)?_?"  # a logger's namespace and mark: W&B's _step, Lightning's trainer/global_step
_NUMBERING = (
    (re.compile(_SPACE + r"(?:run|rep|repeat|repetition|trial|attempt|replicate|seed)"
                r"(?:[_\-. ]?(?:id|idx|index|no|nr|num|number|name|uuid))?$", re.IGNORECASE),
     "it numbers a configuration's repeated runs, which are no setting of them"),
    (re.compile(_SPACE + r"job[_\-. ]?(?:id|no|nr|num|number)?$", re.IGNORECASE),
     "it is the scheduler's number for each run's job, no setting of it"),
    # a log of each step or epoch of a run (step 0, 1, …): where in a run a row is, not how the run is
    # set; 'steps' and 'epochs', how many a run takes, are settings
    (re.compile(_SPACE + r"(?:global[_\-. ]?)?(?:step|iteration|iter|epoch)(?:[_\-. ]?(?:id|idx|index|no|nr|num|number))?$"
                r"|" + _SPACE + r"(?:batch|sample)[_\-. ]?(?:id|idx|index)$", re.IGNORECASE),
     _STEPS := "it numbers the steps or epochs within a run, which are no setting of it"),
)
RUN, STEP = _NUMBERING[0][0], _NUMBERING[2][0]  # names that number a configuration's runs, a run's steps
NAMESPACE = _SPACE

# a target so named is a rate, higher is better (a throughput, a speedup): deciding with its law means
# maximising it, and its time is the work of a run divided by it
_RATE = re.compile(r"(?:^|[_\-. /])(throughput|speedup|speed|bandwidth|iops|qps|fps|"
                   r"per[_\-. ]?s(?:ec(?:ond)?)?)(?=$|[_\-. /])|/s(?:ec)?$", re.IGNORECASE)


# a column so named holds a time: a word for one, or a unit of time at its end (epoch_s, ttt_min)
_TIME = re.compile(r"(?:^|[_\-. (/])(time|duration|elapsed|runtime|latency|seconds|secs?|ms|ttt)(?=$|[_\-. )/])"
                   r"|[_\-. /](?:s|ms|us|µs|ns|min|h)$", re.IGNORECASE)


def reads_as_time(name: str) -> bool:
    """Whether a column's name says it is a time (``step_time_s``, ``Elapsed``) and not a rate
    (``steps_per_sec``); the reciprocal of a rate (``1/steps_per_sec``) is a time."""
    if (inverted := reciprocal_of(name)) is not None:
        return reads_as_rate(inverted)
    return _TIME.search(name) is not None and not reads_as_rate(name)


def reads_as_rate(name: str) -> bool:
    """Whether a target's name says it is a rate, higher being better (``images_per_sec``, and
    the reciprocal of a time, ``1/step_time_s``)."""
    if (inverted := reciprocal_of(name)) is not None:
        return reads_as_time(inverted)
    return _RATE.search(name) is not None


def target_kind(target: str, given: str | None = None) -> str:
    """The kind law.json records: as ``given`` (time or rate), else "rate" where the target's name
    reads as one, else "" (the law then reads the name itself)."""
    return given or ("rate" if reads_as_rate(target) else "")


# one statistic under its several names: a column that is the same statistic as the target (both
# medians) is a statistic over the same runs
_SAME = {"avg": "mean", "average": "mean", "stdev": "std", "stddev": "std", "sd": "std", "stderr": "sem",
         "variance": "var", "minimum": "min", "maximum": "max", "p50": "median"}


def statistic(name: str) -> str | None:
    """The statistic a column's name says it is (``epochs_median`` → ``median``, ``avg_loss`` → ``mean``,
    ``sd`` → ``std``), or None."""
    match = _BARE.match(name) or _SUFFIX.match(name) or _PREFIX.match(name)
    return _SAME.get(match["statistic"].lower(), match["statistic"].lower()) if match else None


def stem(name: str) -> str | None:
    """The quantity a column is a statistic of (``ttt_min_max`` → ``ttt_min``; ``""`` for a
    statistic named alone, ``mean`` or ``ci_sd_left``, of the quantity the table leaves unnamed),
    or None."""
    if _BARE.match(name):
        return ""
    match = _SUFFIX.match(name) or _PREFIX.match(name)
    return match["of"].lower() if match else None


def _a(word: str) -> str:
    """The word after its article: a median, an olympic (mean), an iqr."""
    return f"{'an' if word[:1].lower() in 'aeio' else 'a'} {word}"


def _of(quantity: str) -> str:
    """A quantity in words, the unnamed one of bare statistics too."""
    return quantity or "the measured value"


def settings(target: str, factors: list[str], values: np.ndarray,
             context: np.ndarray | None = None) -> tuple[list[str], np.ndarray, str | None]:
    """The factors of a table whose columns were not named, without those that number its rows or
    look like measurements of the runs (a rate, a statistic of the time), their ``values`` (the
    factors' columns, then the target's) without those columns, and the note naming them. All
    are kept where none would be left. ``context``: the same columns on every row of the file,
    where ``values`` holds only some (--where); what the columns are is read from it."""
    read = values if context is None else context
    numbers = row_numbers(factors, read[:, :-1])
    measured = measured_columns(target, factors, read[:, :-1], read[:, -1])
    measured = {n: why for n, why in measured.items() if n not in numbers}
    if not (measured or numbers) or len(measured) + len(numbers) == len(factors):
        return factors, values, None
    said = [f"left out {column_named(n)}: it numbers the rows, an index written with the table (pandas writes one "
            "unless to_csv is given index=False)" for n in numbers]
    if measured:
        said.append("left out column(s) that look like measurements of the runs, not settings: "
                    + "; ".join(f"{name} ({why})" for name, why in measured.items())
                    + f". A law for {target} needs what is set before a run; name the factors with --factors "
                    "to use them")
        averaged = statistic(reciprocal_of(target) or target) in (None, "mean", "median")
        spreads = [name for name in measured if statistic(name) == "std" and averaged]
        counts = [name for name, why in measured.items() if why.startswith("it counts the runs")]
        if spreads:
            count = counts[0] if counts else "COUNT (COUNT: the column of how many, or their number)"
            said.append(f"where {spreads[0]} is the standard deviation of the runs each row summarises, --spread "
                        f"{spreads[0]},{count} tests the law against their noise")
    kept = [j for j, f in enumerate(factors) if f not in measured and f not in numbers]
    return [factors[j] for j in kept], values[:, [*kept, -1]], "; ".join(said)


def column_named(column: str) -> str:
    """A column as the user sees it in the file: pandas names a column without a header 'Unnamed: k'."""
    unnamed = column.startswith("Unnamed: ") and column[9:].isdigit()
    return f"the unnamed column {int(column[9:]) + 1}" if unnamed else f"column '{column}'"


def measured_columns(target: str, names: list[str], X: np.ndarray, y: np.ndarray) -> dict[str, str]:
    """The columns among ``names`` (the candidate factors, values in ``X``) that look like
    measurements of the runs, each with the reason in words. A column is one when

    - alone it gives the target (``y``) within :data:`ALONE` as a power near ±1 (the target is
      the same measurement as a rate or another statistic), takes a different value on at least
      :data:`UNIQUE` of the rows, is not a product of powers of the others, and another factor
      that varies repeats its levels (the table is a design, not a sample of scattered values); or
    - its name is a statistic (mean, std, max, …) of the target's quantity or of such a column's, or
      the statistic the target is of another quantity (``epochs_median`` beside ``ttt_min_median``),
      or any statistic where a column counts the runs each row summarises (``n_runs``); or
    - its name holds a word for a measurement (throughput, per second, utilisation, cost, …) and
      it differs on more than half of the rows while another factor repeats its levels; or
    - its name counts the runs a row summarises (``n_runs``, ``number_of_trials``), or numbers a
      configuration's repeated runs (``run``, ``rep``, ``trial_id``, ``seed``), its job (``JobID``) or
      the steps of a run (``step``, ``global_step``, ``epoch``, ``sample_idx``)
      in whole numbers,
      while another factor varies and repeats its levels.
    """
    found: dict[str, str] = {}
    named: dict[str, str] = {}  # by a word of their names: said only where the data say nothing more
    column = reciprocal_of(target) or target  # whose name says what it is a statistic of (1/steps_per_sec_mean)
    summarised = _summarised([column, *names])
    positive = np.isfinite(y) & (y > 0)
    varying = [j for j in range(len(names)) if len(np.unique(X[np.isfinite(X[:, j]), j])) > 1]
    levelled = {j for j in varying if _distinct_share(X[:, j]) <= 0.5}
    for j in varying:
        rows = positive & np.isfinite(X[:, j]) & (X[:, j] > 0)
        if rows.sum() < 6 or not (levelled - {j}):
            continue
        if _COUNT.match(names[j]):
            named[names[j]] = "it counts the runs a row summarises, the sample size of its statistics"
            continue
        if summarised is not None and _SAMPLES.match(names[j]) and np.array_equal(X[rows, j], np.round(X[rows, j])) \
                and not _crossed(X, j, levelled - {j}):
            named[names[j]] = f"it counts the samples that {_of(summarised)}'s statistics summarise, their sample size"
            continue
        numbering = next((why for pattern, why in _NUMBERING if pattern.match(names[j])), None)
        if numbering and np.array_equal(X[rows, j], np.round(X[rows, j])):
            named[names[j]] = numbering
            continue
        share = _distinct_share(X[rows, j])
        word = _MEASUREMENT.search(names[j])
        word = word.group(1) if word else "time" if reads_as_time(names[j]) else None  # comm_s beside fwd_s
        if word and share > 0.5:
            named[names[j]] = (f"named as a measurement ({word}) and different on {100 * share:.0f} % of "
                               "the rows, where the settings repeat their levels")
        if share < UNIQUE:
            continue
        design = np.column_stack([np.ones(rows.sum()), np.log(X[rows, j])])
        (scale, power), *_ = np.linalg.lstsq(design, np.log(y[rows]), rcond=None)
        spread = float(np.sqrt(np.mean((design @ (scale, power) - np.log(y[rows])) ** 2)))
        rest = [i for i in varying if i != j]
        written = np.isfinite(X[:, [j, *rest]]).all(axis=1) & (X[:, [j, *rest]] > 0).all(axis=1)
        if abs(abs(power) - 1) <= 0.1 and spread <= ALONE and _powers(_distinct_rows(X[written]), j, rest) is None:
            shown = f"{np.exp(scale):.3g}{'·' if power > 0 else '/'}{names[j]}"
            within = "exactly" if spread < 1e-6 else f"within {100 * spread:.2g} %"
            found[names[j]] = f"alone it gives {target} {within}: {target} ≈ {shown}"
    named |= _schedules(names, X, varying, levelled, {*named, *found}, [j for j in varying if named.get(names[j]) == _STEPS])
    quantities = {n.lower() if stem(n) is None else stem(n) for n in [column, *found]}
    counted = next((n for n in names if _COUNT.match(n)), None)
    if counted is None and stem(column) is None:  # time beside bare sd and count: the runs' mean, spread, number
        counted = _bare_count(names, X)
        if counted is not None:
            named.setdefault(counted, "it counts the runs a row summarises, the sample size of its statistics")
    # a sample size beside the target's statistics (hivemind's n): the other statistics summarise those samples too
    sampled = next((n for n in names if named.get(n, "").startswith("it counts the samples")), None)
    for name in names:
        if name in found or stem(name) is None:
            continue
        if stem(name) in quantities:
            found[name] = f"another statistic of {_of(stem(name))}"
        elif statistic(name) == statistic(column):
            found[name] = f"{_a(statistic(name))}, as {column} is: a statistic of the same runs"
        elif counted:
            which = f"'{counted}'" if counted == "runs" else counted  # not "the runs that runs counts"
            found[name] = f"{_a(statistic(name))} over the runs that {which} counts"
        elif sampled:
            found[name] = f"{_a(statistic(name))} over the samples that {sampled} counts"
        elif _bare_dispersion(name) and stem(column) is None:
            found[name] = f"{_a(statistic(name))} named alone beside {target}: the scatter of the runs each row summarises"
    found |= {n: why for n, why in named.items() if n not in found}
    return {n: found[n] for n in names if n in found}


def _bare_dispersion(name: str) -> bool:
    """Whether ``name`` is a statistic of the runs' scatter named alone (sd, sem), not of a quantity."""
    return stem(name) == "" and statistic(name) in _DISPERSION


def _bare_count(names: list[str], X: np.ndarray) -> str | None:
    """The column that counts the runs a row summarises where a summary table names its columns
    bare (time, sd, count): one named as a count, of whole numbers from 1, beside a bare statistic
    of the runs' scatter (sd, sem). The two names say it, where a summary's one row per setting
    repeats no factor's levels."""
    if not any(map(_bare_dispersion, names)):
        return None
    for j, name in enumerate(names):
        values = X[np.isfinite(X[:, j]), j]
        if _RUNS.match(name) and values.size and np.array_equal(values, np.round(values)) and values.min() >= 1:
            return name
    return None


def _schedules(names: list[str], X: np.ndarray, varying: list[int], levelled: set[int], taken: set[str],
               steps: list[int]) -> dict[str, str]:
    """The columns that follow a step column of a per-step log (a learning rate's schedule): one
    value at each step, the same in every run. A setting of the runs is the same at each step of a
    run and differs between runs, so it takes several values at one step; a step that does not
    repeat across runs (a global step counted on) tells nothing."""
    out = {}
    for i in steps:
        if _distinct_share(X[:, i]) > 0.5:
            continue
        for j in varying:
            if j == i or names[j] in taken or names[j] in out or not (levelled - {i, j}):
                continue
            pairs = X[np.isfinite(X[:, [i, j]]).all(axis=1)][:, [i, j]]
            if len(pairs) and len(_distinct_rows(pairs)) == len(np.unique(pairs[:, 0])):
                out[names[j]] = (f"it follows {names[i]}, one value at each {names[i]} the same in every run (a "
                                 "schedule), where a setting of the runs differs between them")
    return out


_INDEX = re.compile(r"^(?:|index|Unnamed: \d+)$", re.IGNORECASE)  # what pandas names a table's written index


def row_numbers(names: list[str], X: np.ndarray) -> list[str]:
    """The columns among ``names`` that hold the rows' numbers (0, 1, 2, … or 1, 2, 3, …) under
    the name of an index written with the table (pandas' ``to_csv`` writes one by default): a
    row's number is no setting of its run."""
    counter = np.arange(len(X), dtype=float)
    return [name for j, name in enumerate(names) if _INDEX.match(name) and len(X) > 1
            and (np.array_equal(X[:, j], counter) or np.array_equal(X[:, j], counter + 1))]


def _distinct_rows(X: np.ndarray) -> np.ndarray:
    """The distinct rows of ``X``, in the order they first appear."""
    first, _ = row_groups(X)
    return X[np.sort(first)]


def _distinct_share(values: np.ndarray) -> float:
    return len(np.unique(values)) / max(len(values), 1)


def derived_notes(names: list[str], X: np.ndarray) -> list[str]:
    """Notes on factors that are on every row a product of powers of the others (a global batch
    = workers × batch per worker): a law can write such a factor through the others, so laws the
    data cannot tell apart multiply; naming one of them fewer with --factors keeps the law readable."""
    left = [j for j in range(X.shape[1]) if (X[:, j] > 0).all()]
    X = _distinct_rows(X)  # one row per configuration: what is exact on them is exact on every row
    notes = []
    while len(left) > 1:
        found = []
        for j in left:
            written = _fewest(X, j, [i for i in left if i != j])
            if written is not None:
                others, powers = written
                terms = [(i, p) for i, p in zip(others, powers[1:])]
                # the one through fewest others, then with positive powers (a product) reads best
                found.append((len(terms), sum(p < 0 for _, p in terms), j, terms, float(np.exp(powers[0]))))
        if not found:
            break
        *_, j, terms, scale = min(found, key=lambda f: f[:3])
        shown = " × ".join(names[i] if abs(p - 1) < 1e-9 else f"{names[i]}^{p:.3g}" for i, p in terms)
        # "proportional to" rather than the constant: --by groups that differ only in it share one note
        notes.append(f"factor {names[j]} is {'' if abs(scale - 1) < 1e-9 else 'proportional to '}{shown} on every row: "
                     "a law can write it through those, so leave one of them out with --factors to keep the law "
                     "readable")
        left.remove(j)
    return notes


def _fewest(X: np.ndarray, j: int, others: list[int]) -> tuple[list[int], np.ndarray] | None:
    """Column ``j`` as a product of powers of the fewest of ``others`` (a global batch through
    workers and batch per worker, not through every column that happens to fit as well), or None."""
    if _determined(X, j, others) and _exact(X, j, others) is None:
        return None  # not even through all of them (where they are too few to say, their subsets may)
    for size in range(1, len(others) + 1):
        for subset in itertools.islice(itertools.combinations(others, size), 200):
            powers = _powers(X, j, list(subset))
            if powers is not None and abs(powers[0]) < 700 and (np.abs(powers[1:]) > 1e-9).all():
                return list(subset), powers
    return None


def _powers(X: np.ndarray, j: int, others: list[int]) -> np.ndarray | None:
    """(log scale, powers) writing positive column ``j`` on every row as a product of powers of
    the positive columns ``others``, or None where no such product gives it."""
    return _exact(X, j, others) if _determined(X, j, others) else None


def _determined(X: np.ndarray, j: int, others: list[int]) -> bool:
    """Whether there are more configurations than powers to fit: with as many, any column is
    "a product" of the others."""
    return len(np.unique(X[:, [j, *others]], axis=0)) > len(others) + 1


def _exact(X: np.ndarray, j: int, others: list[int]) -> np.ndarray | None:
    """The least-squares (log scale, powers) of column ``j`` on ``others``, where they give it exactly."""
    design = np.column_stack([np.ones(len(X)), np.log(X[:, others])])
    target = np.log(X[:, j])
    powers, *_ = np.linalg.lstsq(design, target, rcond=None)
    exact = np.max(np.abs(design @ powers - target)) <= 1e-9 * max(1.0, float(np.max(np.abs(target))))
    return powers if exact else None
