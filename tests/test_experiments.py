"""Experiment files: arms marked unavailable, the claims that wait for them, and the
report and JSON that list both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from manetfair import experiments, report
from manetfair.errors import InputError
from manetfair.reproduce import reproduce, to_json
from manetfair.store import ResultsStore

ARMS = """
id = "demo-fig1"
paper = "demo.txt"
figure = "Figure 1"
description = "a baseline arm and a scheme that does not exist yet"

[scenario]
name = "demo"
duration_s = 5.0

[layout]
kind = "star"
stations = 2
[layout.flow]
transport = "udp"
app = "cbr"
rate_kbps = 100.0

[sweep]
seeds = 2
[sweep.quick]
seeds = 1

[[sweep.axis]]
name = "scheme"
values = ["basic", "better"]
[sweep.axis.set.basic]
[sweep.axis.unavailable]
better = "needs the better scheme"

[[sweep.axis]]
name = "stations"
key = "layout.stations"
values = [1, 2]

[[claim]]
what = "basic delivers something, {stations} stations"
quote = "The basic scheme delivers some traffic."
direction_only = true
where = { scheme = "basic" }
for_each = ["stations"]
measured = { field = "aggregate_kbps" }
paper = 0.0
test = "greater"

[[claim]]
what = "better / basic about 1.1"
quote = "The better scheme delivers about 10% more."
measured = { ratio = [{ field = "aggregate_kbps", where = { scheme = "better" } }, { field = "aggregate_kbps", where = { scheme = "basic" } }] }
paper = 1.1
test = "within"
rel_tol = 0.05
"""


def _write(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "demo.toml").write_text(text, encoding="utf-8")
    return folder


def test_unavailable_arms_are_not_run_and_their_claims_wait(tmp_path, fake):
    exp = experiments.get("demo-fig1", _write(tmp_path, ARMS))
    assert exp.variants(quick=False) == [
        {"scheme": "basic", "stations": 1},
        {"scheme": "basic", "stations": 2},
    ]
    assert exp.missing_arms() == [("scheme", "better", "needs the better scheme")]
    pending = exp.pending_claims()
    assert [c["what"] for c, _ in pending] == ["better / basic about 1.1"]
    assert "scheme = better: needs the better scheme" in pending[0][1]
    assert [c["what"] for c in exp.runnable_claims()] == [
        "basic delivers something, {stations} stations"
    ]
    assert exp.availability() == (True, "")
    assert len(exp.specs(quick=False)) == 4


def test_an_experiment_whose_every_arm_waits_is_unavailable(tmp_path, fake):
    text = ARMS.replace('values = ["basic", "better"]', 'values = ["better"]').replace(
        "[sweep.axis.set.basic]\n", ""
    )
    exp = experiments.get("demo-fig1", _write(tmp_path, text))
    ok, why = exp.availability()
    assert not ok and "needs the better scheme" in why


def test_unavailable_must_name_a_value(tmp_path):
    text = ARMS.replace('better = "needs', 'worse = "needs')
    with pytest.raises(InputError, match="worse"):
        experiments.load_all(_write(tmp_path, text))


def test_refused_arms_are_never_run_and_name_a_value_with_a_set(tmp_path):
    text = ARMS.replace(
        "[sweep.axis.unavailable]\nbetter = ",
        '[sweep.axis.set.better]\n"mac.queue" = "red"\n[sweep.axis.refused]\nbetter = ',
    )
    for sub in ("b", "c"):
        (tmp_path / sub).mkdir()
    exp = experiments.get("demo-fig1", _write(tmp_path, text))
    assert {v["scheme"] for v in exp.variants(quick=False)} == {"basic"}
    assert exp.refused_arms() == [("scheme", "better", "needs the better scheme")]
    assert exp.missing_arms() == []
    # The claim about the refused arm waits, with the reason, and is never judged.
    assert [c["what"] for c, _ in exp.pending_claims()] == ["better / basic about 1.1"]
    with pytest.raises(InputError, match="worse"):
        experiments.load_all(_write(tmp_path / "b", text.replace("better = ", "worse = ")))
    # Unlike an unavailable arm, a refused one keeps its set table: it can be built.
    no_set = text.replace('[sweep.axis.set.better]\n"mac.queue" = "red"\n', "")
    with pytest.raises(InputError, match="better"):
        experiments.load_all(_write(tmp_path / "c", no_set))


def test_set_axis_still_needs_a_table_for_each_runnable_value(tmp_path):
    text = ARMS.replace("[sweep.axis.set.basic]\n", "")
    with pytest.raises(InputError, match="basic"):
        experiments.load_all(_write(tmp_path, text))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # A wrong type: the key, the value and the type allowed.
        ("seeds = 2\n", 'seeds = "two"\n', "sweep.seeds = 'two': Input should be a valid integer"),
        (
            "seeds = 2\n",
            "seeds = 0\n",
            "sweep.seeds = 0: Input should be greater than or equal to 1",
        ),
        # A misspelt key is an error with the keys allowed, not silently ignored.
        (
            'figure = "Figure 1"',
            'figure = "Figure 1"\nfigur = "x"',
            "unknown key figur = 'x'; allowed keys: id, paper, paper_title, figure,",
        ),
        (
            'test = "greater"',
            'test = "greatr"',
            (
                "claim[0].test = 'greatr': Input should be 'within', 'at_least', 'at_most', "
                "'greater' or 'less'"
            ),
        ),
        (
            'name = "stations"',
            'name = "stations"\nlabels = "n"',
            "unknown key sweep.axis[1].labels = 'n'; allowed keys: name, values, key, set,",
        ),
        ('description = "a baseline', 'descriptio = "a baseline', "description is missing"),
        (
            "paper = 0.0",
            'paper = "zero"',
            "claim[0].paper = 'zero': allowed: a number, or a table of a model",
        ),
        (
            'where = { scheme = "basic" }',
            'where = { schem = "basic" }',
            "selects unknown axis 'schem'; axes: ['scheme', 'stations']",
        ),
        (
            "[sweep.quick]\nseeds = 1",
            "[sweep.quick]\nseeds = 1\naxes = { stationz = [1] }",
            "sweep.quick.axes names unknown axis 'stationz'",
        ),
    ],
)
def test_a_file_against_the_schema_names_key_value_and_what_is_allowed(
    tmp_path, old, new, expected
):
    folder = _write(tmp_path, ARMS.replace(old, new, 1))
    with pytest.raises(InputError) as info:
        experiments.load_all(folder)
    message = str(info.value)
    assert message.startswith(f"{folder / 'demo.toml'} (experiment demo-fig1): "), message
    assert expected in message


def test_a_file_against_the_schema_exits_2_without_traceback(tmp_path):
    from conftest import no_traceback, run_cli

    folder = _write(tmp_path, ARMS.replace("seeds = 2\n", "seeds = 2.5\n", 1))
    env = {"MANETFAIR_EXPERIMENTS": str(folder)}
    proc = run_cli(["experiments"], fake=True, cwd=tmp_path, env=env)
    assert proc.returncode == 2 and no_traceback(proc), proc.stderr
    assert "demo.toml (experiment demo-fig1): sweep.seeds = 2.5" in proc.stderr


def test_report_and_json_list_missing_arms_and_pending_claims(tmp_path, fake):
    exp = experiments.get("demo-fig1", _write(tmp_path, ARMS))
    with ResultsStore(tmp_path / "s.duckdb") as store:
        results = reproduce([exp], store, quick=True)
    (r,) = results
    assert [v.where for v in r.verdicts] == [
        {"scheme": "basic", "stations": 1},
        {"scheme": "basic", "stations": 2},
    ]
    assert {o.spec.variant["scheme"] for o in r.outcomes} == {"basic"}
    doc = to_json(results)["experiments"][0]
    assert doc["missing_arms"] == [
        {"axis": "scheme", "value": "better", "reason": "needs the better scheme"}
    ]
    assert [p["what"] for p in doc["pending_claims"]] == ["better / basic about 1.1"]
    assert doc["pending_claims"][0]["quote"] == "The better scheme delivers about 10% more."
    # A run's variant is the settings it changes; its axis values are beside it.
    assert [r["variant"] for r in doc["runs"]] == [{"layout.stations": 1}, {"layout.stations": 2}]
    assert [r["axes"] for r in doc["runs"]] == [
        {"scheme": "basic", "stations": 1},
        {"scheme": "basic", "stations": 2},
    ]
    assert doc["runs"][0]["label"] == "scheme = basic, stations = 1"
    assert doc["claims"][0]["quote"] == "The basic scheme delivers some traffic."
    json.dumps(doc)
    report.write(results, tmp_path / "out")
    page = (tmp_path / "out" / "demo-fig1.md").read_text(encoding="utf-8")
    assert "## Not yet available" in page
    assert "scheme = better: needs the better scheme" in page
    assert (
        "| better / basic about 1.1 | “The better scheme delivers about 10% more.” | 1.1 |" in page
    )
    index = (tmp_path / "out" / "index.md").read_text(encoding="utf-8")
    assert "arms not yet available: scheme = better" in index


def test_experiments_command_marks_partly_available_ones(tmp_path):
    from conftest import run_cli

    folder = _write(tmp_path, ARMS)
    env = {"MANETFAIR_EXPERIMENTS": str(folder)}
    proc = run_cli(["experiments", "--json"], fake=True, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    # A user's experiments come beside the built-in ones.
    listing = {e["id"]: e for e in json.loads(proc.stdout)["experiments"]}
    assert "validate-bianchi" in listing
    entry = listing["demo-fig1"]
    assert entry["available"] is True
    assert entry["missing_arms"] == [
        {"axis": "scheme", "value": "better", "reason": "needs the better scheme"}
    ]
    text = run_cli(["experiments"], fake=True, cwd=tmp_path, env=env).stdout
    assert any(line.startswith("demo-fig1") and " partial " in line for line in text.splitlines())
    assert "arm scheme = better waits: needs the better scheme" in text


def test_a_later_report_keeps_earlier_experiments_linked(tmp_path, fake):
    folder = _write(tmp_path, ARMS)
    (folder / "demo2.toml").write_text(
        ARMS.replace('id = "demo-fig1"', 'id = "demo-fig2"'), encoding="utf-8"
    )
    first, second = experiments.load_all(folder)
    out = tmp_path / "out"
    with ResultsStore(tmp_path / "s.duckdb") as store:
        report.write(reproduce([first], store, quick=True), out)
        report.write(reproduce([second], store, quick=True), out)
    index = (out / "index.md").read_text(encoding="utf-8")
    # Both pages are linked: demo-fig1 from the earlier run, demo-fig2 from this one.
    assert "(demo-fig1.md)" in index and "(demo-fig2.md)" in index
    assert "Code version" in index
    page = (out / "demo-fig2.md").read_text(encoding="utf-8")
    assert page.startswith("# demo.txt, Figure 1") and "Code version" in page
    assert (out / "demo-fig2-topology.png").read_bytes().startswith(b"\x89PNG")


def test_topology_routes_take_the_fewest_hops():
    from manetfair import plots

    pos = {1: (0.0, 0.0), 2: (200.0, 0.0), 3: (400.0, 0.0), 4: (200.0, 150.0)}
    assert plots.shortest_path(pos, 1, 3, 250.0) == [1, 2, 3]
    assert plots.positions({"topology": {"kind": "grid", "rows": 2, "cols": 3, "spacing_m": 10}})[
        4
    ] == (10.0, 10.0)
    assert plots.positions({"topology": {"kind": "random"}}) is None
    assert plots.coverage(3) == 0.75 and plots.seed_range([1.0, 3.0]) == (2.0, 1.0, 3.0)


def test_mtcp_x_sweeps_share_the_table3_template():
    """mtcp-fig3..7 repeat mtcp-table3's scenario and layouts, so that the runs both
    need (M-TCP at x = 35 and x = 50) are the same runs in the store."""
    by_id = {e.id: e for e in experiments.load_all()}
    table3 = by_id["mtcp-table3"]
    assert table3.layout is not None
    layout = json.loads(json.dumps(table3.layout))
    layout["flow"]["transport"] = "tcp-mtcp"
    scenarios = next(a for a in table3.axes if a.name == "scenario").sets
    arms = next(a for a in table3.axes if a.name == "tcp").sets
    template = json.loads(json.dumps(table3.scenario))
    # M-TCP's CW is ns-2's cwnd_ by the ns2 platform's default, which every arm runs on.
    assert all("tcp.mtcp.cw_source" not in arms[a] for a in ("m-tcp", "m-tcp-x50"))
    assert table3.platform == "ns2"
    for i in range(3, 8):
        exp = by_id[f"mtcp-fig{i}"]
        assert exp.scenario == template, exp.id
        assert exp.layout == layout, exp.id
        axis = next(a for a in exp.axes if a.name == "scenario")
        assert {k: axis.sets[k] for k in axis.sets} == {k: scenarios[k] for k in axis.sets}
        x = next(a for a in exp.axes if a.name == "x")
        assert x.key == "tcp.mtcp.x" and x.values == list(range(5, 51, 5))


SHARED = """
paper = "demo.txt"
description = "two experiments of one file sharing its scenario settings"

