"""The `manetfair` command (docs/contract.md §1): run, check, experiments, reproduce, sweep, export.

Exit status: 0 success; 2 bad input (scenario, file, argument, experiment id), with a
one-paragraph message and no traceback; 1 any other failure. With --json exactly one
JSON document goes to stdout; progress and logs go to stderr.
"""

from __future__ import annotations

import argparse
import errno
import io
import itertools
import json
import math
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, TextIO

from manetfair.errors import InputError, Terminated

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT = 0, 1, 2
TRACE_EVENTS = ("enqueue", "dequeue", "tx_start", "tx_end", "rx_ok", "rx_lost", "drop")
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143

# Bounds on counts given on the command line (docs/cli.md, docs/reliability.md).
MAX_SEEDS = 10_000  # --seeds
MAX_RUNS = 100_000  # runs in one sweep: grid points × seeds
PLATFORMS = ("standard", "ns2")  # the `platform` key's values (docs/models.md)
MAX_JOBS = 256  # --jobs


def _int_in(minimum: int, maximum: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer from `minimum` to `maximum`, described as `what`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, not {text[:40]!r}") from None
        if not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"expected {what}, not {value}")
        return value

    return parse


_seed = _int_in(0, 2**64 - 1, "a seed from 0 to 2^64 - 1")
_seed_count = _int_in(1, MAX_SEEDS, f"a number of seeds from 1 to {MAX_SEEDS}")
_jobs = _int_in(1, MAX_JOBS, f"a number of worker processes from 1 to {MAX_JOBS}")

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)


def _memory_size(text: str) -> int:
    """An argparse type: bytes, or a number with K, M, G or T (powers of 1024)."""
    match = _SIZE.match(text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"expected a size such as 4G, 512M or 1000000 (bytes), not {text[:40]!r}"
        )
    scale = 1024 ** " kmgt".index(match.group(2).lower() or " ")
    value = int(float(match.group(1)) * scale)
    if not 1 <= value <= 2**63:
        raise argparse.ArgumentTypeError(f"expected a size from 1 byte to 8 EiB, not {text!r}")
    return value


def _interface_name(text: str) -> str:
    """An argparse type: a Linux network interface name as the kernel accepts it
    (dev_valid_name: 1 to 15 bytes, not "." or "..", no "/", ":" or white space).
    The name goes into `tc -batch` lines, where a newline would start a command."""
    size = len(text.encode("utf-8", "surrogateescape"))
    if (
        not 1 <= size <= 15
        or text in (".", "..")
        or any(c in "/:" or c.isspace() or not c.isprintable() for c in text)
    ):
        raise argparse.ArgumentTypeError(
            f"expected a network interface name (1 to 15 bytes, not '.' or '..', no '/', "
            f"':', spaces or control characters), not {text[:40]!r}"
        )
    return text


def _ipv4_subnet(text: str) -> str:
    """An argparse type: an IPv4 network such as 10.0.0.0/24 (the tc filters match
    `ip dst`, IPv4 only)."""
    import ipaddress

    try:
        net = ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an IPv4 network such as 10.0.0.0/24, not {text[:40]!r}"
        ) from None
    if net.version != 4:
        raise argparse.ArgumentTypeError(
            f"expected an IPv4 network such as 10.0.0.0/24, not {text[:40]!r}: the tc "
            "filters match IPv4 destination addresses (u32 match ip dst)"
        )
    return text


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds, not {text[:40]!r}"
        ) from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text}")
    return value


def default_jobs() -> int:
    """Worker processes when --jobs is not given: one per core."""
    return max(1, os.cpu_count() or 1)


def _store_help() -> str:
    from manetfair.store import DEFAULT_STORE, STORE_ENV

    return f"results store file (default ${STORE_ENV} or ./{DEFAULT_STORE})"


def _jobs_help() -> str:
    return f"worker processes (default: the number of cores, here {default_jobs()})"


