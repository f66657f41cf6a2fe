"""The demo's machines (demo.machines): seeded idempotently through the services, and resumed where the
last run of the simulator stopped (seqs and meters, machines.provisioning), so a restarted demo raises no
meter alert."""

from __future__ import annotations

from decimal import Decimal

from demo import machines as demo
from demo.seed import seed_demo
from jackpots.models import PoolLevel, PoolMember
from machines import protocol, provisioning
from machines.models import LinkGroup, LinkMember, Machine
from machines.services import gateway


def test_seeding_twice_makes_one_linked_floor(db: None) -> None:
    hall = seed_demo()
    seed_demo()
    machines = Machine.objects.filter(venue=hall.venue, asset_number__startswith=demo.ASSET_PREFIX)
    assert machines.count() == demo.MACHINES
    group = LinkGroup.objects.get(venue=hall.venue, code=demo.GROUP_CODE)
    assert group.pool.name == demo.POOL_NAME and group.same_type_and_denomination
    assert LinkMember.objects.filter(group=group, left_at__isnull=True).count() == demo.MACHINES
    assert PoolMember.objects.filter(pool=group.pool, removed_at__isnull=True).count() == demo.MACHINES
    levels = PoolLevel.objects.filter(pool=group.pool).order_by("position")
    assert [(lv.name, lv.amount) for lv in levels] == [(spec.name, spec.seed) for spec in demo.LEVELS]
    assert {(m.machine_type, m.denomination) for m in machines} == {(demo.MACHINE_TYPE, demo.DENOMINATION)}
    assert any(demo.GROUP_CODE in note for note in hall.notes)


def test_a_resumed_machine_continues_its_seqs_and_meters(db: None) -> None:
    hall = seed_demo()
    machine = Machine.objects.get(venue=hall.venue, asset_number=f"{demo.ASSET_PREFIX}01")
    gateway.hello(machine_id=machine.pk, message=protocol.Hello(last_seq=0, software_version="SIM-1.0"))
    messages = [
        protocol.parse_object({"type": "play", "seq": 1, "game_id": "g-1", "bet": "1.00", "win": "0.40"}),
        protocol.parse_object(
            {
                "type": "meters",
                "seq": 2,
                "coin_in": "1.00",
                "coin_out": "0.40",
                "jackpots_paid": "0.00",
                "credits": "19.40",
                "games_played": 1,
            }
        ),
        protocol.parse_object({"type": "play", "seq": 3, "game_id": "g-2", "bet": "0.60", "win": "1.20"}),
    ]
    replies = gateway.receive(machine_id=machine.pk, messages=messages)
    assert [r["status"] for r in replies] == ["accepted"] * 3
    machine.refresh_from_db()
    profile = provisioning.resume_profile(machine, index=0)
    assert profile.next_seq == 4
    # The last snapshot plus the play after it.
    assert profile.meters.coin_in == Decimal("1.60") and profile.meters.coin_out == Decimal("1.60")
    assert profile.meters.games_played == 2 and profile.meters.credits == Decimal("19.40")
    credentials = provisioning.issue_credentials([machine], actor=hall.operator)
    assert credentials[0].profile.asset == machine.asset_number and credentials[0].token