[scenario]
name = "demo"
duration_s = 5.0
[scenario.mac]
rts_threshold_bytes = 0
queue_capacity_pkts = 20
[scenario.routing]
protocol = "aodv"

[[experiment]]
id = "demo-fig1"
figure = "Figure 1"
[experiment.layout]
kind = "chain"
hops = 2

[[experiment]]
id = "demo-fig2"
figure = "Figure 2"
[experiment.scenario]
name = "demo-field"
[experiment.scenario.mac]
queue_capacity_pkts = 50
[experiment.scenario.topology]
kind = "random"
nodes = 10
"""


def test_an_experiment_scenario_adds_to_the_files_shared_settings(tmp_path):
    """An entry's [experiment.scenario] is laid on the file's [scenario] key by key:
    what it does not set (here the routing protocol and the RTS threshold) stays
    the file's, what it sets wins, at every depth."""
    (tmp_path / "demo.toml").write_text(SHARED, encoding="utf-8")
    first, second = experiments.load_all(tmp_path)
    assert first.scenario == {
        "name": "demo",
        "duration_s": 5.0,
        "mac": {"rts_threshold_bytes": 0, "queue_capacity_pkts": 20},
        "routing": {"protocol": "aodv"},
    }
    assert second.scenario == {
        "name": "demo-field",
        "duration_s": 5.0,
        "mac": {"rts_threshold_bytes": 0, "queue_capacity_pkts": 50},
        "routing": {"protocol": "aodv"},
        "topology": {"kind": "random", "nodes": 10},
    }