_MEMORY_HELP = (
    "memory budget of one run, e.g. 8G (default 2G): a scenario estimated to need more is refused"
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every subcommand, or only `command`'s.

    `main` builds only the subcommand it is given: each argparse parser costs about a
    millisecond of gettext lookups, and all ten were a tenth of what the front end adds
    to a short `manetfair run` (docs/benchmark.md, "The front end of one run").
    """
    p = argparse.ArgumentParser(
        prog="manetfair",
        description="Packet-level simulator of multihop IEEE 802.11 ad hoc networks.",
    )
    p.add_argument("--version", action="version", version=_version_text())
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (add, help_line, description) in _SUBCOMMANDS.items():
        if command in (None, name):
            add(sub.add_parser(name, help=help_line, description=description))
    return p


def _add_run(r: argparse.ArgumentParser) -> None:
    r.add_argument("file", metavar="FILE.toml")
    r.add_argument("--seed", type=_seed, help="override the file's seed")
    r.add_argument("--duration", type=_positive_float, metavar="S", help="override duration_s")
    r.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="set a scenario key (repeatable), e.g. mac.rts_threshold_bytes=3000",
    )
    _platform_arg(r)
    r.add_argument("--json", action="store_true", help="print the run summary as JSON on stdout")
    r.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="also write summary.json, series.parquet/.csv, scenario.json and a page of "
        "figures (index.html, docs/figures.md) to DIR",
    )
    r.add_argument(
        "--pcap",
        type=Path,
        metavar="FILE",
        help="write every frame put on the air to FILE (pcap, 802.11 + radiotap)",
    )
    r.add_argument(
        "--pcap-node",
        type=int,
        action="append",
        metavar="ID",
        help="also capture what node ID's own interface sees (repeatable): FILE-nodeID.pcap "
        "beside --pcap FILE, else <scenario>-nodeID.pcap (docs/trace.md)",
    )
    r.add_argument(
        "--trace",
        type=Path,
        metavar="FILE",
        help="write every packet event to FILE: JSON lines, or Parquet if FILE ends "
        "in .parquet (docs/trace.md)",
    )
    r.add_argument(
        "--trace-node",
        type=int,
        action="append",
        metavar="ID",
        help="trace only this node (repeatable)",
    )
    r.add_argument(
        "--trace-flow",
        type=_int_in(0, 2**32 - 2, "a flow id"),
        action="append",
        metavar="F",
        help="trace only this flow (repeatable)",
    )
    r.add_argument(
        "--trace-event",
        action="append",
        choices=TRACE_EVENTS,
        metavar="KIND",
        help=f"trace only this kind of event (repeatable): {', '.join(TRACE_EVENTS)}",
    )
    r.add_argument(
        "--view",
        type=Path,
        metavar="FILE.html",
        help="also write a self-contained HTML animation of the run (as `manetfair view`)",
    )
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--max-memory", type=_memory_size, metavar="SIZE", help=_MEMORY_HELP)


def _add_view(v: argparse.ArgumentParser) -> None:
    v.add_argument("file", metavar="FILE.toml")
    v.add_argument("--out", type=Path, metavar="FILE.html", help="default: FILE.html beside it")
    v.add_argument("--seed", type=_seed, help="override the file's seed")
    v.add_argument("--duration", type=_positive_float, metavar="S", help="override duration_s")
    v.add_argument("--param", action="append", default=[], metavar="KEY.PATH=VALUE")
    v.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_check(c: argparse.ArgumentParser) -> None:
    c.add_argument("file", metavar="FILE.toml")
    c.add_argument("--param", action="append", default=[], metavar="KEY.PATH=VALUE")
    c.add_argument("--max-memory", type=_memory_size, metavar="SIZE", help=_MEMORY_HELP)


def _add_experiments(e: argparse.ArgumentParser) -> None:
    e.add_argument("--json", action="store_true")


def _add_examples(xs: argparse.ArgumentParser) -> None:
    xs.add_argument(
        "dir",
        nargs="?",
        type=Path,
        default=Path("examples"),
        metavar="DIR",
        help="where to copy them (default ./examples)",
    )
    xs.add_argument("--force", action="store_true", help="overwrite files that exist")


def _add_reproduce(rp: argparse.ArgumentParser) -> None:
    rp.add_argument("ids", nargs="*", metavar="ID")
    rp.add_argument("--quick", action="store_true", help="short durations and few seeds")
    rp.add_argument("--seeds", type=_seed_count, metavar="N", help="seeds 1..N per variant")
    rp.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    rp.add_argument(
        "--out",
        type=Path,
        default=Path("manetfair-report"),
        metavar="DIR",
        help="report directory (default ./manetfair-report)",
    )
    rp.add_argument("--store", type=Path, metavar="PATH", help=_store_help())
    rp.add_argument("--jobs", type=_jobs, metavar="N", help=_jobs_help())
    rp.add_argument("--quiet", action="store_true", help="no progress or per-run log lines")
    _backend_args(rp)
    rp.add_argument(
        "--reception",
        choices=["threshold", "sinr"],
        default="threshold",
        help="reception model of every run: threshold capture as the papers' ns-2 "
        "(default) or SINR as ns-3 (docs/models.md); the report puts both side by side",
    )
    rp.add_argument(
        "--platform",
        choices=list(PLATFORMS),
        help="run every experiment on this platform instead of its paper's (ns2 for the "
        "papers that ran ns-2, standard for Neighborhood RED's QualNet; docs/models.md); "
        "the report shows each experiment's runs beside those on its own platform",
    )
    rp.add_argument(
        "--both-platforms",
        action="store_true",
        help="also run every experiment on the other platform, so that each claim shows "
        "its value there beside its verdict (without it, that value is shown when the "
        "results store already holds those runs, e.g. after --platform)",
    )
    rp.add_argument("--max-memory", type=_memory_size, metavar="SIZE", help=_MEMORY_HELP)


def _platform_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--platform",
        choices=list(PLATFORMS),
        help="whose rules every run follows: standard (IEEE 802.11, the default) or ns2 "
        "(ns-2.35's defaults and rules, docs/models.md); the same as --param platform=...",
    )


def _with_platform(command: str, overrides: dict[str, Any], platform: str | None) -> dict[str, Any]:
    """`overrides` with `platform` set from --platform, refusing a second value of it."""
    if platform is None:
        return overrides
    if "platform" in overrides:
        raise InputError(
            f"{command}: --platform and --param platform=... both set the platform; give one"
        )
    return {**overrides, "platform": platform}


def _add_sweep(sw: argparse.ArgumentParser) -> None:
    sw.add_argument("file", metavar="FILE.toml")
    sw.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY.PATH=V1,V2,...",
        help="a sweep axis (repeatable); the grid is their product",
    )
    sw.add_argument(
        "--seeds",
        type=_seed_count,
        required=True,
        metavar="N",
        help="seeds 1..N for every grid point",
    )
    sw.add_argument("--duration", type=_positive_float, metavar="S", help="override duration_s")
    _platform_arg(sw)
    sw.add_argument("--store", type=Path, metavar="PATH", help=_store_help())
    sw.add_argument("--jobs", type=_jobs, metavar="N", help=_jobs_help())
    sw.add_argument("--json", action="store_true", help="print every run and the per-point means")
    sw.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="also draw each summary metric against each swept axis into DIR (docs/figures.md)",
    )
    sw.add_argument("--quiet", action="store_true")
    _backend_args(sw)
    sw.add_argument("--max-memory", type=_memory_size, metavar="SIZE", help=_MEMORY_HELP)


def _add_shares(sh: argparse.ArgumentParser) -> None:
    sh.add_argument("file", metavar="FILE.toml")
    sh.add_argument("--param", action="append", default=[], metavar="KEY.PATH=VALUE")
    sh.add_argument("--json", action="store_true", help="print the shares as JSON on stdout")
    sh.add_argument(
        "--tc",
        action="store_true",
        help="print Linux tc commands (tc -batch input) that enforce the rates at each source",
    )
    sh.add_argument(
        "--dev",
        type=_interface_name,
        default="wlan0",
        help="network device of the tc commands (wlan0)",
    )
    sh.add_argument(
        "--subnet",
        type=_ipv4_subnet,
        default="10.0.0.0/24",
        help="addresses for the tc filters: the first node gets the first host address (10.0.0.0/24)",
    )
    sh.add_argument(
        "--no-measure",
        action="store_true",
        help="do not run calibrations: rate limits only where throttle.thr_max_kbps has them",
    )
    sh.add_argument("--store", type=Path, metavar="PATH", help="keep the calibration runs here")
    sh.add_argument("--jobs", type=_jobs, metavar="N", help=_jobs_help())
    sh.add_argument("--quiet", action="store_true")


def _add_export(ex: argparse.ArgumentParser) -> None:
    ex.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    ex.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="PATH",
        help="directory to write the runs, flows, series and experiment_runs tables into",
    )
    ex.add_argument("--store", type=Path, metavar="PATH", help=_store_help())


def _add_plot(p: argparse.ArgumentParser) -> None:
    from manetfair.cli_figures import add_plot

    add_plot(p)


def _add_timeline(p: argparse.ArgumentParser) -> None:
    from manetfair.cli_figures import add_timeline

    add_timeline(p)


def _add_compare(p: argparse.ArgumentParser) -> None:
    from manetfair.cli_figures import add_compare

    add_compare(p)


# Each subcommand: the function that adds its arguments, its help line and description.
_SUBCOMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], str, str | None]] = {
    "run": (_add_run, "run one scenario", None),
    "view": (_add_view, "write an HTML animation of one run", None),
    "check": (_add_check, "validate a scenario without running it", None),
    "experiments": (_add_experiments, "list the built-in experiments", None),
    "examples": (_add_examples, "copy the example scenarios into a directory", None),
    "reproduce": (_add_reproduce, "run built-in experiments and write the report", None),
    "sweep": (_add_sweep, "run a scenario over a parameter grid and seeds", None),
    "shares": (
        _add_shares,
        "max-min C-load shares, rate limits and spacing of ingress throttling",
        (
            "Prints each flow's L-regions, bottleneck, share phi, rate limit r = Thr_max * phi "
            "and spacing delta = MSS / r (Osipov and Tschudin 2007; docs/throttle.md). Missing "
            "Thr_max entries are measured in isolated runs first."
        ),
    ),
    "export": (_add_export, "export the results store to Parquet or CSV", None),
    "plot": (_add_plot, "draw a finished run's figures into a page", None),
    "timeline": (_add_timeline, "draw the frames on the air in a window of a trace", None),
    "compare": (_add_compare, "compare two runs, or two reproductions' claims", None),
}


def _backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=["local", "ray"],
        default="local",
        help="local worker processes (default) or a Ray cluster (docs/cluster.md)",
    )
    p.add_argument(
        "--address",
        metavar="ADDR",
        help="with --backend ray: the cluster's head, HOST:PORT or 'auto' "
        "(default: a private local Ray instance)",
    )


def _version_text() -> str:
    try:
        import manetfair

        return f"manetfair {manetfair.__version__}"
    except Exception:  # noqa: BLE001 - --version must work even if the native module is broken
        return "manetfair (native module not importable)"


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser(command if command in _SUBCOMMANDS else None).parse_args(argv)
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "run": cmd_run,
        "view": cmd_view,
        "check": cmd_check,
        "experiments": cmd_experiments,
        "examples": cmd_examples,
        "reproduce": cmd_reproduce,
        "sweep": cmd_sweep,
        "shares": cmd_shares,
        "export": cmd_export,
        "plot": cmd_plot,
        "timeline": cmd_timeline,
        "compare": cmd_compare,
    }
    from manetfair import _core

    batch = args.command in ("reproduce", "sweep")
    stopped: list[int] = []
    restore_signals = _stop_on_signals(stopped)
    stdout = sys.stdout
    sys.stdout = _GuardedStdout(stdout)
    try:
        code = handlers[args.command](args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, and keep Python from
        # complaining when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (InputError, _core.ScenarioError) as exc:
        _err(str(exc))
        return EXIT_BAD_INPUT
    except RecursionError:
        _err("the input is nested too deeply (a scenario's tables and arrays nest a few levels)")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as exc:
        return _interrupted(str(exc), stopped, batch)
    except Exception as exc:  # noqa: BLE001 - exit 1 with one line, not a traceback
        if stopped:
            # The signal arrived inside a library call that reported it its own way
            # (DuckDB: "Query interrupted"): the command was still interrupted.
            return _interrupted("", stopped, batch)
        from manetfair.runner import BatchError
        from manetfair.store import StoreBusyError, StoreWriteError

        if isinstance(exc, (BatchError, StoreBusyError, StoreWriteError, OSError)):
            _err(str(exc))
        else:
            _err(f"{type(exc).__name__}: {exc}")
            if os.environ.get("MANETFAIR_DEBUG"):
                import traceback

                traceback.print_exc()
            else:
                print("(set MANETFAIR_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_FAILURE
    finally:
        sys.stdout = stdout
        restore_signals()


def _interrupted(detail: str, stopped: list[int], batch: bool) -> int:
    terminated = signal.SIGTERM in stopped
    what = "terminated" if terminated else "interrupted"
    kept = "; finished runs are kept in the results store" if batch else ""
    _err(f"{what}{': ' + detail if detail else ''}{kept}")
    return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED


class _GuardedStdout(io.TextIOBase):
    """Standard output whose write errors (a full disk under a redirection, a closed
    pipe) say what could not be written; the rest of the output is then dropped, so
    the exit does not fail on it a second time."""

    def __init__(self, inner: TextIO | None) -> None:
        # None when the process was started with standard output closed (`>&-`).
        self.inner: TextIO | io.TextIOBase = inner if inner is not None else _ClosedStdout()

    def _failed(self, exc: OSError) -> OSError:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.inner.fileno())
        except (OSError, ValueError):
            pass
        if isinstance(exc, BrokenPipeError):
            return exc  # the reader went away: main() ends quietly
        return OSError(f"cannot write standard output: {exc.strerror or exc}")

    def write(self, text: str) -> int:
        try:
            return self.inner.write(text)
        except OSError as exc:
            raise self._failed(exc) from None

    def flush(self) -> None:
        try:
            self.inner.flush()
        except OSError as exc:
            raise self._failed(exc) from None

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()


class _ClosedStdout(io.TextIOBase):
    """Standard output when the process has none: every write fails, saying so."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "it is closed")

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "it is closed")


