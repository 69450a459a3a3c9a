"""The commands that draw and compare finished runs (`manetfair plot`, `manetfair
timeline`), kept apart
from `manetfair.cli` so that the run commands' start-up does not grow."""

from __future__ import annotations

import argparse
from pathlib import Path

from manetfair.errors import InputError


def add_plot(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "run",
        metavar="RUN",
        help="a folder `manetfair run FILE --out DIR` wrote, or a run id of the results "
        "store (a unique prefix is enough)",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="where to draw (default: the run folder itself, or ./run-<id> for a stored run)",
    )
    p.add_argument("--store", type=Path, metavar="PATH", help="results store file")


def cmd_plot(args: argparse.Namespace) -> int:
    from manetfair.runplots import RunData, write_run_page
    from manetfair.store import open_existing

    folder = Path(args.run)
    if folder.is_dir():
        data = RunData.of_folder(folder)
        out = args.out if args.out is not None else folder
    else:
        with open_existing(args.store) as store:
            data = RunData.of_stored(store, args.run)
        out = args.out if args.out is not None else Path(f"run-{args.run}")
    written = write_run_page(data, out)
    print(written[-1])
    return 0


def add_timeline(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", type=Path, metavar="TRACE", help="a packet trace of `run --trace`")
    p.add_argument(
        "--from", dest="start", type=float, required=True, metavar="S", help="window start, s"
    )
    p.add_argument("--to", dest="end", type=float, required=True, metavar="S", help="window end, s")
    p.add_argument(
        "--out",
        type=Path,
        metavar="STEM",
        help="writes STEM.png, STEM.svg and STEM.csv (default: TRACE's name + -timeline)",
    )


def cmd_timeline(args: argparse.Namespace) -> int:
    import math

    from manetfair import timeline

    if not args.trace.is_file():
        raise InputError(
            f"{args.trace}: no such trace file (`manetfair run FILE --trace TRACE` writes one)"
        )
    if not (math.isfinite(args.start) and math.isfinite(args.end) and 0 <= args.start < args.end):
        raise InputError(f"timeline: --from {args.start} --to {args.end}: need 0 <= from < to")
    stem = args.out if args.out is not None else args.trace.with_name(args.trace.stem + "-timeline")
    tl = timeline.read(args.trace, args.start, args.end)
    title = f"{args.trace.name}: frames on the air, {args.start:g} s to {args.end:g} s"
    for path in timeline.draw(tl, stem, title):
        print(path)
    return 0


def add_compare(p: argparse.ArgumentParser) -> None:
    for side in ("a", "b"):
        p.add_argument(
            side,
            metavar=side.upper(),
            help="a run folder, a run id (with --store), a report folder, a `reproduce "
            "--json` file, or a results store PATH.duckdb[@VERSION]",
        )
    p.add_argument("--store", type=Path, metavar="PATH", help="the store run ids are looked up in")
    p.add_argument(
        "--rel-tol",
        type=float,
        default=0.01,
        metavar="X",
        help="mark numbers that differ by more than this fraction (default 0.01)",
    )
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="also write compare.json, compare.txt and, for two runs, overlaid figures",
    )


def cmd_compare(args: argparse.Namespace) -> int:
    import json
    import math

    from manetfair import compare

    if not (math.isfinite(args.rel_tol) and args.rel_tol >= 0):
        raise InputError(f"compare: --rel-tol {args.rel_tol}: need a number >= 0")
    a, b = compare.load(args.a, args.store), compare.load(args.b, args.store)
    doc = compare.compare(a, b, args.rel_tol)
    if args.out is not None:
        compare.write(doc, a, b, args.out)
    print(json.dumps(doc) if args.json else compare.text(doc), end="\n" if args.json else "")
    return 0
