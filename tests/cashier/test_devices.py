"""Cash devices: registration (the token once, its hash kept), rotation, retirement, the device's
authentication, and the bill reader's "notes in" message: idempotent by seq, another body under a seq
refused, another venue's card 404, a blocked card refused; refusals write nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from halls.cashier import cardnumber
from halls.cashier.ledger import Kind
from halls.cashier.models import CashDevice, DeviceMessage, LedgerTransaction, PlayerCard, TxKind
from halls.cashier.services import devices, player_cards
from halls.cashier.services import ledger as books
from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import AuditEntry, Venue
from tests.api_support import api_client, refused

D = Decimal


@pytest.fixture
def reader(venue: Venue, operator: User) -> tuple[CashDevice, str]:
    return devices.register_device(venue_id=venue.pk, name="Lector T-04", kind="bill_reader", actor=operator)


@pytest.fixture
def card(venue: Venue, operator: User) -> PlayerCard:
    return player_cards.issue_card(venue_id=venue.pk, actor=operator)


def _written() -> tuple[int, int, int]:
    return LedgerTransaction.objects.count(), DeviceMessage.objects.count(), AuditEntry.objects.count()


@pytest.mark.django_db
def test_registration_keeps_only_the_hash_and_rotation_and_retirement_stop_the_old_token(
    venue: Venue, operator: User, reader: tuple[CashDevice, str]
) -> None:
    device, token = reader
    assert device.token_hash == devices.hash_token(token) and token not in device.token_hash
    assert devices.authenticate(device_id=device.pk, token=token) == device
    assert devices.authenticate(device_id=device.pk, token=token + "x") is None
    assert devices.authenticate(device_id=device.pk + 1000, token=token) is None
    with pytest.raises(Conflict) as taken:
        devices.register_device(venue_id=venue.pk, name="Lector T-04", kind="bill_reader", actor=operator)
    assert taken.value.code == "device_name_taken"
    with pytest.raises(InvalidInput) as kind:
        devices.register_device(venue_id=venue.pk, name="X", kind="toaster", actor=operator)
    assert kind.value.details["field"] == "kind"
    fresh = devices.rotate_token(device=device, actor=operator)
    assert devices.authenticate(device_id=device.pk, token=token) is None
    assert devices.authenticate(device_id=device.pk, token=fresh) == device
    devices.retire_device(device=device, actor=operator)
    assert devices.authenticate(device_id=device.pk, token=fresh) is None
    with pytest.raises(Conflict):
        devices.rotate_token(device=device, actor=operator)
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert {"cashier.device_registered", "cashier.device_token_rotated", "cashier.device_retired"} <= actions
    assert not any(token in str(e.data) or fresh in str(e.data) for e in AuditEntry.objects.all())


@pytest.mark.django_db
def test_notes_in_credits_the_card_from_the_stacker_once_per_seq(
    venue: Venue, reader: tuple[CashDevice, str], card: PlayerCard
) -> None:
    device, _token = reader
    first = devices.notes_in(device=device, seq=1, card=cardnumber.qr_payload(card.number), amount="20.00")
    assert not first.replayed and first.result["balance"] == "20.00"
    tx = LedgerTransaction.objects.get(pk=first.result["transaction"])
    assert tx.kind == TxKind.DEVICE_CASH_IN and tx.shift is None and tx.device == "Lector T-04"
    assert books.device_account(device).balance == D("20.00") and player_cards.balance(card) == D("20.00")
    before = _written()
    retry = devices.notes_in(device=device, seq=1, card=card.number, amount=D("20"))  # same, said otherwise
    assert retry.replayed and retry.result == first.result and _written() == before
    with pytest.raises(Conflict) as other_amount:
        devices.notes_in(device=device, seq=1, card=card.number, amount="50.00")
    assert other_amount.value.code == "seq_reused"
    other = player_cards.issue_card(venue_id=venue.pk, actor="system")
    before = _written()
    with pytest.raises(Conflict) as other_card:
        devices.notes_in(device=device, seq=1, card=other.number, amount="20.00")
    assert other_card.value.code == "seq_reused"
    assert _written() == before
    second = devices.notes_in(device=device, seq=2, card=card.number, amount="5.00")
    assert second.result["balance"] == "25.00"
    trial = books.trial_balance(venue.pk)
    assert trial.holds and trial.by_kind[Kind.DEVICE_CASH] == D("25.00")


@pytest.mark.django_db
def test_a_device_cannot_reach_another_venues_card_nor_a_blocked_one(
    venue: Venue, other_venue: Venue, operator: User, reader: tuple[CashDevice, str], card: PlayerCard
) -> None:
    device, _token = reader
    theirs = player_cards.issue_card(venue_id=other_venue.pk, actor="system")
    before = _written()
    with pytest.raises(NotFound) as unknown:
        devices.notes_in(device=device, seq=1, card=theirs.number, amount="10.00")
    assert unknown.value.code == "unknown_card"
    player_cards.block_card(card=card, reason="lost", actor=operator)
    before = _written()
    with pytest.raises(Conflict) as blocked:
        devices.notes_in(device=device, seq=1, card=card.number, amount="10.00")
    assert blocked.value.code == "card_blocked"
    for seq, number, amount, field in (
        (-1, card.number, "1.00", "seq"),
        (True, card.number, "1.00", "seq"),
        (1, card.number[:-1] + "0" if card.number[-1] != "0" else card.number[:-1] + "1", "1.00", "card"),
        (1, card.number, "0.005", "amount"),
        (1, card.number, "-1", "amount"),
    ):
        with pytest.raises(InvalidInput) as bad:
            devices.notes_in(device=device, seq=seq, card=number, amount=amount)
        assert bad.value.details["field"] == field
    assert _written() == before
    # Refused messages were not kept: once unblocked, seq 1 is taken as new.
    player_cards.unblock_card(card=card, actor=operator)
    assert not devices.notes_in(device=device, seq=1, card=card.number, amount="10.00").replayed


# --- API ------------------------------------------------------------------------------------------------


def _device_client(device: CashDevice, token: str) -> APIClient:
    client = api_client(None)
    client.credentials(HTTP_AUTHORIZATION=f"CashDevice {device.pk}:{token}")
    return client


@pytest.mark.django_db
def test_the_operator_registers_rotates_and_retires_through_the_api(
    venue: Venue, operator: User, cashier: User
) -> None:
    client = api_client(operator)
    url = f"/api/cashier/venues/{venue.pk}/devices/"
    made = client.post(url, {"name": "Lector 1", "kind": "bill_reader"}, format="json")
    assert made.status_code == 201, made.content
    device_id, token = made.json()["device"]["id"], made.json()["token"]
    assert made.json()["device"]["stacker"] == "0.00"
    refused(
        client.post(url, {"name": "Lector 1", "kind": "bill_reader"}, format="json"), 409, "device_name_taken"
    )
    refused(client.post(url, {"name": "Lector 2", "kind": "toaster"}, format="json"), 400, "bad_kind")
    refused(
        api_client(cashier).post(url, {"name": "L3", "kind": "kiosk"}, format="json"), 403, "role_required"
    )
    assert [d["name"] for d in client.get(url).json()] == ["Lector 1"]
    rotated = client.post(f"{url}{device_id}/rotate-token/")
    assert rotated.status_code == 200 and rotated.json()["token"] != token
    device = CashDevice.objects.get(pk=device_id)
    assert device.token_hash == devices.hash_token(rotated.json()["token"])
    retired = client.post(f"{url}{device_id}/retire/")
    assert retired.status_code == 200 and retired.json()["active"] is False
    refused(client.post(f"{url}{device_id + 1000}/retire/"), 404, "unknown_cash_device")


@pytest.mark.django_db
def test_notes_in_through_the_api(
    venue: Venue, other_venue: Venue, operator: User, reader: tuple[CashDevice, str], card: PlayerCard
) -> None:
    device, token = reader
    client = _device_client(device, token)
    url = "/api/cashier/device/notes-in/"
    body = {"seq": 7, "card": f"TJ:{card.number}", "amount": "50.00"}
    first = client.post(url, body, format="json")
    assert first.status_code == 201, first.content
    assert first.json()["balance"] == "50.00"
    again = client.post(url, body, format="json")
    assert again.status_code == 200 and again.json() == first.json()
    refused(client.post(url, {**body, "amount": "20.00"}, format="json"), 409, "seq_reused")
    theirs = player_cards.issue_card(venue_id=other_venue.pk, actor="system")
    refused(client.post(url, {**body, "seq": 8, "card": theirs.number}, format="json"), 404, "unknown_card")
    for amount in ("0", "-1.00", "1.234"):
        error = refused(
            client.post(url, {**body, "seq": 9, "amount": amount}, format="json"), 400, "bad_amount", "amount"
        )
        assert error["details"]["field"] == "amount"
    assert player_cards.balance(card) == D("50.00") and DeviceMessage.objects.count() == 1
    bad = _device_client(device, token + "x")
    refused(bad.post(url, body, format="json"), 401, "bad_device_token")
    refused(api_client(operator).post(url, body, format="json"), 401, "not_authenticated")
    devices.retire_device(device=device, actor=operator)
    refused(client.post(url, {**body, "seq": 10}, format="json"), 401, "bad_device_token")
