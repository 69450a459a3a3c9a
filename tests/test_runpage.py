"""A page per run: `manetfair run F --out DIR` and `manetfair plot RUN` draw per-flow
throughput, cwnd and ssthresh with RTOs and fast retransmits marked, per-node queue,
busy and NAV fractions, the topology with routes and the delay distribution, each as
PNG and SVG with its CSV; the page loads in headless Chromium without console errors."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from conftest import REPO, run_cli

pytestmark = pytest.mark.core

STEMS = ("throughput", "tcp", "queue", "channel", "topology", "delay")
CHROMEDRIVER = shutil.which("chromedriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("runpage")
    out = tmp / "d"
    args = ["run", str(REPO / "examples" / "chain.toml"), "--out", str(out), "--quiet"]
    proc = run_cli([*args, "--duration", "30"], fake=False, cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    return out


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_every_figure_as_png_svg_and_csv(run_dir: Path) -> None:
    for stem in STEMS:
        for ext in ("png", "svg", "csv"):
            assert (run_dir / f"{stem}.{ext}").stat().st_size > 0, f"{stem}.{ext}"
    summary = json.loads((run_dir / "summary.json").read_text())
    tput = _rows(run_dir / "throughput.csv")
    assert len(tput) == 30
    assert [float(r["flow0_kbps"]) for r in tput] == summary["flows"][0]["series_kbps"]
    tcp = _rows(run_dir / "tcp.csv")
    fast = sum(int(r["flow0_fast_retransmits"]) for r in tcp)
    rto = sum(int(r["flow0_timeouts"]) for r in tcp)
    assert (fast, rto) == (
        summary["flows"][0]["tcp"]["fast_retransmits"],
        summary["flows"][0]["tcp"]["timeouts"],
    )
    assert fast + rto > 0  # the figure has marks to show
    # The chain's route, as the core routes it: 0 -> 1 -> 2 -> 3 -> 4.
    assert [(r["from"], r["to"]) for r in _rows(run_dir / "routes.csv")] == [
        ("0", "1"),
        ("1", "2"),
        ("2", "3"),
        ("3", "4"),
    ]
    assert len(_rows(run_dir / "queue.csv")[0]) == 1 + 5  # time and five nodes
    svg = (run_dir / "tcp.svg").read_text()
    assert "fast retransmit" in svg and "<dc:date>" not in svg


def test_plot_redraws_a_run_folder_and_a_stored_run(run_dir: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    proc = run_cli(["plot", str(run_dir), "--out", str(again)], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(again / "index.html")
    for stem in STEMS:
        assert (again / f"{stem}.csv").read_bytes() == (run_dir / f"{stem}.csv").read_bytes()
        assert (again / f"{stem}.svg").read_bytes() == (run_dir / f"{stem}.svg").read_bytes()

    store = tmp_path / "s.duckdb"
    args = ["sweep", str(REPO / "examples" / "chain.toml"), "--param", "duration_s=10"]
    proc = run_cli(
        [*args, "--seeds", "1", "--json", "--store", str(store)], fake=False, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    run_id = json.loads(proc.stdout)["runs"][0]["run_id"]
    proc = run_cli(["plot", run_id[:12], "--store", str(store)], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = tmp_path / f"run-{run_id[:12]}" / "index.html"
    assert proc.stdout.strip() == str(page.relative_to(tmp_path))
    assert len(_rows(page.parent / "throughput.csv")) == 10

    bad = run_cli(["plot", "no-such-run", "--store", str(store)], fake=False, cwd=tmp_path)
    assert bad.returncode == 2 and "no run" in bad.stderr
    bad = run_cli(["plot", str(tmp_path)], fake=False, cwd=tmp_path)
    assert bad.returncode == 2 and "not a run folder" in bad.stderr


@pytest.mark.skipif(
    CHROMEDRIVER is None, reason="needs Chromium and chromedriver (.ci/run installs them)"
)
def test_run_page_renders_in_chromium_without_console_errors(run_dir: Path) -> None:
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (pip)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if CHROMIUM:
        options.binary_location = CHROMIUM
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get((run_dir / "index.html").as_uri())
        assert driver.execute_script("return document.readyState") == "complete"
        assert "chain" in driver.find_element("tag name", "h1").text
        loaded = driver.execute_script(
            "return Array.from(document.images)"
            ".map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])"
        )
        assert sorted(src for src, _ in loaded) == sorted(f"{s}.svg" for s in STEMS)
        assert all(ok for _, ok in loaded), loaded
        for href in driver.execute_script("return Array.from(document.links).map(a => a.href)"):
            assert Path(unquote(urlparse(href).path)).is_file(), href
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
    finally:
        driver.quit()


def test_report_figures_write_the_numbers_they_draw(tmp_path: Path) -> None:
    from manetfair.plots import _pyplot, figure_data

    plt = _pyplot()
    fig, (top, bottom) = plt.subplots(2, 1)
    top.set_title("throughput")
    top.errorbar([1, 2], [10.0, 20.0], yerr=[[1.0, 2.0], [3.0, 4.0]], label="measured")
    top.plot([1, 2], [12.0, 18.0], ls="none", marker="D", label="paper")
    bottom.set_title("queues")
    bottom.bar([0, 1], [5.0, 7.0], label="nodes")
    bottom.set_xticks([0, 1], ["node a", "node b"])
    figure_data(fig, tmp_path / "f.csv")
    plt.close(fig)
    rows = _rows(tmp_path / "f.csv")
    got = [
        (r["panel"], r["series"], r["x"], r["x_label"], r["y"], r["y_low"], r["y_high"])
        for r in rows
    ]
    assert got == [
        ("throughput", "measured", "1", "", "10.0", "9.0", "13.0"),
        ("throughput", "measured", "2", "", "20.0", "18.0", "24.0"),
        ("throughput", "paper", "1", "", "12.0", "", ""),
        ("throughput", "paper", "2", "", "18.0", "", ""),
        ("queues", "nodes", "0.0", "node a", "5.0", "", ""),
        ("queues", "nodes", "1.0", "node b", "7.0", "", ""),
    ]


def test_a_random_field_at_another_seed_draws_its_own_routes(tmp_path: Path) -> None:
    out = tmp_path / "r"
    args = ["run", str(REPO / "examples" / "random.toml"), "--seed", "3", "--duration", "3"]
    proc = run_cli([*args, "--out", str(out), "--quiet"], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    flows = json.loads((out / "summary.json").read_text())["flows"]
    routes = _rows(out / "routes.csv")
    for f in flows:
        hops = [(int(r["from"]), int(r["to"])) for r in routes if int(r["flow"]) == f["id"]]
        assert hops and hops[0][0] == f["src"] and hops[-1][1] == f["dst"], (f, hops)
        assert all(a[1] == b[0] for a, b in zip(hops, hops[1:]))
        assert len(hops) == f["hops"]
    assert (
        len(_rows(out / "topology.csv")) == json.loads((out / "summary.json").read_text())["nodes"]
    )


def test_figure_data_keeps_a_point_without_an_error_bar(tmp_path: Path) -> None:
    """A point whose spread is unknown (NaN: one seed) has an empty error segment;
    its row has no bounds (throttle-fig6's quick mode drew such a point)."""
    from manetfair.plots import _pyplot, figure_data

    plt = _pyplot()
    fig, ax = plt.subplots()
    nan = float("nan")
    ax.errorbar([1, 2], [10.0, 20.0], yerr=[[nan, 2.0], [nan, 4.0]], label="measured")
    figure_data(fig, tmp_path / "f.csv")
    plt.close(fig)
    got = [(r["x"], r["y"], r["y_low"], r["y_high"]) for r in _rows(tmp_path / "f.csv")]
    assert got == [("1", "10.0", "", ""), ("2", "20.0", "18.0", "24.0")]