def _stop_on_signals(stopped: list[int]) -> Callable[[], None]:
    """Ctrl-C (SIGINT) and SIGTERM stop the command: workers stopped, finished runs
    kept, nothing written half; exit 130 or 143. Returns what puts the handlers back."""

    def handler(signum: int, frame: Any) -> None:
        stopped.append(signum)
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    previous_hook = sys.unraisablehook

    def unraisable(hook: Any) -> None:
        # A handler that runs inside a finalizer (a weakref callback, `__del__`:
        # multiprocessing closes its pipes in them) raises into code that cannot
        # pass the exception on, and Python only prints it: the stop would be lost
        # and the batch would run on. The signal is sent again to the main thread
        # from a timer thread, once this hook has returned (a signal handled within
        # the hook would be swallowed the same way), so that it interrupts whatever
        # the main thread runs or waits in next.
        if stopped and isinstance(hook.exc_value, KeyboardInterrupt):
            main = threading.main_thread().ident
            assert main is not None
            again = threading.Timer(0.05, signal.pthread_kill, (main, stopped[-1]))
            again.daemon = True
            again.start()
            return
        previous_hook(hook)

    sys.unraisablehook = unraisable
    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for signum, old in previous.items():
            signal.signal(signum, old)
        sys.unraisablehook = previous_hook

    return restore


