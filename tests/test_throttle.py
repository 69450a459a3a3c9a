"""Ingress throttling from the front door: shares, reference throughputs, the
`shares` command and its tc commands (docs/throttle.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import no_traceback, run_cli

pytestmark = pytest.mark.core

# Figure 7 of Osipov and Tschudin (2007), as rebuilt in docs/throttle.md: a 126 m
# lattice with 250 m L-regions; TCP1 4 hops, TCP2 3, TCP3 1, TCP4 2.
FIG7 = """
name = "fig7"
duration_s = 20.0
[radio]
cs_range_m = 500.0
[mac]
rts_threshold_bytes = 3000
[tcp]
delayed_ack = false
[throttle]
[topology]
kind = "explicit"
{nodes}
[[flow]]
src = 1
dst = 5
packet_bytes = 600
route = [1, 2, 3, 4, 5]
[[flow]]
src = 6
dst = 9
packet_bytes = 600
route = [6, 7, 8, 9]
[[flow]]
src = 10
dst = 11
packet_bytes = 600
route = [10, 11]
[[flow]]
src = 12
dst = 14
packet_bytes = 600
route = [12, 13, 14]
"""
COORDS = {
    1: (0, 0), 2: (126, 0), 3: (252, 0), 4: (378, 0), 5: (504, 0),
    6: (-252, -126), 7: (-126, -126), 8: (0, -126), 9: (126, -126),
    10: (0, 126), 11: (126, 126),
    12: (504, -126), 13: (630, -126), 14: (756, -126),
}  # fmt: skip


def fig7_text() -> str:
    nodes = "\n".join(
        f"[[node]]\nid = {i}\nx_m = {x}.0\ny_m = {y}.0" for i, (x, y) in COORDS.items()
    )
    return FIG7.format(nodes=nodes)


def test_shares_of_figure_7_are_one_third_and_two_thirds():
    import manetfair

    report = manetfair.shares(fig7_text())
    assert [f["phi_exact"] for f in report["flows"]] == ["1/3", "1/3", "1/3", "2/3"]
    assert [f["iteration"] for f in report["flows"]] == [1, 1, 1, 2]
    # L-region 1 (centres 1, 2, 3) bottlenecks TCP1-3; L-region 2 (4, 5, 12, 13) TCP4.
    assert report["flows"][0]["bottleneck"] == [1, 2, 3]
    assert report["flows"][3]["bottleneck"] == [4, 5, 12, 13]
    assert report["flows"][3]["hops"] == 2
    # Without a Thr_max table there is no rate limit yet.
    assert report["flows"][0]["rate_kbps"] is None


def test_references_are_measured_once_and_give_rate_and_spacing(tmp_path):
    from manetfair import throttle
    from manetfair.scenario import load
    from manetfair.store import ResultsStore

    text = fig7_text().replace(
        "[throttle]", "[throttle]\nthr_max_seeds = 1\nthr_max_warmup_s = 4.0"
    )
    with ResultsStore(tmp_path / "s.duckdb") as store:
        done, refs = throttle.measure_references([load(text)], store)
        runs = store.count()
        # Thr_max for 1-4 hops and Thr_alone for the 4 flows, one seed each.
        assert runs == 8
        assert sorted((r.what, r.key) for r in refs) == [
            ("thr_alone", 0), ("thr_alone", 1), ("thr_alone", 2), ("thr_alone", 3),
            ("thr_max", 1), ("thr_max", 2), ("thr_max", 3), ("thr_max", 4),
        ]  # fmt: skip
        again, _ = throttle.measure_references([load(text)], store)
        assert store.count() == runs, "the calibration runs come from the store"
    table = done[0].data["throttle"]
    assert again[0].data["throttle"] == table
    thr = {int(k): v for k, v in table["thr_max_kbps"].items()}
    # One flow's throughput falls with its hop count (and is positive).
    assert thr[1] > thr[2] > thr[3] > thr[4] > 0
    spacing = refs[-1].settings["spacing_m"]
    assert spacing == pytest.approx(126.0)
    report = throttle.report(done[0])
    tcp4 = report["flows"][3]
    assert tcp4["rate_kbps"] == pytest.approx(thr[2] * 2 / 3)
    assert tcp4["delta_s"] == pytest.approx(600 * 8 / (tcp4["rate_kbps"] * 1000), rel=1e-6)
    assert tcp4["thr_opt_kbps"] == pytest.approx(table["thr_alone_kbps"][3] * 2 / 3)


def test_a_shaped_run_reports_u_against_the_ideal(tmp_path):
    import manetfair

    text = (
        fig7_text()
        .replace(
            "[throttle]",
            "[metrics]\nwarmup_s = 4.0\n[throttle]\nthr_max_seeds = 1\nthr_max_warmup_s = 4.0",
        )
        .replace("rts_threshold_bytes = 3000", 'rts_threshold_bytes = 3000\nqueue = "throttle"')
    )
    result = manetfair.run(text)
    section = result.summary["throttle"]
    assert section["shaping"] is True
    opt = [f["thr_opt_kbps"] for f in section["flows"]]
    act = [f["throughput_kbps"] for f in result.summary["flows"]]
    expected = sum((o - a) ** 2 for o, a in zip(opt, act)) ** 0.5 / sum(o * o for o in opt) ** 0.5
    assert section["u"] == pytest.approx(expected)
    # Shaped flows stay at or under their rate limits.
    for f, a in zip(section["flows"], act):
        assert a <= f["rate_kbps"] * 1.02


def test_the_summary_and_the_claims_give_one_u_against_max_min_shares():
    """eq. (4) against the allocator's max-min shares: the summary's
    `maxmin_unfairness` and a claim's `unfairness` measure with `share = "maxmin"`
    and each flow alone as its optimum are one number; `equal_share_unfairness`
    (its old name `unfairness_index`) is another, the spread alone."""
    import manetfair
    from manetfair import claims

    text = fig7_text().replace(
        "[throttle]",
        "[metrics]\nwarmup_s = 4.0\n[throttle]\nthr_max_seeds = 1\nthr_max_warmup_s = 4.0",
    )
    s = manetfair.run(text).summary
    run = claims.Run({}, 1, s)
    alone = [{"field": f"throttle.flows.{i}.thr_alone_kbps"} for i in range(4)]
    measure = {"unfairness": {"field": "flows.*.throughput_kbps"}, "optimal": alone}
    u = claims.measure_value({**measure, "share": "maxmin"}, [run], {})
    assert s["maxmin_unfairness"] == pytest.approx(u, rel=1e-12)
    assert s["maxmin_unfairness"] == s["throttle"]["u"]
    # The shares are the allocator's 1/3, 1/3, 1/3, 2/3, not 1/4 each.
    listed = claims.measure_value({**measure, "share": [1 / 3, 1 / 3, 1 / 3, 2 / 3]}, [run], {})
    assert u == pytest.approx(listed, rel=1e-9)
    assert claims.measure_value(measure, [run], {}) != pytest.approx(u, rel=1e-3)
    # The equal-share form measures the spread: Jain = 1 / (1 + u²).
    assert s["equal_share_unfairness"] == s["unfairness_index"]
    assert s["jain_index"] == pytest.approx(1 / (1 + s["equal_share_unfairness"] ** 2))
    assert s["equal_share_unfairness"] != pytest.approx(u, rel=1e-3)


def test_maxmin_share_needs_the_allocator():
    from manetfair import claims
    from manetfair.errors import InputError

    run = claims.Run({}, 1, {"flows": [{"throughput_kbps": 1.0}, {"throughput_kbps": 2.0}]})
    measure = {
        "unfairness": {"field": "flows.*.throughput_kbps"},
        "optimal": {"field": "flows.0.throughput_kbps"},
        "share": "maxmin",
    }
    with pytest.raises(InputError, match="throttle"):
        claims.measure_value(measure, [run], {})


def test_a_sweep_measures_the_references_of_a_throttled_scenario(tmp_path):
    """The generic runner knows no remedy: `sweep` itself has the reference runs made
    (throttle.complete), through the same store, before the sweep's own runs."""
    import manetfair
    from manetfair.store import ResultsStore

    text = (
        fig7_text()
        .replace("[throttle]", "[throttle]\nthr_max_seeds = 1\nthr_max_warmup_s = 4.0")
        .replace("rts_threshold_bytes = 3000", 'rts_threshold_bytes = 3000\nqueue = "throttle"')
    )
    store = tmp_path / "s.duckdb"
    frame = manetfair.sweep(text, {}, seeds=1, store=store, jobs=1)
    assert len(frame) == 1
    with ResultsStore(store) as st:
        # Thr_max for 1-4 hops and Thr_alone for the 4 flows, then the shaped run.
        assert st.count() == 9


