"""The door's fixtures: the fake authority (tests/door/fake_authority.py) as a real process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.door.authority_support import FakeAuthority, start_fake_authority


@pytest.fixture
def authority() -> Iterator[FakeAuthority]:
    server = start_fake_authority()
    try:
        yield server
    finally:
        server.stop()
