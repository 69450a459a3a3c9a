"""`manetfair view`: the page loads in headless Chromium without errors, its DOM has
every node, every flow's route and frames on the air, and its screenshot shows them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, run_cli

pytestmark = pytest.mark.core

CHROMIUM = next(
    (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
    None,
)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium (apt-get install chromium)"
)


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The view of the example chain (5 nodes, one TCP flow over 4 hops), 20 s."""
    tmp = tmp_path_factory.mktemp("view")
    out = tmp / "chain.html"
    proc = run_cli(
        ["view", str(REPO / "examples" / "chain.toml"), "--duration", "20", "--out", str(out)],
        fake=False,
        cwd=tmp,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    return out


def test_page_is_self_contained(page: Path) -> None:
    html = page.read_text()
    assert not re.search(r"""(src|href)=["']https?:""", html)
    assert '"frames":[[' in html


@needs_chromium
def test_page_renders_nodes_routes_and_frames_in_chromium(page: Path) -> None:
    dom = _chromium("--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr
    html = dom.stdout
    assert 'data-ready="1"' in html
    assert "data-errors" not in html and re.search(r'<pre id="errors"></pre>', html), html[-2000:]
    nodes = re.findall(r'<circle class="node"[^>]*data-id="(\d+)"', html)
    assert sorted(map(int, nodes)) == list(range(5))
    # Flow 0 runs 0 -> 4 along the chain: four hops drawn (its ACKs' way back is not).
    assert len(re.findall(r'<line class="route"', html)) == 4
    assert re.search(r'class="flow-item" data-flow="0"', html)
    # The page opens on a data frame in the air, with its sender's ranges shown.
    assert re.search(r'<line class="frame"[^>]*data-kind="data"', html)
    assert re.search(r"transmitting", html)
    # Every frame type of the run has a legend entry, and so has a loss.
    legend = set(re.findall(r'class="frame-item" data-kind="(\w+)"', html))
    assert legend == {"rts", "cts", "data", "ack", "lost"}
    # Node counters: one row per node, frames sent so far counted.
    rows = re.findall(r'<tr data-node="(\d+)"><td>\d+</td><td>([^<]*)</td><td>(\d+)</td>', html)
    assert [int(r[0]) for r in rows] == list(range(5))
    assert int(rows[0][2]) > 0 and rows[0][1] != ""
    # The channel timeline under the animation draws the frames around the slider's time.
    drawn = re.search(r'<canvas id="timeline"[^>]*data-frames="(\d+)"', html)
    assert drawn and int(drawn.group(1)) > 0, html[-3000:]


@needs_chromium
def test_screenshot_shows_nodes_and_a_route(page: Path, tmp_path: Path) -> None:
    import matplotlib.image as mpimg
    import numpy as np

    shot = tmp_path / "view.png"
    res = _chromium(
        "--virtual-time-budget=5000",
        "--window-size=1200,700",
        f"--screenshot={shot}",
        page.as_uri(),
    )
    assert res.returncode == 0 and shot.exists(), res.stderr
    img = mpimg.imread(shot)[:, :, :3]

    def share(rgb: tuple[int, int, int]) -> float:
        target = np.array(rgb) / 255.0
        return float((np.abs(img - target).max(axis=2) < 0.06).mean())

    assert share((0x1F, 0x4E, 0x79)) > 0.0005  # node blue
    # Flow 0's route, #80b1d3 drawn at 90 % opacity over the background.
    route = tuple(round(0.9 * c + 0.1 * b) for c, b in zip((0x80, 0xB1, 0xD3), (0xFB, 0xFB, 0xF8)))
    assert share(route) > 0.0005
    assert share((0xFB, 0xFB, 0xF8)) > 0.3  # the stage's background
