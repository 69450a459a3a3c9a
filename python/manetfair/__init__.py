"""manetfair: a fast, faithful packet-level simulator of multihop 802.11 ad hoc networks."""

from typing import TYPE_CHECKING

from manetfair._core import version as _native_version

__version__ = _native_version()

from manetfair._core import ScenarioError
from manetfair.api import RunResult, run
from manetfair.errors import InputError
from manetfair.scenario import Scenario

if TYPE_CHECKING:
    from manetfair.throttle import shares

__all__ = ["InputError", "RunResult", "Scenario", "ScenarioError", "__version__", "run", "shares"]


def __getattr__(name: str) -> object:
    """`manetfair.shares` is imported when first used: the throttle module
    brings the runner and the results store, which `manetfair run` does not need."""
    if name == "shares":
        from manetfair.throttle import shares

        return shares
    raise AttributeError(f"module 'manetfair' has no attribute {name!r}")
