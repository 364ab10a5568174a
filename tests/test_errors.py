import pytest

from exprsearch.errors import did_you_mean


@pytest.mark.parametrize(("name", "choices", "said"), [
    ("trm", ["term", "shape", "constant"], " (did you mean 'term'?)"),
    ("samples_per_s", ["gpu_count", "samples_per_sec_mean", "samples_per_sec_median", "samples_per_sec_std"],
     " (did you mean 'samples_per_sec_std', 'samples_per_sec_mean' or 'samples_per_sec_median'?)"),
    ("time_mean", ["time_mean_s", "time_median_s", "gpus"], " (did you mean 'time_mean_s' or 'time_median_s'?)"),
    ("tbs", ["gpus", "model"], ""),
])
def test_a_misspelt_name_is_offered_every_name_about_as_close(name, choices, said):
    """Where a rate is measured as its mean, median and spread, the one offered alone was the
    shortest (the spread); the ones about as close are offered beside it."""
    assert did_you_mean(name, choices) == said
