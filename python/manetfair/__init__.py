"""manetfair: a fast, faithful packet-level simulator of multihop 802.11 ad hoc networks."""

from manetfair._core import version as _native_version

__version__ = _native_version()

from manetfair._core import ScenarioError
from manetfair.api import RunResult, run
from manetfair.errors import InputError
from manetfair.scenario import Scenario
from manetfair.throttle import shares

__all__ = ["InputError", "RunResult", "Scenario", "ScenarioError", "__version__", "run", "shares"]