# Longest error message printed: a message may echo a huge value (the core cuts its own
# at 2000 bytes, crates/py: bounded; this catches the rest).
MAX_MESSAGE_CHARS = 4000


def _err(message: str) -> None:
    if len(message) > MAX_MESSAGE_CHARS:
        cut = len(message) - MAX_MESSAGE_CHARS
        message = f"{message[:MAX_MESSAGE_CHARS]} … ({cut} more characters)"
    print(f"manetfair: error: {message}", file=sys.stderr)


def _log(args: argparse.Namespace, message: str) -> None:
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr, flush=True)


def _want_bar(args: argparse.Namespace) -> bool:
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


def _overrides(specs: Sequence[str]) -> dict[str, Any]:
    from manetfair.scenario import parse_param

    out: dict[str, Any] = {}
    for spec in specs:
        key, values = parse_param(spec)
        out[key] = values[0]
    return out


# --- run / check ---------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    from manetfair.api import RunResult, prepare, run_prepared

    if args.seed is not None and any(_param_key(p) == "seed" for p in args.param):
        raise InputError("run: --seed and --param seed=... both set the seed; give one")
    if args.duration is not None and any(_param_key(p) == "duration_s" for p in args.param):
        raise InputError(
            "run: --duration and --param duration_s=... both set the duration; give one"
        )
    overrides = _with_platform("run", _overrides(args.param), args.platform)
    sc = prepare(Path(args.file), args.seed, args.duration, overrides, args.max_memory)
    sc.canonical_json(args.max_memory)  # bad input fails here, before a progress bar appears
    if args.view is not None and args.trace is not None:
        raise InputError("run: --view and --trace each trace the run; give one of them")
    filters = (args.trace_node, args.trace_flow, args.trace_event)
    if args.trace is None and any(filters):
        raise InputError("run: --trace-node, --trace-flow and --trace-event need --trace FILE")
    outputs = _outputs_of(sc)
    for option in ("pcap", "trace", "view"):
        if getattr(args, option) is not None:
            outputs.add(getattr(args, option), f"--{option}")
    if args.out is not None:
        outputs.add_dir(args.out, "--out", ("summary.json", "series.parquet", "series.csv"))
    options: dict[str, Any] = {}
    if args.pcap_node:
        from manetfair.trace import node_capture_paths

        if args.view is not None:
            raise InputError("run: --pcap-node and --view: give --pcap-node with a plain run")
        nodes = list(dict.fromkeys(args.pcap_node))
        node_pcaps = node_capture_paths(Path(args.file), args.pcap, nodes)
        for path in node_pcaps:
            outputs.add(path, "--pcap-node")
        options = {"pcap_nodes": nodes, "pcap_node_paths": [str(p) for p in node_pcaps]}
    trace = None
    if args.trace is not None:
        from manetfair.trace import TraceTarget, check_filters

        check_filters(sc, args.trace_node, args.trace_flow)
        trace = TraceTarget(args.trace)
        options |= {
            "trace_path": str(trace.core_path),
            "trace_nodes": args.trace_node,
            "trace_flows": args.trace_flow,
            "trace_events": args.trace_event,
        }
    try:
        with _maybe_progress(args) as progress:
            if args.view is not None:
                from manetfair.view import write_view

                summary_json, traces_json = write_view(
                    sc, args.view, progress, progress_events=progress is not None, pcap=args.pcap
                )
                result = RunResult(json.loads(summary_json), json.loads(traces_json), sc)
            else:
                result = run_prepared(
                    sc,
                    progress,
                    args.pcap,
                    max_memory=args.max_memory,
                    progress_events=progress is not None,
                    **options,
                )
        if trace is not None:
            trace.finish()
            _log(args, f"wrote {args.trace}")
    finally:
        if trace is not None:
            trace.cleanup()
    if args.view is not None:
        _log(args, f"wrote {args.view}")
    if args.pcap is not None:
        _log(args, f"wrote {args.pcap}")
    for path in options.get("pcap_node_paths", []):
        _log(args, f"wrote {path}")
    if args.out is not None:
        from manetfair.runplots import write_run_folder

        # Summary and figures first, series last (runplots.write_run_folder).
        written = [*write_run_folder(result, args.out), *result.write(args.out)]
        for path in dict.fromkeys(written):
            _log(args, f"wrote {path}")
    if args.json:
        print(json.dumps(result.summary))
    else:
        _print_summary(result.summary, sys.stdout)
    return EXIT_OK


