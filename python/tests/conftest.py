# SPDX-License-Identifier: Apache-2.0
import os
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def schedule_binary():
    """popalloc-schedule from the test build (scripts/run-tests.sh builds it first) when it is
    newer than every library header, or $POPALLOC_SCHEDULE."""
    given = os.environ.get("POPALLOC_SCHEDULE")
    candidates = (
        [given]
        if given
        else [
            ROOT / "build" / "test" / "examples" / "popalloc-schedule",
            ROOT / "build" / "release" / "examples" / "popalloc-schedule",
        ]
    )
    for c in candidates:
        if c and os.access(str(c), os.X_OK):
            if not given and _older_than_headers(pathlib.Path(c)):
                continue  # built from other sources than the package under test
            return str(c)
    return None


def _older_than_headers(binary: pathlib.Path) -> bool:
    built = binary.stat().st_mtime
    return any(h.stat().st_mtime > built for h in (ROOT / "include").rglob("*.hpp"))