def _tc_lines(tmp_path: Path, *extra: str) -> list[str]:
    scenario = tmp_path / "fig7.toml"
    scenario.write_text(
        fig7_text().replace("[throttle]", "[throttle]\nthr_max_kbps = {1 = 1044.0, 2 = 533.0, "
                            "3 = 360.0, 4 = 266.0}"),
        encoding="utf-8",
    )  # fmt: skip
    proc = run_cli(["shares", str(scenario), "--tc", *extra], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_tc_commands_have_the_expected_form(tmp_path):
    lines = _tc_lines(tmp_path, "--no-measure", "--dev", "wlan1")
    commands = [line.split() for line in lines if line and not line.startswith("#")]
    # Four sources, one flow each: per source a root, a default class, and a class,
    # a leaf queue and a filter per flow.
    assert sum(c[:2] == ["qdisc", "replace"] for c in commands) == 4
    classes = [
        c for c in commands if c[:2] == ["class", "add"] and c[c.index("classid") + 1] != "1:1"
    ]
    assert len(classes) == 4
    for c in commands:
        assert c[2:4] == ["dev", "wlan1"]
    # TCP4 (node 12 -> 14): r = 533 * 2/3 of payload, in IP bytes (600 + 40) / 600.
    tcp4 = classes[3]
    rate = tcp4[tcp4.index("rate") + 1]
    assert rate == f"{533.0 * 2 / 3 * 640 / 600:.0f}kbit"
    assert tcp4[tcp4.index("burst") + 1] == "640b"
    filters = [c for c in commands if c[0] == "filter"]
    # Node 1 gets 10.0.0.1, so node 14 is 10.0.0.14.
    assert filters[3][filters[3].index("dst") + 1] == "10.0.0.14/32"


def _can_run_tc_unprivileged() -> bool:
    if shutil.which("unshare") is None or shutil.which("tc") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rn", "tc", "qdisc", "show", "dev", "lo"], capture_output=True, check=False
    )
    return probe.returncode == 0


