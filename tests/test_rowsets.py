"""rowsets: the distinct rows of a matrix, as np.unique(axis=0) finds them, and each group's
median and relative spread, as pandas finds them."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from exprsearch.rowsets import medians, relative_variances, row_groups

VALUES = st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.5, -3.0, 1e300, 1e-300, 16.0])


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40).flatmap(lambda n: st.integers(0, 4).flatmap(
    lambda k: arrays(np.float64, (n, k), elements=VALUES))))
def test_the_groups_and_their_order_are_numpys(matrix):
    """The same first rows and groups, the groups in the lexicographic order of their values;
    -0.0 and 0.0 alike."""
    first, group = row_groups(matrix)
    if matrix.shape[0] == 0:
        assert len(first) == len(group) == 0
        return
    _, expected_first, expected_group = np.unique(matrix, axis=0, return_index=True, return_inverse=True)
    assert first.tolist() == expected_first.tolist()
    assert group.tolist() == expected_group.reshape(-1).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.floats(-1e6, 1e6)), min_size=1, max_size=40))
def test_each_groups_median_is_numpys(rows):
    group = np.unique([g for g, _ in rows], return_inverse=True)[1].reshape(-1)  # every number from 0 taken
    values = np.array([v for _, v in rows])
    expected = [np.median(values[group == g]) for g in range(group.max() + 1)]
    assert medians(group, values).tolist() == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.floats(0.1, 100)), min_size=1, max_size=60))
def test_relative_variances_are_each_groups_sample_variance_over_its_mean(rows):
    frame = pd.DataFrame(rows, columns=["key", "value"])
    group = pd.factorize(frame["key"], sort=True)[0]
    expected = frame.groupby("key", sort=True)["value"].agg(lambda v: (v / v.mean()).var(ddof=1)).to_numpy()
    assert relative_variances(group, frame["value"].to_numpy()) == pytest.approx(expected, nan_ok=True, rel=1e-9,
                                                                                 abs=1e-12)
