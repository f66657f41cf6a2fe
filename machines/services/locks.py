"""Every lock of the machines app, each through its rank (halls.locks): a machine (every write about it
serializes on its row), then its link, then its hits; a pool's locks (jackpots.services.locks) after."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from halls.errors import NotFound
from halls.locks import Rank, take, take_many
from machines.models import LinkGroup, LinkMember, Machine, ProgressiveHit


def lock_machine(machine_id: int) -> Machine:
    """The machine row FOR UPDATE, with its venue."""
    take(Rank.MACHINE, machine_id)
    machine = (
        Machine.objects.select_for_update(of=("self",)).select_related("venue").filter(pk=machine_id).first()
    )
    if machine is None:
        raise NotFound(_("No machine %(machine_id)s.") % {"machine_id": machine_id}, code="unknown_machine")
    return machine


def lock_machines(machine_ids: Sequence[int], *, sql: str | None = None) -> list[Machine]:
    """The machines FOR UPDATE in id order (two batches never wait on each other crosswise), with their
    venues. `sql`: the caller's own SELECT ... ORDER BY id FOR UPDATE of them, for rows that carry more
    than the machine (the gateway's, with their links); its one parameter is the ids, sorted."""
    ids = sorted(machine_ids)
    take_many(Rank.MACHINE, ids)
    if sql is not None:
        return list(Machine.objects.raw(sql, [ids]))
    return list(Machine.objects.select_for_update().select_related("venue").filter(pk__in=ids).order_by("pk"))


def skip_locked_machines(machines: QuerySet[Machine]) -> QuerySet[Machine]:
    """These machines FOR UPDATE SKIP LOCKED: those another transaction holds are left out (it proves them
    alive), so this never waits."""
    take(Rank.MACHINE)
    return machines.select_for_update(of=("self",), skip_locked=True)


def update_skipping_locked(sql: str, params: Sequence[Any]) -> None:
    """The caller's own UPDATE of machine rows that locks them FOR UPDATE SKIP LOCKED in id order (the
    gateway's heartbeat, `gateway_rows.mark_heard`): as `skip_locked_machines`, it never waits (a row
    another transaction holds is left out: that one writes it)."""
    take(Rank.MACHINE)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def lock_link_group(group_id: int) -> LinkGroup:
    """A link group FOR UPDATE, with its pool (after the machine joining it)."""
    take(Rank.LINK, ("group", group_id))
    return LinkGroup.objects.select_for_update(of=("self",)).select_related("pool").get(pk=group_id)


def lock_link_member(*, group_id: int, machine: Machine) -> LinkMember | None:
    """The machine's current membership of the group FOR UPDATE (after the machine), or None."""
    take(Rank.LINK, ("member", group_id, machine.pk))
    return (
        LinkMember.objects.select_for_update(of=("self",))
        .select_related("group__pool")
        .filter(group_id=group_id, machine=machine, left_at__isnull=True)
        .first()
    )


def lock_hit(hit_id: int) -> ProgressiveHit:
    """A progressive hit FOR UPDATE, with its level (after its machine)."""
    take(Rank.HIT, hit_id)
    return ProgressiveHit.objects.select_for_update(of=("self",)).select_related("level").get(pk=hit_id)