@pytest.mark.skipif(
    not _can_run_tc_unprivileged(),
    reason="needs tc (apt-get install iproute2) and unprivileged user namespaces (unshare -rn)",
)
def test_tc_commands_pass_iproute2(tmp_path):
    """Each source's block is applied by iproute2's own parser (tc -batch) to the
    loopback device of a fresh network namespace, where no privileges are needed."""
    lines = _tc_lines(tmp_path, "--no-measure", "--dev", "lo")
    blocks: list[list[str]] = []
    for line in lines:
        if line.startswith("# node"):
            blocks.append([])
        blocks[-1].append(line)
    assert len(blocks) == 4
    for block in blocks:
        batch = tmp_path / "tc.batch"
        batch.write_text("\n".join(block) + "\n", encoding="utf-8")
        proc = subprocess.run(
            ["unshare", "-rn", "sh", "-c", f"tc -batch {batch} && tc class show dev lo"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert "htb 1:11" in proc.stdout


def test_shares_command_text_json_and_bad_input(tmp_path):
    scenario = tmp_path / "fig7.toml"
    scenario.write_text(fig7_text(), encoding="utf-8")
    proc = run_cli(["shares", str(scenario), "--no-measure", "--json"], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [f["phi"] for f in report["flows"]] == pytest.approx([1 / 3, 1 / 3, 1 / 3, 2 / 3])
    text = run_cli(["shares", str(scenario), "--no-measure"], fake=False, cwd=tmp_path)
    assert "2/3" in text.stdout and "bottleneck" in text.stdout
    bad = run_cli(
        ["shares", str(scenario), "--no-measure", "--param", "throttle.l_region_range_m=-1"],
        fake=False,
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and no_traceback(bad)
    assert "throttle.l_region_range_m" in bad.stderr


def test_reproduce_table1_quick(tmp_path):
    """Table 1 in quick mode: both arms run, the throttled static flows sit at a
    quarter of the measured Thr_max(3), and the mobile flow's shares follow it."""
    proc = run_cli(
        ["reproduce", "throttle-table1", "--quick", "--json", "--quiet", "--jobs", "2",
         "--store", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "report")],
        fake=False,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (exp,) = json.loads(proc.stdout)["experiments"]
    on = [r["summary"] for r in exp["runs"] if r["axes"]["throttle"] == "on"]
    assert on and all(s["throttle"]["shaping"] for s in on)
    section = on[0]["throttle"]
    # Once all four flows run, each gets 1/4; the mobile flow's hops follow its route.
    last = section["updates"][-1]
    assert last["phi"] == [0.25] * 4 and last["hops"] == [3, 3, 3, 1]
    verdicts = {c["what"]: c for c in exp["claims"]}
    fair = next(v for w, v in verdicts.items() if "sit at their fair share" in w)
    assert fair["holds"], fair
