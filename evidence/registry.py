"""What each kind of snapshot supplies: how a queued version is computed (and what it reads with the snapshot), which
page shows it and what its downloads are called. The apps above register their kinds explicitly, from their
AppConfig.ready (`kind_register(SPEC)`; importing a kind's module registers nothing); evidence never imports them."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .kit.checker import Problem
    from .models import Snapshot


class Progress(Protocol):
    def __call__(self, percent: int, note: str, *, force: bool = False) -> None: ...


class KindCheck(Protocol):
    """A kind's artefact check: a version's files (format → bytes) and, at the end of a compute, the tree they were
    rendered from (`tree`, so the check need not parse report.json back; None for a stored version)."""

    def __call__(self, snapshot: Snapshot, files: Mapping[str, bytes], /, *,
                 tree: object | None = None) -> list[Problem]: ...


@dataclass(frozen=True)
class KindSpec:
    """One kind of snapshot: `compute` fills a claimed version (queued kinds only) and `select_related` names the
    relations it reads with the snapshot (loaded in the same query), `page_url` names the page showing a version,
    `file_name` the download name of one of its stored files, `describe` the subject's name, `check` the artefact
    checker's reading of a version's files (format → bytes; `evidence.kit.checker`, `KindCheck`), run on every
    computed version before it is stored (given the tree the compute rendered) and by `manage.py check_artefact`."""

    kind: str
    page_url: Callable[[Snapshot], str]
    compute: Callable[[Snapshot, Progress], None] | None = None
    file_name: Callable[[Snapshot, str], str] | None = None
    describe: Callable[[Snapshot], str] | None = None  # the subject as its notification names it
    select_related: tuple[str, ...] = ()
    check: KindCheck | None = None


KINDS: dict[str, KindSpec] = {}


def kind_register(spec: KindSpec) -> None:
    """Register (or replace) a kind's builder and renderers: called from the owning app's AppConfig.ready."""
    KINDS[spec.kind] = spec


def kind_spec(kind: str) -> KindSpec:
    """The registered spec of a kind (LookupError naming it if its app has not registered it)."""
    try:
        return KINDS[kind]
    except KeyError:
        raise LookupError(f"no snapshot kind {kind!r} is registered (its app's ready() registers it)") from None
