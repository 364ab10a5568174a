"""What optimize says of its choice beyond the choice itself: a run that may overrun --budget at
the upper end of its interval, and laws that fit the measurements as well that would choose
otherwise."""

from collections import Counter
from typing import TYPE_CHECKING

from ..configs import described, setting

if TYPE_CHECKING:
    from ..optimize import Optimum  # pandas, which commands that do not optimize need not import

RIVAL = 0.05  # a plausible law by which the choice costs (or takes) this much more than its own choice contests it


def overrun(o: "Optimum", budget: float, unit: str) -> str:
    """The warning that the chosen configuration's run may overrun the --budget: the upper end of its
    time's 95 % prediction interval lies beyond it; with the best configuration whose does not."""
    said = (f"a run at {described(o.best.config)} may overrun the budget of {budget:g}{unit}: the 95 % prediction "
            f"interval of its time reaches {o.best.slowest:.4g}{unit}")
    if o.safe is None:
        searched = (f"the {o.feasible:,}" if o.safe_searched == o.feasible else
                    f"the {o.safe_searched:,} {'cheapest' if o.objective == 'cost' else 'fastest'} of the {o.feasible:,}")
        return (f"{said}, and none of {searched} feasible configurations stays within it there and by every law that "
                "fits the measurements as well; raise --budget, or measure near them to narrow their intervals "
                "(exprsearch suggest plans the runs)")
    cost = "" if o.safe.cost is None else f", cost {o.safe.cost:.4g}"
    return (f"{said}; {described(o.safe.config)} stays within it there and by every law that fits the measurements as "
            f"well (time {o.safe.time:.4g}{unit}, 95 % up to {o.safe.slowest:.4g}{unit}{cost})")


def contested(o: "Optimum", plausible: int) -> str | None:
    """The warning that laws the data could not tell from this one (``plausible`` of them) would
    choose otherwise, by more than :data:`RIVAL`: which configurations, and how much more the
    choice costs (or takes) by them; None where none would."""
    against = [(config, extra) for config, extra in o.rivals if extra > RIVAL]
    if not against:
        return None
    # each named by the factors it changes: the fixed ones, and those it shares with the choice, go without saying
    counts = Counter(described({k: v for k, v in config.items() if v != o.best.config[k]}) for config, _ in against)
    choices = "; ".join(f"{name}{f' ({n} laws)' if n > 1 else ''}" for name, n in counts.most_common(3))
    more = f" and {len(counts) - 3} other configuration{'s' if len(counts) > 4 else ''}" if len(counts) > 3 else ""
    finite = [extra for _, extra in against if extra != float("inf")]
    missed = len(against) - len(finite)
    worse = "costs" if o.objective == "cost" else "takes"
    how = "; ".join(part for part in (
        f"by them the choice {worse} up to {_more(max(finite), o.objective)}" if finite else "",
        f"by {missed} it misses the budget" if missed else "") if part)
    at = ",".join(f"{k}={setting(v)}" for k, v in o.best.config.items())
    return (f"{len(against)} of the {plausible} laws that fit the measurements about as well as this one (law.json's "
            f"search.plausible) choose otherwise: {choices}{more}; {how}. The measurements do not settle the choice; "
            f"exprsearch suggest --at {at} plans runs that would")


def _more(extra: float, objective: str) -> str:
    """``extra`` (0.11: 11 % more) in words: a share up to 100 %, a multiple beyond."""
    if extra < 1:
        return f"{100 * extra:.0f} % more"
    return f"{1 + extra:.3g}× {'as much' if objective == 'cost' else 'as long'}"
