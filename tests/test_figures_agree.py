"""Figures that agree with their verdicts: one aggregation for both, plot tables checked,
no figure that averages the arms it compares, one legend entry per label."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import REPO
from manetfair import claims, experiments, plots
from manetfair.errors import InputError


def _runs() -> list[claims.Run]:
    # Two seeds whose per-seed ratios average to something else than the ratio of means.
    out = []
    for seed, (a, b) in enumerate([(100.0, 50.0), (10.0, 40.0)], start=1):
        out.append(claims.Run({"arm": "a"}, seed, {"x": a}))
        out.append(claims.Run({"arm": "b"}, seed, {"x": b}))
    return out


def test_a_figure_shows_the_verdicts_ratio_of_means() -> None:
    runs = _runs()
    measure = {
        "percent_change": [
            {"field": "x", "where": {"arm": "a"}},
            {"field": "x", "where": {"arm": "b"}},
        ]
    }
    verdict_value = claims.measure_value(measure, runs, {})
    shown, lo, hi = plots._point(SimpleNamespace(runs=runs), measure, {})  # type: ignore[arg-type]
    assert shown == pytest.approx(verdict_value)  # 100 (110/90 - 1) = +22.2 %
    assert lo == pytest.approx(-75.0) and hi == pytest.approx(100.0)


def test_a_legend_names_each_label_once() -> None:
    plt = plots._pyplot()
    fig, ax = plt.subplots()
    try:
        for k in range(3):
            ax.plot([0, 1], [k, k], label="paper")
        ax.plot([0, 1], [5, 5], label="measured")
        handles, labels = plots.unique_legend(ax)
    finally:
        plt.close(fig)
    assert labels == ["paper", "measured"] and len(handles) == 2


def _doc(plot: dict) -> dict:
    return {
        "id": "demo-fig1",
        "paper": "p",
        "figure": "Figure 1",
        "description": "d",
        "plot": plot,
    }


def test_a_plot_key_no_code_draws_is_refused(tmp_path) -> None:
    with pytest.raises(InputError, match=r"unknown key plot\.ideal_bars"):
        experiments.parse(_doc({"kind": "flows", "ideal_bars": []}), tmp_path / "d.toml")
    with pytest.raises(InputError, match="ideal_share needs ideal"):
        experiments.parse(_doc({"kind": "flows", "ideal_share": [0.5]}), tmp_path / "d.toml")
    with pytest.raises(InputError, match="ideal bars"):
        experiments.parse(_doc({"kind": "line", "ideal": [{"field": "x"}]}), tmp_path / "d.toml")


def test_throttle_fig7_draws_the_ideal_bars() -> None:
    exp = experiments.get("throttle-fig7", REPO / "experiments")
    spec = exp.figure_spec
    n = len(spec["ideal"])
    runs = [
        claims.Run(
            {"throttle": "off", "run": f"alone-{i + 1}"},
            1,
            {},
            {"bin_s": 1.0, "time_s": [19.0, 20.0], "flow_throughput_kbps": [[300.0, 300.0]]},
        )
        for i in range(n)
    ]
    r = SimpleNamespace(runs=runs, experiment=exp)
    ideal = plots._ideal(r, spec, n)  # type: ignore[arg-type]
    assert ideal == pytest.approx([300.0 * f for f in spec["ideal_share"]])


def test_no_figure_averages_the_arms_it_compares() -> None:
    # Every axis with more than one value in a line or bar figure is its x, its series,
    # or fixed by the panel's `where`: throttle-fig6 once averaged throttled and
    # unthrottled runs into one curve.
    for exp in experiments.load_all(REPO / "experiments"):
        spec = exp.figure_spec
        if spec.get("kind") not in ("line", "bar", "flows", "nodes"):
            continue
        for panel in plots._panels(spec):
            fixed = {panel.get("x"), panel.get("series"), *panel.get("where", {})}
            for axis in exp.axes:
                values = axis.runnable(exp.plan(True).axis_values.get(axis.name, axis.values))
                assert len(values) < 2 or axis.name in fixed, (exp.id, axis.name)
