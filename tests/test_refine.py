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
