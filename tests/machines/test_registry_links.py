"""The registry (tokens, validation, states) and link groups (the per-jurisdiction link rule)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User

from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import AuditEntry, Venue
from jackpots.models import Contribution, Pool, PoolMember
from machines import rules
from machines.models import LinkGroup, LinkMember, Machine
from machines.services import gateway, links, push, registry
from tests.jackpots.pool_fixtures import make_pool
from tests.machines.machine_fixtures import (
    an10_venue,
    link,
    machine,
    nothing_written,
    play,
    pool_operator,
    register,
    slot_pool,
    statuses,
)

__all__ = ["an10_venue", "link", "machine", "pool_operator", "slot_pool"]

pytestmark = pytest.mark.django_db

D = Decimal


def test_registration_shows_the_token_once_and_keeps_its_hash(an10_venue: Venue, pool_operator: User) -> None:
    m, token = register(an10_venue, pool_operator, asset="C-0042")
    assert len(token) >= 40 and token not in m.token_hash and len(m.token_hash) == 64
    assert (m.state, m.lock_reason, m.online, m.last_seq) == ("in_service", "", False, 0)
    assert AuditEntry.objects.filter(action="machine.registered", object_id=str(m.pk)).exists()
    assert registry.authenticate(venue_id=an10_venue.pk, asset_number="C-0042", token=token) == m
    assert registry.authenticate(venue_id=None, asset_number="C-0042", token=token) == m
    assert registry.authenticate(venue_id=an10_venue.pk, asset_number="C-0042", token=token + "x") is None
    assert registry.authenticate(venue_id=an10_venue.pk + 1, asset_number="C-0042", token=token) is None
    assert registry.authenticate(venue_id=None, asset_number="C-0043", token=token) is None
    assert registry.authenticate(venue_id=None, asset_number="C-0042", token="") is None
    new = registry.rotate_token(machine=m, actor=pool_operator)
    assert registry.authenticate(venue_id=None, asset_number="C-0042", token=token) is None
    assert registry.authenticate(venue_id=None, asset_number="C-0042", token=new) == m


def test_the_same_asset_number_in_two_venues(
    an10_venue: Venue, other_venue: Venue, pool_operator: User
) -> None:
    a, token_a = register(an10_venue, pool_operator, asset="S-1")
    b, token_b = register(other_venue, pool_operator, asset="S-1")
    assert registry.authenticate(venue_id=None, asset_number="S-1", token=token_a) == a
    assert registry.authenticate(venue_id=None, asset_number="S-1", token=token_b) == b
    assert registry.authenticate(venue_id=an10_venue.pk, asset_number="S-1", token=token_b) is None
    with pytest.raises(Conflict) as info:
        register(an10_venue, pool_operator, asset="S-1")
    assert info.value.code == "asset_taken"


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"asset_number": "A 1"}, "bad_asset_number"),
        ({"asset_number": "A:1"}, "bad_asset_number"),
        ({"asset_number": ""}, "bad_asset_number"),
        ({"machine_type": "A"}, "bad_machine_type"),
        ({"modality": "virtual"}, "bad_modality"),
        ({"modality": "two_player", "positions": 1}, "bad_positions"),
        ({"modality": "individual", "positions": 2}, "bad_positions"),
        ({"modality": "multi_position", "positions": 1}, "bad_positions"),
        ({"denomination": D("0")}, "bad_denomination"),
        ({"denomination": D("0.005")}, "bad_denomination"),
        ({"denomination": 0.2}, "bad_denomination"),
        ({"software_version": " "}, "required"),
        ({"serial": ""}, "required"),
    ],
)
def test_registration_refuses_bad_input(
    an10_venue: Venue, pool_operator: User, changes: dict[str, Any], code: str
) -> None:
    args: dict[str, Any] = {
        "venue": an10_venue,
        "asset_number": "A1",
        "machine_type": "B",
        "modality": "individual",
        "manufacturer": "Cirsa",
        "model": "Rio",
        "serial": "SN1",
        "denomination": D("0.20"),
        "paytable_id": "PT",
        "software_version": "1.0",
        "location": "",
        "positions": 1,
        "actor": pool_operator,
    }
    with nothing_written(), pytest.raises(InvalidInput) as info:
        registry.register_machine(**{**args, **changes})
    assert info.value.code == code


def test_multi_position_machines(an10_venue: Venue, pool_operator: User) -> None:
    m, _ = register(an10_venue, pool_operator, modality="multi_position", positions=6)
    assert (m.modality, m.positions) == ("multi_position", 6)


def test_state_changes_are_audited_and_pushed(
    machine: Machine,
    pool_operator: User,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    sent: list[tuple[int, dict[str, Any]]] = []
    monkeypatch.setattr(push, "send_now", lambda machine_id, payload: sent.append((machine_id, payload)))
    with django_capture_on_commit_callbacks(execute=True):
        registry.set_machine_state(machine=machine, state="locked", reason="cleaning", actor=pool_operator)
    assert (machine.state, machine.lock_reason) == ("locked", "operator")
    with django_capture_on_commit_callbacks(execute=True):
        registry.set_machine_state(
            machine=machine, state="out_of_service", reason="repair", actor=pool_operator
        )
        registry.set_machine_state(machine=machine, state="in_service", reason="fixed", actor=pool_operator)
    assert sent == [
        (machine.pk, {"type": "lock", "reason": "operator"}),
        (machine.pk, {"type": "lock", "reason": "operator"}),
        (machine.pk, {"type": "unlock"}),
    ]
    entries = AuditEntry.objects.filter(action="machine.state_changed", object_id=str(machine.pk)).order_by(
        "pk"
    )
    assert [(e.data["state"], e.data["reason"]) for e in entries] == [
        ("locked", "cleaning"),
        ("out_of_service", "repair"),
        ("in_service", "fixed"),
    ]
    with pytest.raises(InvalidInput):
        registry.set_machine_state(machine=machine, state="broken", reason="", actor=pool_operator)


def test_push_waits_for_the_commit(
    machine: Machine, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    sent: list[tuple[int, dict[str, Any]]] = []
    monkeypatch.setattr(push, "send_now", lambda machine_id, payload: sent.append((machine_id, payload)))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        push.to_machine(machine.pk, {"type": "unlock"})
    assert sent == [] and len(callbacks) == 1
    callbacks[0]()
    assert sent == [(machine.pk, {"type": "unlock"})]


# --- link groups -------------------------------------------------------------------------------------------


def test_the_link_rule_is_documented_per_jurisdiction() -> None:
    for code in ("ML", "AN96", "AN10", "CT", "EU"):
        assert rules.link_requires_same_type_and_denomination(code) is True
    assert rules.link_requires_same_type_and_denomination("XX") is rules.DEFAULT_SAME_TYPE_AND_DENOMINATION
    assert rules.link_mismatch(True, ("C", "0.20"), frozenset()) is None
    assert rules.link_mismatch(True, ("C", "0.20"), frozenset({("C", "0.20")})) is None
    assert "type B" in (rules.link_mismatch(True, ("C", "0.20"), frozenset({("B", "0.20")})) or "")
    assert "0.50" in (rules.link_mismatch(True, ("C", "0.50"), frozenset({("C", "0.20")})) or "")
    assert rules.link_mismatch(False, ("C", "0.50"), frozenset({("B", "0.20")})) is None


def test_joining_adds_the_pool_member(machine: Machine, link: LinkGroup, slot_pool: Pool) -> None:
    assert link.same_type_and_denomination is True  # AN10's default
    member = PoolMember.objects.get(pool=slot_pool, source_type="machine", source_id=str(machine.pk))
    assert member.removed_at is None
    assert AuditEntry.objects.filter(action="machine.linked").exists()


@pytest.mark.parametrize(("machine_type", "denomination"), [("C", "0.50"), ("B", "0.20")])
def test_a_machine_of_another_type_or_denomination_may_not_join(
    an10_venue: Venue,
    pool_operator: User,
    machine: Machine,
    link: LinkGroup,
    machine_type: str,
    denomination: str,
) -> None:
    other, _ = register(an10_venue, pool_operator, machine_type=machine_type, denomination=denomination)
    with nothing_written(), pytest.raises(InvalidInput) as info:
        links.join_link(group=link, machine=other, actor=pool_operator)
    assert info.value.code == "link_mismatch"
    assert not LinkMember.objects.filter(machine=other).exists()


def test_a_group_without_the_rule_takes_mixed_machines(
    an10_venue: Venue, pool_operator: User, machine: Machine, slot_pool: Pool
) -> None:
    mixed = links.create_link_group(
        venue=an10_venue,
        code="MIX",
        name="Mixta",
        pool=slot_pool,
        same_type_and_denomination=False,
        actor=pool_operator,
    )
    a, _ = register(an10_venue, pool_operator, machine_type="B", denomination="0.10")
    b, _ = register(an10_venue, pool_operator, machine_type="C", denomination="1.00")
    links.join_link(group=mixed, machine=a, actor=pool_operator)
    links.join_link(group=mixed, machine=b, actor=pool_operator)
    assert LinkMember.objects.filter(group=mixed, left_at=None).count() == 2


def test_one_active_link_per_machine_and_leaving(
    an10_venue: Venue, pool_operator: User, machine: Machine, link: LinkGroup, slot_pool: Pool
) -> None:
    with pytest.raises(Conflict) as info:
        links.join_link(group=link, machine=machine, actor=pool_operator)
    assert info.value.code == "already_linked"
    gateway.receive(machine_id=machine.pk, messages=[play(1)])
    links.leave_link(group=link, machine=machine, actor=pool_operator)
    with pytest.raises(NotFound):
        links.leave_link(group=link, machine=machine, actor=pool_operator)
    # Unlinked, it plays without contributing; linked again, it contributes again.
    assert statuses(gateway.receive(machine_id=machine.pk, messages=[play(2)])) == [(2, "accepted", "")]
    assert Contribution.objects.filter(idempotency_key=f"machine:{machine.pk}:2").count() == 0
    links.join_link(group=link, machine=machine, actor=pool_operator)
    gateway.receive(machine_id=machine.pk, messages=[play(3)])
    assert Contribution.objects.filter(idempotency_key=f"machine:{machine.pk}:3").count() == 2


def test_machines_link_to_machine_pools_of_their_venue(
    an10_venue: Venue, other_venue: Venue, pool_operator: User, slot_pool: Pool, link: LinkGroup
) -> None:
    table_pool = make_pool(an10_venue, pool_operator, code="CARR-T")
    with pytest.raises(InvalidInput) as info:
        links.create_link_group(
            venue=an10_venue,
            code="T",
            name="T",
            pool=table_pool,
            same_type_and_denomination=None,
            actor=pool_operator,
        )
    assert info.value.code == "pool_not_for_machines"
    with pytest.raises(InvalidInput) as info:
        links.create_link_group(
            venue=other_venue,
            code="O",
            name="O",
            pool=slot_pool,
            same_type_and_denomination=None,
            actor=pool_operator,
        )
    assert info.value.code == "pool_outside_scope"
    with pytest.raises(Conflict) as conflict:
        links.create_link_group(
            venue=an10_venue,
            code="L1",
            name="dup",
            pool=slot_pool,
            same_type_and_denomination=None,
            actor=pool_operator,
        )
    assert conflict.value.code == "link_group_code_taken"
    stranger, _ = register(other_venue, pool_operator)
    with pytest.raises(InvalidInput) as info:
        links.join_link(group=link, machine=stranger, actor=pool_operator)
    assert info.value.code == "machine_outside_venue"
