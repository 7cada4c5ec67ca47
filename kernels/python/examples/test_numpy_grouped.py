"""grouped_bf16_numpy_ref (numpy_grouped.py) under pytest: `pytest test_numpy_grouped.py`
(with `-p ggfuzz.pytest_plugin` where the ggfuzz package is not installed)."""
import pytest
import ggfuzz
import numpy_grouped  # the plugin file beside this one: importing it registers its kernel


@pytest.mark.ggfuzz(numpy_grouped.KERNEL, seeds=True, tier="quick")
def test_case(ggfuzz_case):  # one test per case; cases the kernel does not take are skipped
    ggfuzz_case.check()


def test_a_campaign_finds_the_planted_bug(tmp_path):  # the campaign's files go to tmp_path
    with pytest.raises(ggfuzz.FuzzFailure, match="g:empty"):
        ggfuzz.fuzz(numpy_grouped.KERNEL, seconds=60, runs=200, seed=1,
                    mutant="empty_group_garbage", out=tmp_path)
