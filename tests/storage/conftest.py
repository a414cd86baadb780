"""The stores every conformance test runs against: a new store joins by adding its factory
to STORE_FACTORIES."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from docassist.storage import Store
from tests.storage.conformance import AnyStore


def _sqlite(tmp_path: Path) -> Store:
    return Store(tmp_path / "conformance.db")


STORE_FACTORIES: dict[str, Callable[[Path], Any]] = {"sqlite": _sqlite}


@pytest.fixture(params=sorted(STORE_FACTORIES))
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AnyStore]:
    store = STORE_FACTORIES[request.param](tmp_path)
    yield store
    store.close()