def _param_key(spec: str) -> str:
    return spec.partition("=")[0].strip()


def _outputs_of(sc: Any) -> Any:
    """The outputs of a command that reads scenario `sc` (manetfair.output)."""
    from manetfair.output import Outputs

    return Outputs([("scenario file", f) for f in sc.source_files()])


@contextmanager
def _maybe_progress(args: argparse.Namespace) -> Iterator[Any]:
    """A progress bar for one run when stderr is a terminal. `rich` is imported
    only then: it is most of the start-up of a `run` printing JSON to a pipe."""
    if _want_bar(args):
        from manetfair.progress import run_progress

        with run_progress() as progress:
            yield progress
    else:
        yield None


def cmd_view(args: argparse.Namespace) -> int:
    from manetfair.api import prepare
    from manetfair.view import write_view

    sc = prepare(Path(args.file), args.seed, args.duration, _overrides(args.param))
    sc.canonical_json()
    out = args.out if args.out is not None else Path(args.file).with_suffix(".html")
    _outputs_of(sc).add(out, "--out")
    with _maybe_progress(args) as progress:
        write_view(sc, out, progress, progress_events=progress is not None)
    print(out)
    return EXIT_OK


def _print_summary(s: dict[str, Any], out: TextIO) -> None:
    out.write(
        f"{s.get('name', '')}: seed {s.get('seed')}, {s.get('duration_s')} s simulated "
        f"in {s.get('wall_s', 0.0):.2f} s wall, {s.get('events', 0)} events\n"
    )
    out.write(f"{'flow':>4} {'src':>5} {'dst':>5} {'transport':<12} {'hops':>4} {'kbit/s':>10}\n")
    out.writelines(
        f"{f['id']:>4} {f['src']:>5} {f['dst']:>5} {f['transport']:<12} "
        f"{f.get('hops', ''):>4} {f['throughput_kbps']:>10.1f}\n"
        for f in s.get("flows", [])
    )
    out.write(
        f"aggregate {s.get('aggregate_kbps', 0.0):.1f} kbit/s, "
        f"Jain index {s.get('jain_index', 0.0):.3f}\n"
    )
    ledger = s.get("ledger", {})
    if ledger and not ledger.get("balanced", True):
        out.write("warning: the packet ledger does not balance\n")


def cmd_check(args: argparse.Namespace) -> int:
    from manetfair.scenario import Scenario

    sc = Scenario.from_file(args.file, args.max_memory)
    overrides = _overrides(args.param)
    if overrides:
        sc = sc.with_overrides(overrides)
    canonical = json.loads(sc.canonical_json(args.max_memory))
    from manetfair.api import _may_throttle

    if _may_throttle(sc):
        from manetfair import throttle

        throttle.check(sc)  # the reference runs `run` would build, checked as `run` does
    nodes = canonical.get("node")
    topo = canonical.get("topology", {})
    n_nodes = len(nodes) if isinstance(nodes, list) and nodes else topo.get("nodes")
    if n_nodes is None and "rows" in topo:
        n_nodes = topo.get("rows", 0) * topo.get("cols", 0)
    print(
        f"{args.file}: valid ({topo.get('kind', '?')} topology, {n_nodes} nodes, "
        f"{len(canonical.get('flow', []))} flows, {canonical.get('duration_s')} s)"
    )
    return EXIT_OK