def test_merge_tables_replaces_arrays_and_leaves_its_inputs_alone():
    base = {"a": {"b": 1, "c": [1, 2]}, "d": 2}
    over = {"a": {"c": [3]}, "e": {"f": 1}}
    assert experiments.merge_tables(base, over) == {"a": {"b": 1, "c": [3]}, "d": 2, "e": {"f": 1}}
    assert base == {"a": {"b": 1, "c": [1, 2]}, "d": 2} and over == {"a": {"c": [3]}, "e": {"f": 1}}


@pytest.mark.parametrize(
    "exp_id", ["selfcontention-fig6", "selfcontention-table1", "selfcontention-table2"]
)
def test_the_selfcontention_fields_run_the_papers_aodv(exp_id):
    """Berger et al. §4: AODV in every experiment. The random fields set their own
    topology and traffic in [experiment.scenario]; the file's routing and MAC settings
    must still reach their runs (they once ran with static routes instead)."""
    exp = experiments.get(exp_id)
    data = json.loads(exp.specs(quick=True)[0].scenario.canonical_json())
    assert data["routing"]["protocol"] == "aodv"
    aodv = data["routing"]["aodv"]
    assert (aodv["active_route_timeout_ms"], aodv["ttl_start"], aodv["local_repair"]) == (
        10000.0,
        5,
        True,
    )
    assert data["mac"]["rts_threshold_bytes"] == 0 and data["tcp"]["max_window_pkts"] == 20


