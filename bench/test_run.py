"""Tests of the benchmark driver's scenario generation, writers and measurement.

Run with ``python3 -m pytest bench/test_run.py``.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run


def within_range(sc: run.Scenario, a: int, b: int) -> bool:
    (xa, ya), (xb, yb) = sc.positions[a], sc.positions[b]
    return math.hypot(xa - xb, ya - yb) <= run.TX_RANGE_M


def test_shortest_path_takes_lowest_id_on_ties() -> None:
    # A square 0-1-3-2-0 plus a tail 3-4: two shortest paths from 0 to 4.
    adj = [[1, 2], [0, 3], [0, 3], [1, 2, 4], [3]]
    assert run.shortest_path(adj, 0, 4) == (0, 1, 3, 4)
    assert run.shortest_path(adj, 4, 0) == (4, 3, 1, 0)
    assert run.shortest_path([[1], [0], []], 0, 2) is None


def test_add_routes_rejects_a_contradicting_next_hop() -> None:
    table: dict[tuple[int, int], int] = {}
    assert run.add_routes(table, (0, 1, 3))
    assert table[(0, 3)] == 1 and table[(3, 0)] == 1
    assert run.add_routes(table, (5, 1, 3))  # joins the same route towards 3
    assert not run.add_routes(table, (0, 2, 3))  # 0 already reaches 3 through 1
    assert (2, 3) not in table


def test_neighbours_match_brute_force() -> None:
    sc = run.scaling_scenario(100, quick=True)
    adj = run.neighbours(sc.positions, run.TX_RANGE_M)
    for i in range(sc.nodes):
        brute = [j for j in range(sc.nodes) if j != i and within_range(sc, i, j)]
        assert adj[i] == brute


def test_grid_flows_follow_rows_and_columns() -> None:
    sc = run.grid_scenario(quick=False)
    assert sc.nodes == 100 and sc.duration_s == 300.0 and sc.routing == "static"
    assert len(sc.flows) == 16
    for f in sc.flows[:8]:
        row = f.src // 10
        assert 1 <= row <= 8 and f.route == tuple(range(row * 10, row * 10 + 10))
    for f in sc.flows[8:]:
        assert 1 <= f.src <= 8 and f.route == tuple(range(f.src, 100, 10))
    assert all(1.0 <= f.start_s < 2.0 and f.stop_s == 300.0 for f in sc.flows)


def test_aodv_field_is_connected_with_distinct_pairs() -> None:
    sc = run.aodv_scenario(quick=False)
    assert sc.nodes == 50 and sc.routing == "aodv"
    assert run.is_connected(run.neighbours(sc.positions, run.TX_RANGE_M))
    pairs = [(f.src, f.dst) for f in sc.flows]
    assert len(set(pairs)) == 5 and all(s != d for s, d in pairs)
    assert all(f.route is None and (f.start_s, f.stop_s) == (10.0, 130.0) for f in sc.flows)
    assert all(0 <= x <= 1000 and 0 <= y <= 1000 for x, y in sc.positions)


@pytest.mark.parametrize("n", [100, 1000])
def test_scaling_flows_are_2_to_5_hop_shortest_paths(n: int) -> None:
    sc = run.scaling_scenario(n, quick=False)
    side = 1000.0 * math.sqrt(n / run.DENSITY_PER_KM2)
    assert sc.nodes == n and len(sc.flows) == n // 10
    assert all(0 <= x <= side and 0 <= y <= side for x, y in sc.positions)
    adj = run.neighbours(sc.positions, run.TX_RANGE_M)
    table: dict[tuple[int, int], int] = {}
    for f in sc.flows:
        assert f.route is not None and f.route[0] == f.src and f.route[-1] == f.dst
        assert 2 <= len(f.route) - 1 <= 5
        assert run.hop_distances(adj, f.src, 5)[f.dst] == len(f.route) - 1
        assert all(within_range(sc, a, b) for a, b in zip(f.route, f.route[1:]))
        assert run.add_routes(table, f.route)


def test_generation_is_deterministic() -> None:
    one = run.build_scenarios(["a", "b", "c100"], quick=False)
    two = run.build_scenarios(["a", "b", "c100"], quick=False)
    assert [run.manetfair_toml(s, 1, "x") for s in one] == [
        run.manetfair_toml(s, 1, "x") for s in two
    ]
    assert [run.ns3_input(s, 1, "x") for s in one] == [run.ns3_input(s, 1, "x") for s in two]


def test_quick_mode_renames_and_shortens() -> None:
    (sc,) = run.build_scenarios(["a"], quick=True)
    assert sc.key == "a-quick" and sc.duration_s == 30.0


def test_manetfair_file_carries_the_contract_keys() -> None:
    sc = run.grid_scenario(quick=True)
    doc = tomllib.loads(run.manetfair_toml(sc, 7, "bench-a"))
    assert doc["seed"] == 7 and doc["duration_s"] == 30.0
    assert doc["radio"]["tx_range_m"] == 250.0 and doc["radio"]["cs_range_m"] == 550.0
    assert doc["radio"]["data_rate_mbps"] == 2.0 and doc["radio"]["basic_rate_mbps"] == 1.0
    assert doc["mac"]["rts_threshold_bytes"] == 0 and doc["mac"]["queue_capacity_pkts"] == 50
    assert doc["routing"]["protocol"] == "static" and doc["topology"]["kind"] == "explicit"
    assert [(n["id"], n["x_m"], n["y_m"]) for n in doc["node"]] == [
        (i, x, y) for i, (x, y) in enumerate(sc.positions)
    ]
    for table, f in zip(doc["flow"], sc.flows):
        assert (table["src"], table["dst"], tuple(table["route"])) == (f.src, f.dst, f.route)
        assert table["transport"] == "tcp-newreno" and table["app"] == "ftp"
        assert table["packet_bytes"] == 1000


def test_ns3_input_has_both_directions_of_every_route() -> None:
    sc = run.grid_scenario(quick=True)
    lines = run.ns3_input(sc, 3, "bench-a").splitlines()
    assert "seed 3" in lines and "routing static" in lines
    hops = {tuple(map(int, line.split()[1:])) for line in lines if line.startswith("nexthop")}
    for f in sc.flows:
        assert f.route is not None
        for a, b in zip(f.route, f.route[1:]):
            assert (a, f.dst, b) in hops and (b, f.src, a) in hops
    assert sum(line.startswith("node ") for line in lines) == 100


def test_run_measured_reports_peak_memory_and_timeouts(tmp_path: Path) -> None:
    grow = "b = bytearray(80 * 2**20); b[::4096] = b'x' * len(b[::4096]); print('{\"ok\": 1}')"
    m = run.run_measured([sys.executable, "-c", grow], 60.0, tmp_path / "grow")
    assert m.status == "ok" and m.peak_rss_mb >= 80.0 and m.cpu_s > 0.0
    assert run.last_json_line(m.stdout) == {"ok": 1}
    slow = run.run_measured(
        [sys.executable, "-c", "import time; time.sleep(30)"], 0.5, tmp_path / "slow"
    )
    assert slow.status == "timeout" and slow.wall_s < 10.0
    bad = run.run_measured([sys.executable, "-c", "raise SystemExit(3)"], 60.0, tmp_path / "bad")
    assert bad.status == "failed" and bad.returncode == 3


def check_result(decode_251: int, both_at_551: int) -> dict[str, object]:
    def decode(d: float, n: int) -> dict[str, float]:
        return {
            "distance_m": d,
            "sent": 100,
            "broadcast_received": n,
            "unicast_received": n,
            "unicast_frames_sender": 2 * n if n else 700,
            "unicast_frames_receiver": 2 * n,
        }

    return {
        "decode": [decode(240, 100), decode(250, 100), decode(251, decode_251)],
        "carrier_sense": {
            "one_sender_frames": 220,
            "pairs": [
                {"distance_m": 550, "both_senders_frames": 230},
                {"distance_m": 551, "both_senders_frames": both_at_551},
            ],
        },
    }


def test_range_check_verdict() -> None:
    assert "**PASS**" in "\n".join(run.check_section(check_result(0, 440)))
    assert "**FAIL**" in "\n".join(run.check_section(check_result(100, 440)))
    assert "**FAIL**" in "\n".join(run.check_section(check_result(0, 230)))


def test_ratio_is_a_bound_when_ns3_did_not_finish() -> None:
    sc = run.scaling_scenario(100, quick=True)  # 10 simulated s
    unfinished = run.RunRecord("ns3", sc.key, 1, "x", "timeout", "did not finish in 600 s")
    unfinished.summary = {"simulated_s_reached": 2.0}
    done = run.RunRecord("manetfair", sc.key, 1, "x", "ok", "", 3.0, 30.0, {"events": 1})
    done.cpu_s = 3.0
    records = {("ns3", sc.key): [unfinished], ("manetfair", sc.key): [done]}
    stats = {sim: run.sim_stats(records[(sim, sc.key)], sc) for sim in ("ns3", "manetfair")}
    wall, cpu, mem = run.speed_ratios(records, sc, stats, 600.0)
    # More than 600 / 3 = 200; about 600 * 10 / 2 / 3 = 1000 for the whole run.
    assert wall == "> 200.00 (≈ 1,000)"
    assert cpu == "–" and mem == "–"


def test_last_json_line_reads_pretty_and_trailing_documents() -> None:
    pretty = '{\n  "events": 5,\n  "mac": {"rts": 0}\n}\n'
    assert run.last_json_line(pretty) == {"events": 5, "mac": {"rts": 0}}
    assert run.last_json_line('log line\n{"events": 7}\n') == {"events": 7}
    assert run.last_json_line("no json here") is None


def test_watch_scenarios_carry_their_remedy_and_mobility() -> None:
    d, e = run.build_scenarios(["d", "e"], quick=False)
    assert d.watch and e.watch and not d.fidelity and not e.fidelity
    grid = run.grid_scenario(quick=False)
    doc = tomllib.loads(run.manetfair_toml(d, 1, "bench-d"))
    assert doc["mac"]["queue"] == "nred" and "mobility" not in doc
    assert (d.positions, d.flows) == (grid.positions, grid.flows)
    doc = tomllib.loads(run.manetfair_toml(e, 1, "bench-e"))
    assert doc["mac"]["queue"] == "droptail" and doc["routing"]["protocol"] == "aodv"
    assert doc["mobility"] == {"random_waypoint": {"speed_max_mps": 10.0}}
    assert e.nodes == 100 and len({(f.src, f.dst) for f in e.flows}) == 10
    assert all(f.route is None and (f.start_s, f.stop_s) == (10.0, 130.0) for f in e.flows)
    side = 1000.0 * math.sqrt(100 / run.DENSITY_PER_KM2)
    assert all(0 <= x <= side and 0 <= y <= side for x, y in e.positions)


def test_watch_history_compares_the_latest_run_with_the_one_before() -> None:
    (sc,) = run.build_scenarios(["d"], quick=True)

    def rec(events: int, cpu: float) -> run.RunRecord:
        r = run.RunRecord("manetfair", sc.key, 1, "x", "ok", "", cpu, 30.0, {"events": events})
        r.cpu_s, r.load_avg = cpu, 1.0
        return r

    history = run.update_watch([sc], {("manetfair", sc.key): [rec(1000, 2.0)]}, "v1", {})
    assert history[sc.key][0]["events_per_cpu_s"] == 500
    assert "| – | – | – | – |" in "\n".join(run.watch_lines([sc], history))
    history = run.update_watch([sc], {("manetfair", sc.key): [rec(1000, 2.5)]}, "v2", history)
    assert [h["manetfair"] for h in history[sc.key]] == ["v1", "v2"]
    # 400 events per CPU second against 500: 20 % slower.
    assert "-20.0 %" in "\n".join(run.watch_lines([sc], history))
    # A scenario without a finished run adds nothing.
    assert run.update_watch([sc], {}, "v3", history) == history


def test_report_only_without_stored_runs_keeps_results_md(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text("committed report\n")
    monkeypatch.setattr(run, "OUT_DIR", tmp_path / "out")
    monkeypatch.setattr(run, "RESULTS_MD", results)
    assert run.main(["--report-only", "--quick"]) == 1
    assert results.read_text() == "committed report\n"


def _git_repo(path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")


def test_source_commit_only_for_a_checkout_of_this_repository(tmp_path: Path) -> None:
    # A wheel in a site-packages that happens to sit in some other git work tree
    # (a pyenv checkout) has no source commit; a checkout of this repository has.
    other = tmp_path / "other"
    (other / "lib" / "manetfair").mkdir(parents=True)
    _git_repo(other)
    assert run.source_commit(other / "lib" / "manetfair") is None
    assert run.source_commit(tmp_path) is None  # no git work tree at all
    ours = tmp_path / "ours"
    (ours / "crates" / "core").mkdir(parents=True)
    (ours / "python" / "manetfair").mkdir(parents=True)
    _git_repo(ours)
    commit = run.source_commit(ours / "python" / "manetfair")
    assert commit is not None and len(commit.split()[0]) >= 7


def test_package_dir_asks_the_commands_own_interpreter(tmp_path: Path) -> None:
    pkg = tmp_path / "site" / "manetfair"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    script = tmp_path / "python-with-site"
    script.write_text(
        f'#!/bin/sh\nPYTHONPATH={tmp_path / "site"} exec {sys.executable} "$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    assert run.package_dir([str(script), "-m", "manetfair"]) == pkg
    entry = tmp_path / "manetfair"
    entry.write_text(f"#!{script}\n", encoding="utf-8")
    entry.chmod(0o755)
    assert run.package_dir([str(entry)]) == pkg
    assert run.package_dir([str(tmp_path / "missing")]) is None


@pytest.mark.skipif(not run.GNU_TIME.exists(), reason="needs GNU time (Debian's `time`)")
def test_peak_rss_is_the_simulators_own_not_the_drivers(tmp_path: Path) -> None:
    # A process forked from this interpreter keeps its high-water mark across exec:
    # wait4 would report at least this test process's size for a program of 1 MB.
    import resource

    ballast = bytearray(64 << 20)  # this driver: over 64 MB
    m = run.run_measured(["true"], 30.0, tmp_path / "true")
    del ballast
    assert m.status == "ok" and m.rss_method == "own process"
    assert m.peak_rss_mb < 16
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 > 64