# --- experiments / reproduce ---------------------------------------------------------------


def cmd_experiments(args: argparse.Namespace) -> int:
    from manetfair import experiments

    listing: list[dict[str, Any]] = []
    for exp in experiments.load_all():
        ok, why = exp.availability()
        listing.append(
            {
                "id": exp.id,
                "paper": exp.paper,
                # The paper's authors, year and short title: `paper` is the file name
                # of its text, which tells a reader nothing.
                "title": exp.paper_title or exp.paper,
                "figure": exp.figure,
                "description": exp.description,
                "available": ok,
                "reason": why,
                "missing_arms": [
                    {"axis": a, "value": v, "reason": r} for a, v, r in exp.missing_arms()
                ],
                "refused_arms": [
                    {"axis": a, "value": v, "reason": r} for a, v, r in exp.refused_arms()
                ],
            }
        )
    if args.json:
        print(json.dumps({"experiments": listing}))
        return EXIT_OK
    width = max(len(x["id"]) for x in listing)
    pwidth = max(len(x["title"]) for x in listing)
    fwidth = max(len(x["figure"]) for x in listing)
    print(
        f"{'id':<{width}}  {'available':<9}  {'paper':<{pwidth}}  "
        f"{'figure/table':<{fwidth}}  description"
    )
    for x in listing:
        print(
            f"{x['id']:<{width}}  {_availability_word(x):<9}  {x['title']:<{pwidth}}  "
            f"{x['figure']:<{fwidth}}  {x['description']}"
        )
        if not x["available"]:
            print(f"{'':<{width}}  why not: {x['reason']}")
        for arm in x["missing_arms"]:
            print(f"{'':<{width}}  arm {arm['axis']} = {arm['value']} waits: {arm['reason']}")
        for arm in x["refused_arms"]:
            print(f"{'':<{width}}  arm {arm['axis']} = {arm['value']} refused: {arm['reason']}")
    return EXIT_OK


def cmd_examples(args: argparse.Namespace) -> int:
    """Copies the example scenarios shipped in the package to DIR, for editing."""
    from importlib import resources

    from manetfair.output import check_target, write_file

    source = resources.files("manetfair") / "examples"
    names = sorted(p.name for p in source.iterdir() if p.name.endswith(".toml"))
    kept = [n for n in names if (args.dir / n).exists() and not args.force]
    for name in names:  # every target to write checked before the first is written
        if name not in kept:
            check_target(args.dir / name, "examples")
    args.dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        target = args.dir / name
        if name in kept:
            print(f"kept {target} (exists; --force overwrites)", file=sys.stderr)
            continue
        write_file(target, _copier((source / name).read_bytes()))
        print(target)
    return EXIT_OK


def _copier(data: bytes) -> Callable[[Path], object]:
    """What writes `data` into a temporary file (manetfair.output.write_file)."""
    return lambda tmp: tmp.write_bytes(data)


def _availability_word(entry: dict[str, Any]) -> str:
    """yes, no, or partial: runs, but some arms wait for a scheme."""
    if not entry["available"]:
        return "no"
    return "partial" if entry["missing_arms"] else "yes"


def _batch_options(args: argparse.Namespace) -> dict[str, Any]:
    """The runner's progress callbacks and backend for a batch command."""
    options: dict[str, Any] = {}
    if getattr(args, "backend", "local") == "ray":
        from manetfair.cluster import RayBackend

        options["backend"] = RayBackend(args.address)
    elif getattr(args, "address", None):
        raise InputError("--address is for --backend ray")
    if not args.quiet:
        from manetfair.progress import BatchProgress

        progress = BatchProgress()
        options["on_start"] = progress.begin
        options["on_done"] = progress
    return options


def _close_progress(options: dict[str, Any]) -> None:
    progress = options.get("on_done")
    if progress is not None:
        progress.close()


def cmd_reproduce(args: argparse.Namespace) -> int:
    import time

    from manetfair import experiments, report
    from manetfair.reproduce import Timing, reproduce, to_json
    from manetfair.store import ResultsStore

    jobs = args.jobs or default_jobs()
    timing = Timing(jobs=jobs)
    t0 = time.perf_counter()
    known = experiments.load_all()
    args.ids = list(dict.fromkeys(args.ids))  # `reproduce X X` runs X once
    chosen = experiments.select(known, args.ids) if args.ids else known
    availability = {e.id: e.availability() for e in chosen}
    timing.expansion_s += time.perf_counter() - t0
    if args.ids:
        named = [e.id for e in chosen]  # a prefix (`league`) names all its experiments
        missing = [(i, availability[i][1]) for i in named if not availability[i][0]]
        if missing:
            for exp_id, why in missing:
                _err(f"experiment {exp_id} is not yet available: {why}")
            return EXIT_FAILURE
    from manetfair.output import Outputs

    Outputs([("results store", args.store)]).add_dir(args.out, "--out", ("index.html", "index.md"))
    options = _batch_options(args)
    with report.plot_folder(args.out) as drawn_in:
        with ResultsStore(args.store) as store:
            _log(args, f"results store: {store.path}")
            try:
                results = reproduce(
                    chosen,
                    store,
                    quick=args.quick,
                    seeds=args.seeds,
                    jobs=jobs,
                    availability=availability,
                    max_memory=args.max_memory,
                    reception=args.reception,
                    platform=args.platform,
                    both_platforms=args.both_platforms,
                    draw_into=drawn_in,
                    timing=timing,
                    **options,
                )
            finally:
                _close_progress(options)
        report.write(results, args.out, drawn_in=drawn_in, timing=timing, store_path=store.path)
    _log(args, f"report: {args.out / 'index.html'}")
    if args.json:
        print(json.dumps(to_json(results)))
    else:
        _print_reproduction(results, sys.stdout)
    return EXIT_OK


