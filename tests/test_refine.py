import pandas as pd

from exprsearch import grammar, search
from tests.test_batch import EXPONENTS, table

TEXT = EXPONENTS + 'start = ["c + c*n**k/p", "c + c*n**k*p**k"]\n'


def test_the_count_of_refined_fits_says_which_differential_evolution_searched():
    """A lone exponent starts from its batched grid profile and is polished; two exponents in a
    term with no screening guess have no start and are searched by DE (the output says which)."""
    X, y = table(lambda p, n: 1 + 1e-3 * n**1.2 / p**0.9)
    frame = pd.DataFrame({"p": X[:, 0], "n": X[:, 1], "time": y})
    result = search(frame, "time", grammar.parse_text(TEXT, "two.toml"), resamples=0, jobs=1)
    assert (result.refined, result.searched) == (2, 1)
    assert result.law.search["refined"] == 2 and result.law.search["searched_by_de"] == 1


def test_a_law_holding_a_refined_laws_terms_and_more_fits_at_least_as_well():
    """The pruning judges what refining could gain from a parabola through the grid profile, which
    misses the gain where the cost has a kink (a max). A law that holds a refined law's terms and
    more can fit at least as well (its added coefficients at zero), so it is polished from that
    law's exponents: before, `c + c*log2(p) + c*max(…)` kept its grid value r = 5 and fitted four
    times worse than `c + c*max(…)` on these data."""
    import numpy as np

    from exprsearch.vocabulary import to_text

    rng = np.random.default_rng(1)
    rows = [{"p": p, "n": n, "time": (1 + 0.01 * max(n / p, 40 * np.log2(p)) + 0.05 * np.log2(p))
             * (1 + 0.02 * rng.standard_normal())}
            for p in (1, 2, 4, 8, 16, 32, 64) for n in (1000, 4000, 16000) for _ in range(3)]
    result = search(pd.DataFrame(rows), "time", "overlap", resamples=0)
    mse = {to_text(f.candidate.template): f.mse for f in result.alternatives}
    assert mse["c0 + c1*log2(p) + c2*max(n/p, 2**r0*log2(p))"] <= mse["c0 + c1*max(n/p, 2**r0*log2(p))"]


def test_refinement_on_pooled_repeats_reports_the_cost_on_every_row():
    """The refinement fits one row per configuration (exprsearch.pooled); the costs it reports
    are those of the same constants on every row of the table."""
    import numpy as np

    from exprsearch import candidates
    from exprsearch.compile import Compiler
    from exprsearch.fit import FitSettings, fit
    from exprsearch.refine import fit_all

    X, _ = table(lambda p, n: 1 + n / p)
    X = np.repeat(X, 5, axis=0)
    y = (1 + 1e-3 * X[:, 1] ** 1.2 / X[:, 0] ** 0.9) * (1 + 0.05 * np.random.default_rng(3).standard_normal(len(X)))
    g = grammar.bind(grammar.parse_text(TEXT, "two.toml"), ("p", "n"))
    usable = list(candidates.generate(g).candidates)
    compiler = Compiler(("p", "n"), X)
    fitted = fit_all(usable, compiler, y, FitSettings(), None)
    assert fitted.refined == 2
    for f in fitted.fits:
        again = fit(compiler.compile(f.candidate), y, start=f, refine=False)  # every row, the same exponents
        assert f.ok and abs(f.cost / again.cost - 1) < 1e-6 and abs(f.mse / again.mse - 1) < 1e-6
