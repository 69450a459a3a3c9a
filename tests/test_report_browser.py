"""The HTML report in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`, driven by Selenium) opens the index, follows every link inside the
report and checks that every page loads, every figure loads and no link is broken.
A screenshot of the index is kept as a test artefact (under target/, not committed;
`MANETFAIR_ARTEFACTS` chooses another folder).

`.ci/run` installs the browser; without it the test is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from conftest import REPO, run_cli

webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (pip)")

CHROMEDRIVER = shutil.which("chromedriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

IDS = ["validate-chain", "nred-fig13", "nred-fig14", "mtcp-table3"]


def _browser() -> object:
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.add_argument("--disable-dev-shm-usage")
    if CHROMIUM:
        options.binary_location = CHROMIUM
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@pytest.mark.core
@pytest.mark.skipif(
    CHROMEDRIVER is None,
    reason="needs Chromium and chromedriver (apt-get install chromium chromium-driver)",
)
def test_report_pages_figures_and_links_load_in_chromium(tmp_path):
    out = tmp_path / "report"
    args = ["reproduce", *IDS, "--quick", "--seeds", "1", "--json", "--out", str(out)]
    args += ["--store", str(tmp_path / "s.duckdb")]
    proc = run_cli(args, fake=False, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert [e["id"] for e in json.loads(proc.stdout)["experiments"]] == IDS

    driver = _browser()
    try:
        seen: set[Path] = set()
        todo = [out / "index.html"]
        images = 0
        while todo:
            page = todo.pop()
            if page in seen:
                continue
            seen.add(page)
            assert page.is_file(), f"broken link to {page.name}"
            driver.get(page.as_uri())
            assert driver.execute_script("return document.readyState") == "complete"
            assert driver.find_element("tag name", "h1").text, f"{page.name}: no heading"
            broken = driver.execute_script(
                "return Array.from(document.images)"
                ".filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
            )
            assert broken == [], f"{page.name}: figures that do not load: {broken}"
            images += driver.execute_script("return document.images.length")
            for href in driver.execute_script("return Array.from(document.links).map(a => a.href)"):
                url = urlparse(href)
                assert url.scheme == "file", f"{page.name}: link outside the report: {href}"
                target = Path(unquote(url.path))
                assert target.is_file(), f"{page.name}: broken link {href}"
                if target.suffix == ".html":
                    todo.append(target)
        assert {p.name for p in seen} >= {"index.html", *(f"{i}.html" for i in IDS)}
        # Every experiment page shows its figure and its topology.
        assert images >= 2 * len(IDS)
        driver.get((out / "nred-fig13.html").as_uri())
        assert "The starved flow 2 now gains good throughput." in driver.page_source
        driver.get((out / "index.html").as_uri())
        artefacts = Path(os.environ.get("MANETFAIR_ARTEFACTS", REPO / "target" / "test-artefacts"))
        artefacts.mkdir(parents=True, exist_ok=True)
        assert driver.save_screenshot(str(artefacts / "report-index.png"))
    finally:
        driver.quit()
