"""manetfair: a fast, faithful packet-level simulator of multihop 802.11 ad hoc networks."""

from manetfair._core import version as _native_version

__version__ = _native_version()