RANDOM_FIELD = """
id = "demo-random"
paper = "demo.txt"
figure = "Figure 2"
description = "a random field with random pairs"

[scenario]
name = "demo-random"
duration_s = 3.0
[scenario.topology]
kind = "random"
nodes = 8
width_m = 400.0
height_m = 300.0
[scenario.traffic.random_pairs]
count = 2
transport = "udp"
app = "cbr"
rate_kbps = 50.0

[sweep]
seeds = 2
[sweep.quick]
seeds = 2

[[sweep.axis]]
name = "rate"
key = "traffic.random_pairs.rate_kbps"
values = [50.0, 100.0]

[plot]
kind = "bar"
x = "rate"
y = { field = "aggregate_kbps" }
"""


@pytest.mark.core
def test_a_random_field_gets_a_topology_of_its_lowest_seed(tmp_path, monkeypatch):
    import matplotlib.figure
    from manetfair import plots

    titles: list[str] = []
    savefig = matplotlib.figure.Figure.savefig

    def keep_title(self, *a, **k):
        titles.append(self.axes[0].get_title())
        return savefig(self, *a, **k)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", keep_title)
    (exp,) = experiments.load_all(_write(tmp_path, RANDOM_FIELD))
    with ResultsStore(tmp_path / "s.duckdb") as store:
        (result,) = reproduce([exp], store, quick=True)
    png = tmp_path / "t.png"
    assert plots.topology(result, png) is True
    assert png.read_bytes().startswith(b"\x89PNG")
    assert "random placement: seed 1's field at t = 0" in titles[-1]
    assert "shown: the first of 2 variants (rate = 50.0)" in titles[-1]
