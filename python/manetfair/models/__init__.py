"""Analytical reference models that experiments compare measured runs against.

A model is registered under a name and maps a fully expanded scenario (a dict of
the scenario file's keys) to one number, so that an experiment's claims can name
it as the paper-side value without any experiment-specific code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

from manetfair.models import bianchi

ModelFn = Callable[[Mapping[str, Any]], float]

MODELS: dict[str, ModelFn] = {
    "bianchi-saturation-kbps": bianchi.saturation_kbps_for_scenario,
}


def evaluate(name: str, scenario: Mapping[str, Any]) -> float:
    """Evaluates the model registered as `name` for one expanded scenario."""
    try:
        fn = MODELS[name]
    except KeyError:
        known = ", ".join(sorted(MODELS))
        raise KeyError(f"unknown model {name!r}; known models: {known}") from None
    return fn(scenario)