def _print_reproduction(results: Sequence[Any], out: TextIO) -> None:
    from manetfair.pages import fmt_number
    from manetfair.report import verdict_words

    unavailable = [r for r in results if not r.available]
    for r in results:
        if not r.available:
            continue
        held, total = r.holds_count()
        c_held, controls = r.controls_count()
        extra = f", {c_held}/{controls} controls hold" if controls else ""
        out.write(
            f"\n{r.experiment.id} ({r.experiment.title}) on {r.platform}: "
            f"{held}/{total} claims hold{extra}, {len(r.outcomes)} runs\n"
        )
        width = max((len(v.what) for v in r.verdicts), default=5)
        out.write(
            f"  {'claim':<{width}}  {'paper':>10}  {'measured':>10}  {'dev':>7}  "
            f"{r.other_platform:>10}  verdict\n"
        )
        out.writelines(
            f"  {v.what:<{width}}  {fmt_number(v.paper):>10}  {fmt_number(v.measured):>10}  "
            f"{v.margin_text():>7}  "
            f"{fmt_number(v.other.measured) if v.other else 'not run':>10}  "
            f"{verdict_words(v)}\n"
            for v in r.verdicts
        )
        out.writelines(
            f"  arm {axis} = {value} not yet available: {why}\n"
            for axis, value, why in r.experiment.missing_arms()
        )
        out.writelines(
            f"  arm {axis} = {value} refused by the stack: {why}\n"
            for axis, value, why in r.experiment.refused_arms()
        )
        pending = r.experiment.pending_claims()
        if pending:
            out.write(f"  {len(pending)} claim(s) wait for those arms (listed in the report)\n")
    if unavailable:
        out.write(
            f"\nnot yet available ({len(unavailable)}): "
            + ", ".join(r.experiment.id for r in unavailable)
            + "\n"
        )


# --- sweep / export -----------------------------------------------------------------------


def cmd_sweep(args: argparse.Namespace) -> int:
    from manetfair import claims, throttle
    from manetfair.pages import fmt_number
    from manetfair.runner import RunSpec, execute
    from manetfair.scenario import Scenario, parse_param
    from manetfair.store import ResultsStore

    base = Scenario.from_file(args.file)
    axes: list[tuple[str, list[Any]]] = [parse_param(s, multi=True) for s in args.param]
    keys = [k for k, _ in axes]
    if len(set(keys)) != len(keys):
        raise InputError("sweep: each --param key may be given once; list its values v1,v2,...")
    if "seed" in keys:
        raise InputError(
            "sweep: --param seed=... and --seeds both set the seed; give the seeds with "
            "--seeds N (seeds 1..N), not as a parameter"
        )
    if "duration_s" in keys and args.duration is not None:
        raise InputError(
            "sweep: --param duration_s=... and --duration both set the duration; give one"
        )
    if args.platform is not None:
        if "platform" in keys:
            raise InputError(
                "sweep: --platform and --param platform=... both set the platform; give one"
            )
        base = base.with_overrides({"platform": args.platform})
    grid_points = math.prod(len(values) for _, values in axes)
    if grid_points * args.seeds > MAX_RUNS:
        raise InputError(
            f"sweep: {grid_points} grid points × {args.seeds} seeds = "
            f"{grid_points * args.seeds} runs, "
            f"more than {MAX_RUNS} in one sweep; split it into several"
        )
    specs = []
    for combo in itertools.product(*[values for _, values in axes]):
        variant = dict(zip(keys, combo))
        sc = base.with_overrides(variant)
        for seed in range(1, args.seeds + 1):
            specs.append(
                RunSpec(
                    sc.with_run(seed=seed, duration_s=args.duration),
                    seed,
                    variant=variant,
                    parameters=variant,
                )
            )
    options = _batch_options(args)
    jobs = args.jobs or default_jobs()
    with ResultsStore(args.store) as store:
        _log(args, f"results store: {store.path}; {len(specs)} runs")
        try:
            outcomes = execute(
                throttle.complete(specs, store, jobs=jobs),
                store,
                jobs=jobs,
                max_memory=args.max_memory,
                **options,
            )
        finally:
            _close_progress(options)
    if args.out is not None:
        from manetfair.sweeps import draw_outcomes

        name = str(base.data.get("name", Path(args.file).stem))
        for path in draw_outcomes(outcomes, keys, args.out, name):
            _log(args, f"wrote {path}")
    runs = [claims.Run(o.spec.variant, o.spec.seed, o.summary) for o in outcomes]
    points: list[dict[str, Any]] = []
    for combo in itertools.product(*[values for _, values in axes]):
        variant = dict(zip(keys, combo))
        point: dict[str, Any] = {"variant": variant}
        for name in ("aggregate_kbps", "jain_index"):
            mean, half = claims.mean_ci(claims.per_run_values({"field": name}, runs, variant))
            point[name] = {"mean": mean, "ci95": half if math.isfinite(half) else None}
        point["seeds"] = sum(1 for r in runs if claims.matches(r.variant, variant))
        points.append(point)
    if args.json:
        print(
            json.dumps(
                {
                    "scenario": str(args.file),
                    "runs": [
                        {
                            "variant": o.spec.variant,
                            "seed": o.spec.seed,
                            "run_id": o.run_id,
                            "cached": o.cached,
                            "summary": o.summary,
                        }
                        for o in outcomes
                    ],
                    "points": points,
                }
            )
        )
        return EXIT_OK
    cached = sum(o.cached for o in outcomes)
    print(f"{len(outcomes)} runs ({cached} from the store, {len(outcomes) - cached} simulated)")
    head = [*keys, "seeds", "aggregate kbit/s (95% CI)", "Jain index (95% CI)"]
    rows = []
    for point in points:
        cells = [str(point["variant"][k]) for k in keys] + [str(point["seeds"])]
        for name in ("aggregate_kbps", "jain_index"):
            m, h = point[name]["mean"], point[name]["ci95"]
            cells.append(fmt_number(m) + (f" ± {fmt_number(h)}" if h is not None else ""))
        rows.append(cells)
    _print_table(head, rows, sys.stdout)
    return EXIT_OK


