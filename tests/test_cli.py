"""The `manetfair` command end to end, in subprocesses.

Most tests run twice: with the stand-in core (`fake`), which checks the front door's
own behaviour, and with the native module (`core`), skipped while it lacks
run_scenario.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import cli_command, no_traceback, run_cli

BACKENDS = [pytest.param(True, id="fake"), pytest.param(False, id="core", marks=pytest.mark.core)]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("fake", BACKENDS)
def test_run_json_prints_one_summary(fake, tmp_path, pair_file):
    proc = run_cli(
        [
            "run",
            str(pair_file),
            "--seed",
            "3",
            "--duration",
            "4",
            "--json",
            "--out",
            str(tmp_path / "out"),
        ],
        fake=fake,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)  # exactly one document: json.loads rejects extra data
    assert summary["seed"] == 3 and summary["duration_s"] == 4.0
    for key in (
        "name",
        "wall_s",
        "events",
        "flows",
        "aggregate_kbps",
        "jain_index",
        "mac",
        "drops",
        "ledger",
    ):
        assert key in summary
    flow = summary["flows"][0]
    assert (flow["src"], flow["dst"], flow["transport"]) == (1, 2, "udp")
    assert json.loads((tmp_path / "out" / "summary.json").read_text()) == summary
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "out" / "series.parquet")
    assert "time_s" in table.column_names and "flow0_kbps" in table.column_names
    assert (tmp_path / "out" / "series.csv").stat().st_size > 0


@pytest.mark.parametrize("fake", BACKENDS)
def test_run_text_output_and_param_override(fake, tmp_path, pair_file):
    proc = run_cli(
        ["run", str(pair_file), "--duration", "3", "--param", "flow.0.rate_kbps=50"],
        fake=fake,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "aggregate" in proc.stdout and "Jain" in proc.stdout


@pytest.mark.parametrize("fake", BACKENDS)
def test_check_good_file(fake, tmp_path, pair_file):
    proc = run_cli(["check", str(pair_file)], fake=fake, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "valid" in proc.stdout


BAD_FILES = {
    "unknown_key": ('colour = "red"\n', "colour"),
    "wrong_type": ('duration_s = "long"\n', "duration_s"),
    "not_toml": ("this is not = = toml\n[[[\n", "not valid TOML"),
}


@pytest.mark.parametrize("fake", BACKENDS)
@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_check_bad_file_exits_2_naming_file_and_key(fake, case, tmp_path, pair_file):
    extra, expected = BAD_FILES[case]
    bad = tmp_path / f"{case}.toml"
    text = pair_file.read_text()
    if case == "wrong_type":
        text = text.replace("duration_s = 5.0\n", "")
    bad.write_text(extra + text)
    for command in (["check", str(bad)], ["run", str(bad), "--json"]):
        proc = run_cli(command, fake=fake, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert no_traceback(proc)
        assert expected in proc.stderr
        assert proc.stdout == ""
    if case != "not_toml":
        assert "unknown_key" in proc.stderr or "wrong_type" in proc.stderr  # names the file


RANDOM_FIELD = """duration_s = 5.0
[topology]
kind = "random"
nodes = 40
width_m = 800.0
height_m = 800.0
[traffic.random_pairs]
"""


@pytest.mark.core
def test_random_pairs_run_and_a_bad_count_exits_2_naming_the_key(tmp_path):
    good = tmp_path / "pairs.toml"
    good.write_text(RANDOM_FIELD + 'count = 3\ntransport = "udp"\napp = "cbr"\nrate_kbps = 50.0\n')
    proc = run_cli(["run", str(good), "--json"], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    flows = json.loads(proc.stdout)["flows"]
    assert len(flows) == 3 and len({f["src"] for f in flows} | {f["dst"] for f in flows}) == 6
    bad = tmp_path / "bad.toml"
    bad.write_text(RANDOM_FIELD + "count = 21\n")
    for command in (["check", str(bad)], ["run", str(bad), "--json"]):
        proc = run_cli(command, fake=False, cwd=tmp_path)
        assert proc.returncode == 2 and no_traceback(proc), proc.stderr
        assert "traffic.random_pairs.count" in proc.stderr and "21" in proc.stderr


@pytest.mark.parametrize("fake", BACKENDS)
def test_missing_file_and_bad_arguments_exit_2(fake, tmp_path):
    proc = run_cli(["check", str(tmp_path / "nope.toml")], fake=fake, cwd=tmp_path)
    assert proc.returncode == 2 and no_traceback(proc) and "nope.toml" in proc.stderr
    proc = run_cli(["run", str(tmp_path / "nope.toml"), "--json"], fake=fake, cwd=tmp_path)
    assert proc.returncode == 2 and no_traceback(proc) and proc.stdout == ""
    proc = run_cli(["run", "x.toml", "--seed", "minus"], fake=fake, cwd=tmp_path)
    assert proc.returncode == 2 and no_traceback(proc) and "--seed" in proc.stderr
    proc = run_cli(["sweep", "x.toml"], fake=fake, cwd=tmp_path)
    assert proc.returncode == 2 and "--seeds" in proc.stderr


def test_experiments_lists_every_contract_id(tmp_path):
    contract_ids = [
        "nred-fig2",
        "nred-fig6",
        "nred-fig7",
        "nred-fig10",
        "nred-fig11",
        "nred-fig12",
        "nred-fig13",
        "nred-fig14",
        "nred-fig16",
        "nred-fig18",
        "nred-fig19",
        "nred-fig20",
        "throttle-table1",
        "throttle-fig6",
        "throttle-fig7",
        "throttle-table2",
        "mtcp-fig3",
        "mtcp-fig4",
        "mtcp-fig5",
        "mtcp-fig6",
        "mtcp-fig7",
        "mtcp-table3",
        "selfcontention-fig5",
        "selfcontention-fig6",
        "selfcontention-table1",
        "selfcontention-table2",
        "opet-fig2",
        "opet-fig3",
        "opet-fig10",
        "opet-fig11",
        "opet-fig12",
        "opet-table1",
    ]
    proc = run_cli(["experiments", "--json"], fake=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    listing = {e["id"]: e for e in json.loads(proc.stdout)["experiments"]}
    assert set(contract_ids) <= set(listing)
    assert listing["validate-bianchi"]["available"] is True
    for exp_id in contract_ids:
        entry = listing[exp_id]
        assert entry["figure"] and entry["description"] and entry["paper"].endswith(".txt")
    assert listing["nred-fig10"]["paper"] == "000_b13f657ee131074d.txt"
    assert listing["nred-fig10"]["title"] == "Xu et al. 2003, Neighborhood RED"
    text = run_cli(["experiments"], fake=True, cwd=tmp_path)
    assert text.returncode == 0
    assert any(
        line.startswith("validate-bianchi") and " yes " in line for line in text.stdout.splitlines()
    )
    # A reader sees the paper's authors, year and title, not the file name of its text.
    (mtcp,) = [line for line in text.stdout.splitlines() if line.startswith("mtcp-fig3 ")]
    assert "Yahia and Bíró 2007, M-TCP" in mtcp and ".txt" not in text.stdout


def test_reproduce_unknown_and_unavailable_ids(tmp_path):
    proc = run_cli(
        ["reproduce", "nred-fig99", "--store", str(tmp_path / "s.duckdb")], fake=True, cwd=tmp_path
    )
    assert proc.returncode == 2 and no_traceback(proc) and "nred-fig99" in proc.stderr
    unavailable = [
        e["id"]
        for e in json.loads(run_cli(["experiments", "--json"], fake=True, cwd=tmp_path).stdout)[
            "experiments"
        ]
        if not e["available"]
    ]
    proc = run_cli(
        ["reproduce", unavailable[0], "--store", str(tmp_path / "s.duckdb")],
        fake=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 1 and no_traceback(proc)
    assert "not yet available" in proc.stderr and unavailable[0] in proc.stderr


def check_section4(doc, runs_per_variant):
    assert set(doc) == {"experiments"}
    for exp in doc["experiments"]:
        assert {"id", "paper", "runs", "claims"} <= set(exp)
        if not exp["available"]:
            assert exp["runs"] == [] and exp["claims"] == [] and exp["reason"]
            continue
        variants = {json.dumps(r["variant"], sort_keys=True) for r in exp["runs"]}
        assert len(exp["runs"]) == len(variants) * runs_per_variant
        for run in exp["runs"]:
            assert isinstance(run["variant"], dict) and isinstance(run["seed"], int)
            assert {"flows", "aggregate_kbps", "jain_index", "ledger"} <= set(run["summary"])
        for claim in exp["claims"]:
            assert isinstance(claim["what"], str) and isinstance(claim["holds"], bool)
            assert isinstance(claim["paper"], float) and isinstance(claim["measured"], float)


def test_reproduce_all_quick_json_report_and_store_reuse(tmp_path):
    store = tmp_path / "s.duckdb"
    counter = tmp_path / "count"
    env = {"FAKE_CORE_COUNTER": str(counter)}
    args = [
        "reproduce",
        "--quick",
        "--seeds",
        "2",
        "--json",
        "--out",
        str(tmp_path / "rep"),
        "--store",
        str(store),
        "--jobs",
        "1",
    ]
    proc = run_cli(args, fake=True, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    check_section4(doc, runs_per_variant=2)
    by_id = {e["id"]: e for e in doc["experiments"]}
    bianchi = by_id["validate-bianchi"]
    assert len(bianchi["runs"]) == 24 and len(bianchi["claims"]) == 12
    assert not any(r["cached"] for r in bianchi["runs"])
    assert by_id["nred-fig10"]["available"] is False
    simulated = len(counter.read_text().splitlines())
    assert simulated == 24

    report = tmp_path / "rep"
    for name in ("index.html", "index.md", "validate-bianchi.html", "validate-bianchi.md"):
        assert (report / name).stat().st_size > 0
    png = (report / "validate-bianchi.png").read_bytes()
    assert png.startswith(PNG_MAGIC) and len(png) > 5000
    index = (report / "index.md").read_text()
    assert "validate-bianchi" in index and "not yet available" in index
    assert "holds" in (report / "validate-bianchi.md").read_text()

    again = run_cli(args, fake=True, cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    doc2 = json.loads(again.stdout)
    runs2 = {e["id"]: e for e in doc2["experiments"]}["validate-bianchi"]["runs"]
    assert all(r["cached"] for r in runs2)
    assert [r["summary"] for r in runs2] == [r["summary"] for r in bianchi["runs"]]
    assert len(counter.read_text().splitlines()) == simulated  # nothing simulated again


def test_sweep_grid_json_and_export(tmp_path, pair_file):
    store = tmp_path / "s.duckdb"
    args = [
        "sweep",
        str(pair_file),
        "--param",
        "flow.0.rate_kbps=100,200,300",
        "--param",
        "mac.rts_threshold_bytes=0,3000",
        "--seeds",
        "2",
        "--json",
        "--store",
        str(store),
        "--jobs",
        "1",
    ]
    proc = run_cli(args, fake=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert len(doc["runs"]) == 12 and len(doc["points"]) == 6
    rates = sorted({r["variant"]["flow.0.rate_kbps"] for r in doc["runs"]})
    assert rates == [100, 200, 300]
    point = doc["points"][0]
    assert point["seeds"] == 2 and point["aggregate_kbps"]["mean"] > 0
    out = run_cli(
        ["export", "--format", "csv", "--out", str(tmp_path / "x"), "--store", str(store)],
        fake=True,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = (tmp_path / "x" / "runs.csv").read_text().splitlines()
    assert len(lines) == 13  # header + 12 runs
    missing = run_cli(
        ["export", "--out", str(tmp_path / "y"), "--store", str(tmp_path / "none.duckdb")],
        fake=True,
        cwd=tmp_path,
    )
    assert missing.returncode == 2 and no_traceback(missing)


def test_store_env_var_is_the_default_store(tmp_path, pair_file):
    store = tmp_path / "env.duckdb"
    proc = run_cli(
        ["sweep", str(pair_file), "--param", "flow.0.rate_kbps=100", "--seeds", "1", "--jobs", "1"],
        fake=True,
        cwd=tmp_path,
        env={"MANETFAIR_STORE": str(store)},
    )
    assert proc.returncode == 0, proc.stderr
    assert store.exists() and not (tmp_path / "manetfair-results.duckdb").exists()


def test_sweep_resumes_after_being_killed(tmp_path, pair_file):
    store = tmp_path / "s.duckdb"
    counter = tmp_path / "count"
    args = [
        "sweep",
        str(pair_file),
        "--param",
        "flow.0.rate_kbps=100,200",
        "--seeds",
        "4",
        "--store",
        str(store),
        "--jobs",
        "1",
    ]
    env = {**os.environ, "FAKE_CORE_DELAY_S": "0.4", "FAKE_CORE_COUNTER": str(counter)}
    env.pop("MANETFAIR_STORE", None)
    proc = subprocess.Popen(
        cli_command(args, fake=True),
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    finished = []
    deadline = time.monotonic() + 60
    assert proc.stderr is not None
    while len(finished) < 3 and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if "(simulated" in line:
            finished.append(line.rsplit("run ", 1)[1].strip(" )\n"))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert len(finished) == 3, "the sweep did not report three finished runs"

    again = run_cli(
        [*args, "--json"], fake=True, cwd=tmp_path, env={"FAKE_CORE_COUNTER": str(counter)}
    )
    assert again.returncode == 0, again.stderr
    runs = json.loads(again.stdout)["runs"]
    assert len(runs) == 8
    cached = {r["run_id"][:12] for r in runs if r["cached"]}
    assert set(finished) <= cached  # every run finished before the kill is reused
    simulated_again = [r for r in runs if not r["cached"]]
    assert len(simulated_again) == 8 - len(cached)
    assert len({r["run_id"] for r in runs}) == 8
    # Each simulation ever started is counted once: the killed process's (at most one
    # unfinished run beyond the stored ones) plus the second process's.
    assert len(counter.read_text().splitlines()) <= 8 + 1


@pytest.mark.core
def test_reproduce_quick_validation_experiments_with_the_core(tmp_path):
    proc = run_cli(
        [
            "reproduce",
            "validate-bianchi",
            "validate-chain",
            "--quick",
            "--json",
            "--out",
            str(tmp_path / "rep"),
            "--store",
            str(tmp_path / "s.duckdb"),
        ],
        fake=False,
        cwd=tmp_path,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    check_section4(doc, runs_per_variant=3)
    bianchi, chain = doc["experiments"]
    assert bianchi["id"] == "validate-bianchi" and len(bianchi["claims"]) == 12
    for run in bianchi["runs"]:
        assert run["summary"]["ledger"]["balanced"] is True
        assert len(run["summary"]["flows"]) == run["axes"]["stations"]
        assert run["variant"]["layout.stations"] == run["axes"]["stations"]
        assert run["summary"]["duration_s"] == 15.0
    assert chain["id"] == "validate-chain" and len(chain["runs"]) == 24
    for run in chain["runs"]:
        assert run["summary"]["flows"][0]["hops"] == run["axes"]["hops"]
    failing = [c for e in (bianchi, chain) for c in e["claims"] if not c["holds"]]
    assert not failing, failing
    for exp_id in ("validate-bianchi", "validate-chain"):
        assert (tmp_path / "rep" / f"{exp_id}.png").read_bytes().startswith(PNG_MAGIC)


@pytest.mark.core
@pytest.mark.slow
def test_reproduce_full_validation_claims_hold(tmp_path):
    proc = run_cli(
        [
            "reproduce",
            "validate-bianchi",
            "validate-chain",
            "--json",
            "--out",
            str(tmp_path / "rep"),
            "--store",
            str(tmp_path / "s.duckdb"),
        ],
        fake=False,
        cwd=tmp_path,
        timeout=3600,
    )
    assert proc.returncode == 0, proc.stderr
    bianchi, chain = json.loads(proc.stdout)["experiments"]
    assert len(bianchi["runs"]) == 12 * 10 and len(chain["runs"]) == 8 * 10
    failing = [c for e in (bianchi, chain) for c in e["claims"] if not c["holds"]]
    assert not failing, failing


@pytest.mark.core
def test_run_imports_neither_the_batch_machinery_nor_rich(tmp_path, pair_file):
    # A run's start-up is part of what its user waits for, and of the ns-3 ratios
    # (bench/RESULTS.md): `manetfair run` printing JSON to a pipe needs the scenario
    # and the core, not the runner's multiprocessing, the store's DuckDB or rich.
    heavy = ("multiprocessing", "duckdb", "rich", "matplotlib", "manetfair.runner")
    code = (
        "import sys\n"
        "from manetfair.cli import main\n"
        f"code = main(['run', {str(pair_file)!r}, '--duration', '2', '--json'])\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["duration_s"] == 2.0
    assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr


def test_entry_point_is_installed():
    import shutil

    exe = shutil.which("manetfair")
    if exe is None:
        pytest.skip("manetfair is not installed as a command in this environment")
    assert Path(exe).exists()


@pytest.mark.core
def test_reproduce_quick_opet_baseline_with_the_core(tmp_path):
    proc = run_cli(
        [
            "reproduce",
            "opet-fig2",
            "opet-fig3",
            "--quick",
            "--seeds",
            "1",
            "--json",
            "--out",
            str(tmp_path / "rep"),
            "--store",
            str(tmp_path / "s.duckdb"),
        ],
        fake=False,
        cwd=tmp_path,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    check_section4(doc, runs_per_variant=1)
    fig2, fig3 = doc["experiments"]
    assert sorted({r["axes"]["flows"] for r in fig2["runs"]}) == [1, 2, 3, 4, 5, 6]
    assert fig3["runs"][0]["variant"] == {} and len(fig3["runs"][0]["summary"]["flows"]) == 6
    assert all(f["src"] == 1 and f["dst"] == 9 for f in fig3["runs"][0]["summary"]["flows"])
    assert len(fig3["claims"]) == 2 and isinstance(fig3["claims"][0]["measured"], float)
    for exp_id in ("opet-fig2", "opet-fig3"):
        assert (tmp_path / "rep" / f"{exp_id}.png").read_bytes().startswith(PNG_MAGIC)


@pytest.mark.core
def test_reproduce_quick_baseline_arms_with_the_core(tmp_path):
    proc = run_cli(
        [
            "reproduce",
            "mtcp-table3",
            "opet-fig10",
            "--quick",
            "--seeds",
            "1",
            "--json",
            "--out",
            str(tmp_path / "rep"),
            "--store",
            str(tmp_path / "s.duckdb"),
        ],
        fake=False,
        cwd=tmp_path,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    check_section4(doc, runs_per_variant=1)
    mtcp, fig10 = doc["experiments"]
    # Every row of Table 3 runs, and M-TCP at x = 50 beside them.
    arms = {"standard": "tcp-reno", "westwood": "tcp-westwood", "tcp-ap": "tcp-ap"}
    arms |= {"m-tcp": "tcp-mtcp", "m-tcp-x50": "tcp-mtcp"}
    assert {r["axes"]["tcp"] for r in mtcp["runs"]} == set(arms)
    assert mtcp["missing_arms"] == []
    for r in mtcp["runs"]:
        assert {f["transport"] for f in r["summary"]["flows"]} == {arms[r["axes"]["tcp"]]}
    standard = [r for r in mtcp["runs"] if r["axes"]["tcp"] == "standard"]
    pairs = {
        r["axes"]["scenario"]: [(f["src"], f["dst"], f["transport"]) for f in r["summary"]["flows"]]
        for r in standard
    }
    assert pairs == {
        1: [(1, 2, "tcp-reno"), (5, 6, "tcp-reno")],
        2: [(1, 2, "tcp-reno"), (4, 5, "tcp-reno")],
        3: [(1, 5, "tcp-reno"), (6, 9, "tcp-reno")],
        4: [(2, 9, "tcp-reno"), (6, 4, "tcp-reno")],
    }
    # The cross flows go through node 3: four hops end to end, three for scenario 4.
    hops = {r["axes"]["scenario"]: [f["hops"] for f in r["summary"]["flows"]] for r in standard}
    assert hops[3] == [4, 4] and hops[4] == [3, 3]
    # The 16 cells of Table 3 are claims, and they all run now.
    assert sum("(+-5 points)" in c["what"] for c in mtcp["claims"]) == 16
    assert mtcp["pending_claims"] == [] and all(c["quote"] for c in mtcp["claims"])
    # Both arms of opet-fig10 run: Basic and OPET (docs/opet.md).
    assert {r["axes"]["scheme"] for r in fig10["runs"]} == {"basic", "opet"}
    assert not fig10.get("missing_arms") and not fig10.get("pending_claims")
    opet_runs = [r for r in fig10["runs"] if r["axes"]["scheme"] == "opet"]
    assert all(r["summary"]["mac"]["opet"]["ncts_sent"] > 0 for r in opet_runs)
    # RTS and drops per flow count (6 each), ACKs and drops pooled.
    assert len(fig10["claims"]) == 14
    assert all(isinstance(c["measured"], float) for c in fig10["claims"])
    # The index lists the experiments this invocation did not run (every one runs
    # at least its baseline arm now).
    index = (tmp_path / "rep" / "index.md").read_text(encoding="utf-8")
    assert "not run yet: `manetfair reproduce selfcontention-fig5`" in index


@pytest.mark.core
def test_export_gives_each_runs_parameter_values_and_its_flows_tcp_counters(tmp_path):
    """A parameter column holds the value a run used, its default where another sweep
    set the key and this one did not (not NULL); the flows table keeps each TCP flow's
    counters (`tcp_retransmitted_segments`, ...)."""
    import pyarrow.parquet as pq

    assert run_cli(["examples", "ex"], fake=False, cwd=tmp_path).returncode == 0
    store = str(tmp_path / "s.duckdb")
    for param in ("mac.rts_threshold_bytes=3000", "mac.queue_capacity_pkts=20"):
        args = ["sweep", "ex/chain.toml", "--param", param, "--param", "duration_s=5"]
        proc = run_cli([*args, "--seeds", "1", "--store", store], fake=False, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    out = run_cli(["export", "--out", "x", "--store", store], fake=False, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    runs = pq.read_table(tmp_path / "x" / "runs.parquet").to_pylist()
    pairs = sorted((r["mac.rts_threshold_bytes"], r["mac.queue_capacity_pkts"]) for r in runs)
    # chain.toml sets neither: the defaults are 0 bytes (RTS/CTS before every data
    # frame) and 50 packets (docs/scenario.md).
    assert pairs == [(0, 20), (3000, 50)], pairs
    flows = pq.read_table(tmp_path / "x" / "flows.parquet").to_pylist()
    assert len(flows) == 2
    for f in flows:
        assert f["tcp_data_segments"] > 0 and f["tcp_retransmitted_segments"] is not None
        assert {"tcp_fast_retransmits", "tcp_timeouts"} <= set(f)
