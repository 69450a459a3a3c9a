"""The Python API over the native core."""

from __future__ import annotations

import json

import manetfair
import pytest
from manetfair.scenario import Scenario, load

pytestmark = pytest.mark.core


def test_run_accepts_path_text_dict_and_scenario(pair_file):
    by_path = manetfair.run(pair_file, duration_s=3)
    by_text = manetfair.run(pair_file.read_text(), duration_s=3)
    by_dict = manetfair.run(load(pair_file).data, duration_s=3)
    by_obj = manetfair.run(Scenario.from_file(pair_file), duration_s=3)
    flows = [r.summary["flows"] for r in (by_path, by_text, by_dict, by_obj)]
    # One scenario, one seed: the same numbers however it is given (same seed, same bytes).
    assert all(
        [f["delivered_bytes"] for f in x] == [f["delivered_bytes"] for f in flows[0]] for x in flows
    )
    assert by_path.summary["duration_s"] == 3.0


def test_overrides_seed_and_series(pair_file):
    low = manetfair.run(pair_file, seed=2, duration_s=4, flow__0__rate_kbps=80.0)
    high = manetfair.run(pair_file, seed=2, duration_s=4)
    assert low.summary["seed"] == 2
    assert low.aggregate_kbps < 100.0 < high.aggregate_kbps
    table = low.series()
    assert table.num_rows == len(low.traces["time_s"]) > 0
    assert {"time_s", "flow0_kbps", "node1_queue_pkts", "node2_busy_frac"} <= set(
        table.column_names
    )
    flows = low.flows().to_pylist()
    assert flows[0]["src"] == 1 and "series_kbps" not in flows[0]


def test_progress_is_called_with_simulated_time(pair_file):
    seen: list[tuple[float, float]] = []
    manetfair.run(pair_file, duration_s=3, progress=lambda now, end: seen.append((now, end)))
    assert seen and seen[-1] == (3.0, 3.0)
    assert [t for t, _ in seen] == sorted(t for t, _ in seen)


def test_bad_scenario_raises_scenario_error(pair_file):
    with pytest.raises(manetfair.ScenarioError):
        manetfair.run(pair_file, mac__rts_threshold_bytes="never")
    with pytest.raises(manetfair.InputError):
        manetfair.run(pair_file.parent / "missing.toml")


def test_hash_is_of_the_canonical_scenario(pair_file):
    plain = load(pair_file)
    spelled = plain.with_overrides({"mac.short_retry_limit": 7, "radio.data_rate_mbps": 2.0})
    assert plain.scenario_hash() == spelled.scenario_hash()  # defaults spelled out
    assert json.loads(plain.canonical_json())["seed"] == 1
    assert plain.scenario_hash() != plain.with_run(seed=2).scenario_hash()


def test_pcap_capture_is_a_readable_80211_trace(tmp_path):
    """The pcap has the radiotap link type and one record per frame sent."""
    import struct
    from pathlib import Path

    pcap = tmp_path / "frames.pcap"
    example = Path(__file__).resolve().parent.parent / "examples" / "chain.toml"
    result = manetfair.run(str(example), duration_s=3.0, pcap=pcap)
    data = pcap.read_bytes()
    magic, _, _, _, _, snaplen, linktype = struct.unpack("<IHHiIII", data[:24])
    assert (magic, linktype) == (0xA1B23C4D, 127)
    records, at, last_t = 0, 24, -1
    kinds = {0xB4: "rts", 0xC4: "cts", 0x08: "data", 0xD4: "ack"}
    seen: dict[str, int] = {}
    while at < len(data):
        sec, ns, incl, orig = struct.unpack("<IIII", data[at : at + 16])
        t = sec * 10**9 + ns
        assert t >= last_t and incl <= min(orig, snaplen)
        frame = data[at + 16 : at + 16 + incl]
        radiotap_len = struct.unpack("<H", frame[2:4])[0]
        kind = kinds[frame[radiotap_len]]
        seen[kind] = seen.get(kind, 0) + 1
        records, at, last_t = records + 1, at + 16 + incl, t
    sent = result.summary["mac"]["frames_sent"]
    assert records == sum(sent.values())
    assert seen == {k: v for k, v in sent.items() if v}


@pytest.mark.parametrize(
    ("text", "looks"),
    [
        ('duration_s = 5.0\n[mac]\nqueue = "red"\n', False),
        ('duration_s = 5.0\n[mac]\nqueue = "throttle"\n', True),
        ("duration_s = 5.0\n[throttle]\nenforce = false\n", True),
        # An escape could spell the key or the value: `thr\u006fttle`.
        ('duration_s = 5.0\n[mac]\nqueue = "thr\\u006fttle"\n', True),
    ],
)
def test_prepare_parses_a_file_only_where_throttling_may_be(text, looks):
    from manetfair.api import _may_throttle

    sc = Scenario.from_toml(text)
    assert _may_throttle(sc) is looks
    assert isinstance(sc.data, dict)  # parsed: from then on the dict is looked at
    assert _may_throttle(sc)


def test_a_run_result_reads_its_traces_when_asked(pair_file):
    result = manetfair.run(pair_file, duration_s=2)
    again = manetfair.api.RunResult(result.summary, json.dumps(result.traces), result.scenario)
    assert again == result and again.traces == result.traces
    assert repr(again).startswith("RunResult(summary={")
