"""Runs on a Ray cluster (`--backend ray [--address ADDR]`, docs/cluster.md).

Each run is one Ray task; results come back to the calling process as they finish
and are stored there, one by one, like local runs. A task whose worker dies (the
process is killed, the machine is lost) is run again by Ray on another worker, up
to `max_retries` times; a run that raised an error is not retried, it is reported.
Every worker must have the same manetfair build as the caller: a task returns the
code version it ran with, and a mismatch fails the run instead of storing results
under the wrong key. Ray is an optional extra: `pip install 'manetfair[cluster]'`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from manetfair.errors import InputError

Work = list[tuple[list[int], Any]]


def _run_task(simulate: Any, text: str, origin: str) -> tuple[str, str, str]:
    """The task body, on a worker: the run and the worker's code version."""
    from manetfair.runner import code_version

    summary, traces = simulate(text, origin)
    return summary, traces, code_version()


class RayBackend:
    """Sends runs to a Ray cluster: `address` as `ray.init` takes it ("auto" for the
    cluster this machine belongs to, "HOST:PORT" of a head node); None starts a
    private local instance."""

    def __init__(self, address: str | None = None, *, max_retries: int = 3) -> None:
        try:
            import ray
        except ImportError:
            raise InputError("--backend ray needs Ray: pip install 'manetfair[cluster]'") from None
        self.ray = ray
        self.address = address
        self.max_retries = max_retries

    def _connect(self) -> None:
        if self.ray.is_initialized():
            return
        options: dict[str, Any] = {"log_to_driver": False, "logging_level": "ERROR"}
        if self.address is None:
            options["include_dashboard"] = False
        self.ray.init(address=self.address, **options)

    def simulate_all(
        self, work: Work, simulate: Any
    ) -> Iterator[tuple[list[int], tuple[str, str] | Exception]]:
        """Yields each piece of work's (summary, traces), or the error it raised, as it
        finishes on the cluster; cancels what is left if the caller stops early."""
        from manetfair.runner import code_version

        if not work:
            return
        self._connect()
        ray = self.ray
        task = ray.remote(num_cpus=1, max_retries=self.max_retries, retry_exceptions=False)(
            _run_task
        )
        fn = ray.put(simulate)
        pending = {
            task.remote(fn, spec.scenario.to_json(), spec.scenario.origin): indices
            for indices, spec in work
        }
        mine = code_version()
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                ref = ready[0]
                indices = pending.pop(ref)
                try:
                    summary, traces, theirs = ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - one failed run must not lose others
                    cause = getattr(exc, "cause", None)
                    yield indices, cause if isinstance(cause, Exception) else exc
                    continue
                if theirs != mine:
                    yield (
                        indices,
                        RuntimeError(
                            f"a worker runs manetfair {theirs}, this process {mine}: "
                            "install the same build on every machine of the cluster"
                        ),
                    )
                else:
                    yield indices, (summary, traces)
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
