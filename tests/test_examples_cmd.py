"""`manetfair examples`, the packaged experiments, and output into a closed pipe."""

from __future__ import annotations

import subprocess
import sys

from conftest import BOOT_FAKE, REPO, TESTS, run_cli


def test_examples_copies_the_packaged_scenarios(tmp_path):
    proc = run_cli(["examples"], fake=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in (tmp_path / "examples").iterdir())
    assert names == ["chain.toml", "explicit.toml", "grid.toml", "random.toml"]
    assert proc.stdout.split() == [f"examples/{n}" for n in names]
    for name in names:
        assert (tmp_path / "examples" / name).read_bytes() == (
            REPO / "examples" / name
        ).read_bytes()
    # An edited copy is kept unless --force.
    (tmp_path / "examples" / "chain.toml").write_text("# mine\n")
    again = run_cli(["examples"], fake=True, cwd=tmp_path)
    assert "kept examples/chain.toml" in again.stderr
    assert (tmp_path / "examples" / "chain.toml").read_text() == "# mine\n"
    forced = run_cli(["examples", str(tmp_path / "other"), "--force"], fake=True, cwd=tmp_path)
    assert forced.returncode == 0 and len(list((tmp_path / "other").iterdir())) == 4


def test_builtin_experiments_are_found_from_any_directory(tmp_path):
    env = {"MANETFAIR_EXPERIMENTS": ""}
    proc = run_cli(["experiments", "--json"], fake=True, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert '"validate-bianchi"' in proc.stdout


def test_unavailable_experiments_say_why_in_the_text_listing(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "later.toml").write_text(
        'id = "demo-fig9"\npaper = "p"\nfigure = "Fig. 9"\ndescription = "d"\n'
        'available = false\nreason = "needs the frobnicator"\n'
    )
    proc = run_cli(
        ["experiments"], fake=True, cwd=tmp_path, env={"MANETFAIR_EXPERIMENTS": str(folder)}
    )
    lines = proc.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("demo-fig9"))
    assert " no " in lines[at] and "why not: needs the frobnicator" in lines[at + 1]


def test_a_closed_pipe_ends_quietly(tmp_path):
    """`manetfair experiments | head -1`: no BrokenPipeError, no traceback."""
    cmd = [sys.executable, "-c", BOOT_FAKE.format(tests=str(TESTS)), "experiments"]
    producer = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert producer.stdout is not None
    producer.stdout.readline()
    producer.stdout.close()
    _, err = producer.communicate(timeout=60)
    assert producer.returncode == 0, err
    assert err == b""
