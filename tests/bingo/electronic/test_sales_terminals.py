"""Terminals: registered as cash devices with a token shown once, rotated, taken out of service and back
(audited, told to the terminal), retired; and `playable`, the one rule of who may buy."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from bingo.electronic.models import Terminal, TerminalState
from bingo.electronic.services import readmodels, terminals
from halls import events
from halls.cashier.models import DeviceKind
from halls.cashier.services import devices
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType
from halls.models import AuditEntry, Venue
from tests.bingo.electronic.sales_support import OnSale, on_sale
from tests.bingo.electronic.support import make_speciality

pytestmark = pytest.mark.django_db


def test_a_terminal_is_a_cash_device_with_a_token_shown_once(venue: Venue, operator: User) -> None:
    speciality = make_speciality(venue, operator)
    terminal, token = terminals.register_terminal(speciality=speciality, name="Puesto 1", actor=operator)
    assert terminal.device.kind == DeviceKind.TERMINAL and terminal.state == TerminalState.IN_SERVICE
    assert devices.authenticate(device_id=terminal.device.pk, token=token) == terminal.device
    assert token not in terminal.device.token_hash
    assert AuditEntry.objects.filter(action="electronic.terminal_registered").count() == 1
    with pytest.raises(Conflict) as caught:
        terminals.register_terminal(speciality=speciality, name="Puesto 1", actor=operator)
    assert caught.value.code == "device_name_taken"
    assert Terminal.objects.count() == 1


def test_a_rotated_token_replaces_the_old_one(venue: Venue, operator: User) -> None:
    speciality = make_speciality(venue, operator)
    terminal, old = terminals.register_terminal(speciality=speciality, name="Puesto 1", actor=operator)
    new = terminals.rotate_token(terminal=terminal, actor=operator)
    assert devices.authenticate(device_id=terminal.device.pk, token=old) is None
    assert devices.authenticate(device_id=terminal.device.pk, token=new) == terminal.device


def test_out_of_service_and_back_is_audited_and_told_to_the_terminal(
    venue: Venue,
    operator: User,
    cashier: User,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    sale = on_sale(venue, operator, cashier)
    heard: list[events.Event] = []
    monkeypatch.setattr(events, "publish", heard.append)
    with django_capture_on_commit_callbacks(execute=True):
        terminals.set_state(
            terminal=sale.terminal, state="out_of_service", reason="screen broken", actor=operator
        )
        with pytest.raises(Conflict) as caught:
            readmodels.playable(Terminal.objects.select_related("device").get(pk=sale.terminal.pk))
        assert caught.value.code == "terminal_out_of_service"
        terminals.set_state(terminal=sale.terminal, state="out_of_service", actor=operator)  # no change
        terminals.set_state(terminal=sale.terminal, state="in_service", actor=operator)
    assert [(e.type, e.data["state"]) for e in heard] == [
        (EventType.TERMINAL_STATE, "out_of_service"),
        (EventType.TERMINAL_STATE, "in_service"),
    ]
    assert heard[0].stream == f"terminal.{sale.terminal.pk}" and heard[0].data["reason"] == "screen broken"
    entries = AuditEntry.objects.filter(action="electronic.terminal_state").order_by("pk")
    assert [e.data["to"] for e in entries] == ["out_of_service", "in_service"]
    assert readmodels.playable(Terminal.objects.select_related("device").get(pk=sale.terminal.pk))


def test_a_failed_terminal_returns_only_by_passing_a_verification(sale_ready: OnSale, operator: User) -> None:
    Terminal.objects.filter(pk=sale_ready.terminal.pk).update(state=TerminalState.FAILED)
    with pytest.raises(Conflict) as caught:
        terminals.set_state(terminal=sale_ready.terminal, state="in_service", actor=operator)
    assert caught.value.code == "terminal_failed"
    with pytest.raises(InvalidInput) as bad:
        terminals.set_state(terminal=sale_ready.terminal, state="failed", actor=operator)
    assert bad.value.code == "bad_state"
    terminals.set_state(terminal=sale_ready.terminal, state="out_of_service", actor=operator)


def test_a_retired_terminal_is_out_of_service_and_its_token_dead(sale_ready: OnSale, operator: User) -> None:
    terminal = terminals.retire_terminal(terminal=sale_ready.terminal, actor=operator)
    assert terminal.state == TerminalState.OUT_OF_SERVICE and not terminal.device.active
    assert devices.authenticate(device_id=terminal.device.pk, token=sale_ready.token) is None
    with pytest.raises(Conflict) as caught:
        terminals.set_state(terminal=terminal, state="in_service", actor=operator)
    assert caught.value.code == "device_retired"


def test_playable_names_the_open_session(sale_ready: OnSale) -> None:
    assert readmodels.playable(sale_ready.terminal) == sale_ready.session


@pytest.fixture
def sale_ready(venue: Venue, operator: User, cashier: User) -> OnSale:
    return on_sale(venue, operator, cashier)
