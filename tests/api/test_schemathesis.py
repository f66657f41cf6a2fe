"""Every operation of the OpenAPI schema, fuzzed by schemathesis in-process (WSGI), must never answer 5xx.

Each operation gets a bounded number of generated requests (HALL_SCHEMATHESIS_EXAMPLES, default 6) per
generation mode (valid and invalid input), as an operator who is also caller and cashier of the venue; when
the ids in its path all name objects that exist (a room, a game, a session, a series, a pool, a table, a
machine, ...), as many again with those ids pinned, so the requests reach the code behind the 404s. The
examples are derandomized: a run is reproducible and CI sees the same requests as a developer.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from halls.cashier.models import CashDevice, DeviceKind, Till
from halls.cashier.services.shifts import open_shift
from halls.models import Jurisdiction, Network, Role, StaffRole
from halls.services import regions
from tests.jackpots.pool_fixtures import make_pool, venue_of
from tests.jackpots.tables.conftest import make_table
from tests.machines.machine_fixtures import register

EXAMPLES = int(os.environ.get("HALL_SCHEMATHESIS_EXAMPLES", "6"))


@pytest.fixture
def wsgi_app() -> Iterator[Any]:
    """Django's WSGI app, called in this thread (so inside the test's transaction). As Django's own test
    client does, requests do not close the database connection when they finish."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def known_ids(venue, operator, room, session, card_series, manual_game, screen) -> dict[str, int]:
    """Objects of the operator's venue, by the name of the path parameter that names them."""
    for extra in (Role.CALLER, Role.CASHIER):
        StaffRole.objects.create(user=operator, venue=venue, role=extra)
    # The casino side lives in a casino of Andalucía, where the operator holds every role too.
    casino = venue_of(Jurisdiction.AN10, "AN-C-0101", "Casino Sevilla")
    for role in Role.values:
        StaffRole.objects.create(user=operator, venue=casino, role=role)
    pool = make_pool(casino, operator, code="FUZZ-1", members=())
    table = make_table(casino, operator, pool.rule_pack, minimum=Decimal("1.00"))
    machine, _token = register(casino, operator)
    till = Till.objects.create(venue=venue, name="Caja 1")
    shift = open_shift(till=till, cashier=operator, float_amount=Decimal("50.00"), actor=operator)
    device = CashDevice.objects.create(
        venue=venue, name="Terminal 1", kind=DeviceKind.TERMINAL, token_hash="x"
    )
    # Regions and a network (halls.regions_api): the operator holds the operator role in every venue.
    melilla = regions.create_region(code="ML", name="Melilla", jurisdiction=Jurisdiction.ML, actor=operator)
    andalucia = regions.create_region(
        code="AN", name="Andalucía", jurisdiction=Jurisdiction.AN10, actor=operator
    )
    agreement = regions.record_agreement(
        regions=(melilla, andalucia), actor=operator, valid_from=timezone.localdate()
    )
    network = Network.objects.create(name="Red", code="RED", jurisdiction=Jurisdiction.ML)
    return {
        "code": "ML",
        "agreement_id": agreement.pk,
        "network_id": network.pk,
        "room_id": room.pk,
        "session_id": session.pk,
        "series_id": card_series.pk,
        "serial": 1,
        "game_id": manual_game.pk,
        "pool_id": pool.pk,
        "table_id": table.pk,
        "machine_id": machine.pk,
        "shift_id": shift.pk,
        "device_id": device.pk,
    }


def test_no_operation_of_the_api_answers_a_server_error(wsgi_app, known_ids, operator):
    schema = schemathesis.openapi.from_wsgi("/api/schema/", wsgi_app)
    headers = {"Authorization": f"Token {Token.objects.create(user=operator).key}"}
    failures: list[str] = []
    statuses: Counter[int] = Counter()
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]
        operations += 1
        names = {p.name for p in operation.path_parameters}
        pinned = {name: known_ids[name] for name in names} if names <= known_ids.keys() else None
        strategies = [operation.as_strategy(generation_mode=mode) for mode in GenerationMode]
        if pinned:
            strategies += [
                operation.as_strategy(generation_mode=mode, path_parameters=pinned) for mode in GenerationMode
            ]

        @given(case=st.one_of(strategies))
        @settings(
            max_examples=EXAMPLES * len(strategies),
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def no_server_error(case: Any) -> None:
            response = case.call(headers=headers)
            statuses[response.status_code] += 1
            case.validate_response(response, checks=[not_a_server_error], headers=headers)

        try:
            no_server_error()
        except (Exception, BaseExceptionGroup) as exc:  # collected: one run names every failing operation
            failures.append(f"{operation.label}: {str(exc)[:2000]}")
    print(operations, "operations;", sorted(statuses.items()))  # shown with -s
    assert operations > 50
    # Requests were made, and some reached the code behind authentication and lookups.
    assert sum(statuses.values()) >= operations * EXAMPLES and statuses[200] > 0, statuses
    assert not failures, "\n\n".join(failures)
