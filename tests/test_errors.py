import pytest

from exprsearch.errors import did_you_mean


@pytest.mark.parametrize(("name", "choices", "said"), [
    ("trm", ["term", "shape", "constant"], " (did you mean 'term'?)"),
    ("samples_per_s", ["gpu_count", "samples_per_sec_mean", "samples_per_sec_median", "samples_per_sec_std"],
     " (did you mean 'samples_per_sec_std', 'samples_per_sec_mean' or 'samples_per_sec_median'?)"),
    ("time_mean", ["time_mean_s", "time_median_s", "gpus"], " (did you mean 'time_mean_s' or 'time_median_s'?)"),
    ("tbs", ["gpus", "model"], ""),
    ("h100-sxm5-80gb", ["A100-SXM4-40GB", "A100-SXM4-80GB", "NVIDIA H100-SXM5-80GB", "TPU-v5p"],
     " (did you mean 'NVIDIA H100-SXM5-80GB', 'A100-SXM4-80GB' or 'A100-SXM4-40GB'?)"),
    ("resnet", ["ResNet-50", "ResNet-152", "BERT", "ResNet-101", "ResNeXt-50"],
     " (did you mean 'ResNet-50', 'ResNet-152' or 'ResNet-101'?)"),
])
def test_a_misspelt_name_is_offered_every_name_about_as_close(name, choices, said):
    """Where a rate is measured as its mean, median and spread, the one offered alone was the
    shortest (the spread); the ones about as close are offered beside it. A name written short
    (MLPerf's accelerator without its vendor) is offered first the names it lies inside."""
    assert did_you_mean(name, choices) == said


@pytest.mark.parametrize(("name", "choices", "said"), [
    ("EPOCH_S", ["layers", "width", "epoch_s"], " (did you mean 'epoch_s'? names match upper and lower case as written)"),
    ("Time", ["time", "TIME", "gpus"], " (did you mean 'time' or 'TIME'? names match upper and lower case as written)"),
    ("Epoch_sec", ["layers", "epoch_s"], " (did you mean 'epoch_s'?)"),
])
def test_a_name_in_other_case_is_offered_as_written(name, choices, said):
    """'EPOCH_S' for a column epoch_s got no hint: difflib's closeness counts case, so it found
    nothing close; the column written otherwise is now offered, with why it did not match."""
    assert did_you_mean(name, choices) == said


def test_run_offers_the_target_column_in_its_own_case(tmp_path):
    from typer.testing import CliRunner

    from exprsearch.cli import app

    (tmp_path / "t.csv").write_text("p,epoch_s\n1,10\n2,6\n4,4\n8,3\n")
    result = CliRunner().invoke(app, ["run", str(tmp_path / "t.csv"), "-t", "EPOCH_S", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "(did you mean 'epoch_s'? names match upper and lower case as written)" in " ".join(result.output.split())


def test_a_failure_is_its_error_s_sentence_and_keeps_its_kind():
    from exprsearch.errors import Failure, ShortData

    failure = Failure(ShortData("'f.csv' has 1 usable row(s)"))
    assert failure == "'f.csv' has 1 usable row(s)" and failure.kind is ShortData
    assert {"g": failure} == {"g": "'f.csv' has 1 usable row(s)"}  # a mapping of reasons, as before