def _print_table(head: Sequence[str], rows: Sequence[Sequence[str]], out: TextIO) -> None:
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows)]
    out.writelines(
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() + "\n"
        for row in [head, *rows]
    )


def cmd_shares(args: argparse.Namespace) -> int:
    from contextlib import nullcontext

    from manetfair import throttle
    from manetfair.scenario import Scenario
    from manetfair.store import ResultsStore

    sc = Scenario.from_file(args.file).with_overrides(_overrides(args.param))
    if throttle.throttle_table(sc.data) is None:
        sc = sc.with_overrides({"throttle.enforce": False})
    sc = throttle.without_shaping(sc)
    sc.canonical_json()  # bad input fails here, before any calibration run
    refs: list[throttle.Reference] = []
    if not args.no_measure:
        with (
            nullcontext(ResultsStore(args.store))
            if args.store is not None
            else throttle.scratch_store()
        ) as store:
            done, refs = throttle.measure_references(
                [sc], store, jobs=args.jobs or default_jobs(), alone=False
            )
        sc = done[0]
    report = throttle.report(sc)
    report["references"] = [r.as_json() for r in refs]
    if args.tc:
        canon = json.loads(sc.canonical_json())
        ids = [n["id"] for n in canon.get("node", [])] or [0]
        for line in throttle.tc_commands(report, args.dev, args.subnet, first_id=min(ids)):
            print(line)
    elif args.json:
        print(json.dumps(report))
    else:
        _print_shares(report, sys.stdout)
    return EXIT_OK


def _print_shares(report: dict[str, Any], out: TextIO) -> None:
    def ids(xs: Sequence[Any]) -> str:
        return " ".join(str(x) for x in xs)

    def num(x: Any, fmt: str) -> str:
        return "-" if x is None else format(x, fmt)

    out.write(
        f"L-regions: radius {report['l_region_range_m']} m, {len(report['regions'])} regions "
        f"with at least one flow\n"
    )
    head = [
        "flow",
        "src",
        "dst",
        "hops",
        "phi",
        "iter",
        "bottleneck regions (centres)",
        "Thr_max kbit/s",
        "r kbit/s",
        "delta ms",
    ]
    rows = [
        [
            str(f["id"]),
            str(f["src"]),
            str(f["dst"]),
            str(f["hops"]),
            f["phi_exact"] or "-",
            str(f["iteration"]),
            ids(f["bottleneck"]),
            num(f["thr_max_kbps"], ".1f"),
            num(f["rate_kbps"], ".1f"),
            num(None if f["delta_s"] is None else f["delta_s"] * 1000, ".2f"),
        ]
        for f in report["flows"]
    ]
    _print_table(head, rows, out)
    out.writelines(
        f"flow {f['id']} loads the L-regions centred at {ids(f['regions'])}\n"
        for f in report["flows"]
    )
    for r in report.get("references", []):
        st = r["settings"]
        out.write(
            f"Thr_max({r['key']} hops) = {r['kbps']:.1f} kbit/s, measured: one "
            f"{st['transport']} flow of {st['mss_bytes']}-byte segments over a {r['key']}-hop "
            f"chain {st['spacing_m']} m apart, {st['data_rate_mbps']} Mbit/s, RTS threshold "
            f"{st['rts_threshold_bytes']} B, {len(r['per_seed_kbps'])} seeds of "
            f"{st['duration_s']} s from {st['warmup_s']} s on "
            f"({', '.join(f'{x:.1f}' for x in r['per_seed_kbps'])})\n"
        )


def cmd_export(args: argparse.Namespace) -> int:
    from manetfair.export import export
    from manetfair.store import ResultsStore, default_path

    path = args.store if args.store is not None else default_path()
    if not Path(path).exists():
        raise InputError(
            f"{path}: no results store here (pass --store PATH or set MANETFAIR_STORE)"
        )
    from manetfair.output import Outputs

    tables = ("runs", "flows", "series", "experiment_runs")
    Outputs([("results store", path)]).add_dir(
        args.out, "--out", [f"{t}.{args.format}" for t in tables]
    )
    with ResultsStore(path, read_only=True) as store:
        for written in export(store, args.out, args.format):
            print(written)
    return EXIT_OK


def cmd_plot(args: argparse.Namespace) -> int:
    from manetfair.cli_figures import cmd_plot as plot

    return plot(args)


def cmd_timeline(args: argparse.Namespace) -> int:
    from manetfair.cli_figures import cmd_timeline as timeline

    return timeline(args)


def cmd_compare(args: argparse.Namespace) -> int:
    from manetfair.cli_figures import cmd_compare as compare

    return compare(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
