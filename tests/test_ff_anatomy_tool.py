"""tools/ff_anatomy.py: fast-forward's counters beside 802.11's."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from conftest import REPO

spec = importlib.util.spec_from_file_location("ff_anatomy", REPO / "tools" / "ff_anatomy.py")
assert spec is not None and spec.loader is not None
tool = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = tool
spec.loader.exec_module(tool)


@pytest.mark.core
def test_a_string_counts_fast_forwarded_hops_only_with_ff():
    out = tool.string(4, "ns2", 1)
    base, ff = out["802.11"], out["ff"]
    assert base["ff_run_share"] == {0: 1.0}, "802.11 forwards nothing fast"
    assert "ff.attempted" not in base
    assert ff["ff.completed"] <= ff["ff.attempted"]
    # A forwarded packet skips the RTS: FF sends fewer of them.
    assert ff["rts_sent"] < base["rts_sent"]
    assert sum(ff["ff_run_share"].values()) == pytest.approx(1.0, abs=0.01)
    assert ff["ff_run_share"][1] > 0
