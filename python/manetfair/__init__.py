"""manetfair: a fast, faithful packet-level simulator of multihop 802.11 ad hoc networks."""

from typing import TYPE_CHECKING

from manetfair._core import version as _native_version

__version__ = _native_version()

from manetfair._core import ScenarioError
from manetfair.api import RunResult, run
from manetfair.errors import InputError
from manetfair.scenario import Scenario

if TYPE_CHECKING:
    from manetfair.sweeps import results, sweep
    from manetfair.throttle import shares

__all__ = [
    "InputError",
    "RunResult",
    "Scenario",
    "ScenarioError",
    "__version__",
    "results",
    "run",
    "shares",
    "sweep",
]


def __getattr__(name: str) -> object:
    """`manetfair.shares`, `sweep` and `results` are imported when first used: they
    bring the runner, the results store and pandas, which `manetfair run` does not need."""
    if name == "shares":
        from manetfair.throttle import shares

        return shares
    if name in ("sweep", "results"):
        from manetfair import sweeps

        return getattr(sweeps, name)
    raise AttributeError(f"module 'manetfair' has no attribute {name!r}")
