"""Where a law extrapolates: the values of a factor outside its measured range (law.json's
domain), the warning where they lie far outside it, and past the change of regime a segment's
law ends at; predict, explain and optimize say so alike."""


def outside_measured(law, name: str, values):
    """Which of ``values`` of factor ``name`` lie outside the law's measured range, past rounding:
    where the law extrapolates."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    if name not in law.domain:
        return np.zeros(len(values), dtype=bool)
    low, high = law.domain[name]
    slack = 1e-9 * max(abs(low), abs(high), 1.0)
    return (values < low - slack) | (values > high + slack)


def far_outside(law, name: str, values, crossing: bool = True) -> str | None:
    """Where ``values`` of factor ``name`` lie outside the law's measurements, the warning that says
    so; with ``crossing``, past the change of regime a segment's law ends at (:func:`past_change`)."""
    from ..configs import setting

    low, high = law.domain.get(name, [None, None])
    if low is None:
        return None
    unpinned = law.search.get("unpinned", {}).get(name)
    outside = [v for v in values if v < low or v > high]
    if crossing and (crossed := past_change(law, name, outside)):
        return crossed
    if unpinned and outside:
        return (f"{name} = {setting(outside[0])} is outside the measured {name} ({setting(low)}..{setting(high)}), where "
                f"the law's shapes of {name} ({', '.join(unpinned['shapes'])}) are as many as its "
                f"{unpinned['values']} measured values can tell apart: other shapes fit them as well, so the law's "
                "course there is the search's choice, not a measurement")
    # how far outside by ratio; zero or a negative value below a positive range is as far as can be
    worst = max(values, key=lambda v: max(v / high if high > 0 else 0,
                                          (low / v if v > 0 else float("inf")) if low > 0 else 0))
    if high > 0 and worst > 2 * high:
        return (f"{name} = {setting(worst)} is {worst / high:.3g}× the largest measured {name} ({setting(high)}): "
                "extrapolating")
    if low > 0 and worst < low / 2:
        return f"{name} = {setting(worst)} is below half the smallest measured {name} ({setting(low)}): extrapolating"
    return None


def past_change(law, name: str, values) -> str | None:
    """Where a law fitted to one segment of a series (run --segments) is asked about values past the
    change of regime it ends at, the sentence saying that the other segment's law holds there."""
    from ..configs import setting

    segment = law.dataset.get("segment")
    if not segment or segment["factor"] != name:
        return None
    low, high, below = segment["from"], segment["to"], segment["side"] == "below"
    across = [v for v in values if (v > high if below else v < low)]
    if not across:
        return None
    return (f"{name} = {setting(across[0])} lies past the change of regime at the {'end' if below else 'start'} of this "
            f"law's segment ({name} = {setting(low)}..{setting(high)}, run --segments {name}): the law of the segment "
            f"{'above' if below else 'below'} it, in the folder beside this one, holds there")
