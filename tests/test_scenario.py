"""Loading scenarios, dotted-key overrides and parameter parsing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from manetfair.errors import InputError
from manetfair.scenario import Scenario, load, parse_param, parse_value, set_path, split_values


def test_parse_value_reads_toml_values_and_bare_strings():
    assert parse_value("3") == 3
    assert parse_value("2.5") == 2.5
    assert parse_value("true") is True
    assert parse_value("[1, 2]") == [1, 2]
    assert parse_value('"x y"') == "x y"
    assert parse_value("red") == "red"
    assert parse_value("tcp-newreno") == "tcp-newreno"


def test_split_values_respects_brackets_and_quotes():
    assert split_values("1,2,3") == ["1", "2", "3"]
    assert split_values("[1,2],[3]") == ["[1,2]", "[3]"]
    assert split_values('"a,b",c') == ['"a,b"', "c"]


@given(st.lists(st.integers(min_value=-(10**6), max_value=10**6), min_size=1, max_size=8))
def test_split_then_parse_round_trips_integers(values):
    assert [parse_value(v) for v in split_values(",".join(map(str, values)))] == values


def test_parse_param_single_and_multi():
    assert parse_param("mac.queue=red") == ("mac.queue", ["red"])
    assert parse_param("radio.data_rate_mbps=1,2,11", multi=True) == (
        "radio.data_rate_mbps",
        [1, 2, 11],
    )
    for bad in ("novalue", "=3", "a.b="):
        with pytest.raises(InputError):
            parse_param(bad)


def test_set_path_creates_tables_and_indexes_arrays():
    data = {"flow": [{"src": 1}, {"src": 2}]}
    set_path(data, "mac.rts_threshold_bytes", 3000)
    set_path(data, "flow.1.rate_kbps", 400.0)
    set_path(data, "flow.*.packet_bytes", 512)
    assert data["mac"] == {"rts_threshold_bytes": 3000}
    assert data["flow"] == [
        {"src": 1, "packet_bytes": 512},
        {"src": 2, "rate_kbps": 400.0, "packet_bytes": 512},
    ]
    with pytest.raises(InputError, match="index"):
        set_path(data, "flow.5.rate_kbps", 1)
    with pytest.raises(InputError, match="empty segment"):
        set_path(data, "mac..x", 1)
    with pytest.raises(InputError, match="inside a value"):
        set_path(data, "mac.rts_threshold_bytes.x", 1)


def test_load_accepts_path_text_dict_and_scenario(tmp_path, pair_file):
    text = pair_file.read_text()
    from_path = load(pair_file)
    assert from_path.origin == str(pair_file)
    assert load(str(pair_file)).data == from_path.data
    assert load(text).data == from_path.data
    assert load(from_path.data).data == from_path.data
    sc = Scenario(from_path.data)
    copy = load(sc)
    copy.data["seed"] = 99
    assert sc.data["seed"] == 1  # load copies


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(InputError, match="no such scenario file"):
        load(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("this is = = not toml\n")
    # A file is parsed when first used (once, by the core, when nothing else needs it).
    with pytest.raises(InputError, match="bad.toml: not valid TOML"):
        _ = load(bad).data
    with pytest.raises(ValueError, match="bad.toml: not valid TOML"):
        load(bad).canonical_json()


def test_with_run_and_overrides_do_not_touch_the_original(pair_file):
    sc = load(pair_file)
    changed = sc.with_overrides({"flow.0.rate_kbps": 800.0}).with_run(seed=7, duration_s=3)
    assert changed.data["seed"] == 7 and changed.data["duration_s"] == 3.0
    assert changed.data["flow"][0]["rate_kbps"] == 800.0
    assert sc.data["flow"][0]["rate_kbps"] == 400.0 and sc.data["seed"] == 1


def test_hash_depends_on_seed_and_content(fake, pair_file):
    sc = load(pair_file)
    h1 = sc.with_run(seed=1).scenario_hash()
    assert h1 == load(pair_file).with_run(seed=1).scenario_hash()
    assert h1 != sc.with_run(seed=2).scenario_hash()
    assert h1 != sc.with_overrides({"flow.0.rate_kbps": 1.0}).with_run(seed=1).scenario_hash()
    assert len(h1) == 64
