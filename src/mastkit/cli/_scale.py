"""Options shared by ``annotate`` and ``attribute`` for bigger runs: ``--engine local|ray``,
``--address``, ``--workers``, ``--batch-size``, ``--rpm`` and ``--shard i/N``.

Ray is imported only when ``--engine ray`` is chosen (:func:`open_engine`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from mastkit.cli._common import EXIT_USAGE, err
from mastkit.errors import MastkitError
from mastkit.scale.shard import Shard, parse_shard
from mastkit.scale.worker import LocalPacer, pace_provider

if TYPE_CHECKING:
    from mastkit.scale.ray_engine import RayEngine


class Engine(StrEnum):
    local = "local"
    ray = "ray"


EngineOpt = Annotated[
    Engine,
    typer.Option(
        help="Where the per-trace work runs: this process, or a Ray cluster (pip install 'mastkit[ray]').",
        envvar="MASTKIT_ENGINE",
    ),
]
AddressOpt = Annotated[
    str | None,
    typer.Option(
        help="Ray cluster to join (e.g. auto, ray://head:10001); default: start a local one.",
        envvar="MASTKIT_RAY_ADDRESS",
    ),
]
WorkersOpt = Annotated[
    int | None, typer.Option(min=1, help="Ray workers (default: one per CPU of the cluster).")
]
BatchSizeOpt = Annotated[int, typer.Option(min=1, help="Ray: traces per batch sent to a worker.")]
RpmOpt = Annotated[
    float | None,
    typer.Option(
        min=0.001,
        help="Requests per minute to the provider, over all workers (default: no limit).",
        envvar="MASTKIT_RPM",
    ),
]
ShardOpt = Annotated[
    str | None,
    typer.Option(
        help="Only this job's share of the traces, i/N (0 <= i < N), by content hash: for job arrays.",
        envvar="MASTKIT_SHARD",
    ),
]


def shard_option(text: str | None) -> Shard | None:
    """The parsed ``--shard`` (exit 2 with a message when it is malformed)."""
    if text is None:
        return None
    try:
        return parse_shard(text)
    except MastkitError as exc:
        err.print(Text("error: ", style="bold red") + Text(str(exc)))
        raise typer.Exit(EXIT_USAGE) from None


def pace_locally(target: Any, rpm: float | None) -> None:
    """``--rpm`` on the local engine: pace the annotator's or attributor's provider."""
    provider = getattr(target, "provider", None)
    if rpm and provider is not None:
        pace_provider(provider, LocalPacer(rpm))


@contextlib.contextmanager
def open_engine(
    engine: Engine,
    *,
    address: str | None,
    workers: int | None,
    batch_size: int,
    concurrency: int,
    rpm: float | None,
) -> Iterator[RayEngine | None]:
    """The Ray engine for ``--engine ray`` (None for local); exit 2 when Ray is missing or the
    cluster cannot be reached."""
    if engine is Engine.local:
        if address is not None:
            err.print("--address is for --engine ray")
            raise typer.Exit(EXIT_USAGE)
        yield None
        return
    try:
        from mastkit.scale.ray_engine import RayEngine
    except ImportError:
        err.print(
            Text("error: ", style="bold red") + Text("--engine ray needs Ray: pip install 'mastkit[ray]'")
        )
        raise typer.Exit(EXIT_USAGE) from None
    try:
        ray_engine = RayEngine(
            address=address, workers=workers, batch_size=batch_size, concurrency=concurrency, rpm=rpm
        )
    except MastkitError as exc:
        err.print(Text("error: ", style="bold red") + Text(str(exc)))
        raise typer.Exit(EXIT_USAGE) from None
    with ray_engine:
        yield ray_engine
