"""Link groups: machines joined to one progressive pool (spec §7). Joining adds the machine as a pool
member (source ``machine:<id>``), so its plays can contribute; the jurisdiction's link rule (machines.rules)
decides whether the group's machines must share type and denomination."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from halls.actors import Actor
from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import Venue
from jackpots.models import Pool, SourceType
from jackpots.services import pools
from machines import rules
from machines.models import LinkGroup, LinkMember, Machine
from machines.services import push
from machines.services.audit import describe, now, record
from machines.services.locks import lock_link_group, lock_link_member, lock_machine


def _pool_in_scope(pool: Pool, venue: Venue) -> bool:
    if pool.venue_id is not None:
        return bool(pool.venue_id == venue.pk)
    return pool.network is not None and pool.network.venues.filter(pk=venue.pk).exists()


def create_link_group(
    *,
    venue: Venue,
    code: str,
    name: str,
    pool: Pool,
    same_type_and_denomination: bool | None = None,
    actor: Actor,
) -> LinkGroup:
    """A link group of the venue on `pool` (a pool without a table rule pack, in the venue's scope).
    `same_type_and_denomination=None` takes the jurisdiction's rule (machines.rules)."""
    code = str(code or "").strip()
    name = str(name or "").strip()
    if not code or len(code) > 40 or not code.isprintable():
        raise InvalidInput(_("A link group needs a code of 1-40 characters."), code="bad_code")
    if not name or len(name) > 120:
        raise InvalidInput(_("A link group needs a name of 1-120 characters."), code="bad_name")
    if pool.rule_pack:
        raise InvalidInput(
            _(
                "Pool %(code)s is a table pool (%(rule_pack)s); machines link to pools "
                "without a rule pack (no seed lets one pool mix machines and tables, spec §7)."
            )
            % {"code": pool.code, "rule_pack": pool.rule_pack},
            code="pool_not_for_machines",
        )
    if not pool.active:
        raise Conflict(_("Pool %(code)s is closed.") % {"code": pool.code}, code="pool_inactive")
    if not _pool_in_scope(pool, venue):
        raise InvalidInput(
            _("Pool %(code)s is not a pool of %(venue)s.") % {"code": pool.code, "venue": venue},
            code="pool_outside_scope",
        )
    if same_type_and_denomination is None:
        same_type_and_denomination = rules.link_requires_same_type_and_denomination(venue.jurisdiction)
    elif not isinstance(same_type_and_denomination, bool):
        raise InvalidInput(_("same_type_and_denomination is true or false."), code="bad_rule")
    try:
        with transaction.atomic():
            group = LinkGroup.objects.create(
                venue=venue,
                code=code,
                name=name,
                pool=pool,
                same_type_and_denomination=same_type_and_denomination,
                created_at=now(),
            )
            record(
                venue.pk,
                actor,
                "machines.link_group_created",
                group,
                {
                    "code": code,
                    "name": name,
                    "pool": pool.pk,
                    "same_type_and_denomination": same_type_and_denomination,
                    "jurisdiction_default": rules.link_requires_same_type_and_denomination(
                        venue.jurisdiction
                    ),
                },
            )
    except IntegrityError as exc:
        if LinkGroup.objects.filter(venue=venue, code=code).exists():
            raise Conflict(
                _("Link group %(code)s exists.") % {"code": code}, code="link_group_code_taken"
            ) from exc
        raise
    return group


def join_link(*, group: LinkGroup, machine: Machine, actor: Actor) -> LinkMember:
    """Link `machine` to the group's pool. Refused (InvalidInput ``link_mismatch``, nothing written) when
    the group's rule applies and the machine's type or denomination differs from its members'."""
    with transaction.atomic():
        locked = lock_machine(machine.pk)
        group = lock_link_group(group.pk)
        if locked.venue_id != group.venue_id:
            raise InvalidInput(
                _("Machine %(asset_number)s is not in the group's venue.")
                % {"asset_number": locked.asset_number},
                code="machine_outside_venue",
            )
        current = (
            LinkMember.objects.filter(machine=locked, left_at__isnull=True).select_related("group").first()
        )
        if current is not None:
            raise Conflict(
                _("Machine %(asset_number)s is already linked to %(code)s.")
                % {"asset_number": locked.asset_number, "code": current.group.code},
                code="already_linked",
            )
        members = frozenset(
            (t, str(d))
            for t, d in Machine.objects.filter(links__group=group, links__left_at__isnull=True).values_list(
                "machine_type", "denomination"
            )
        )
        why = rules.link_mismatch(
            group.same_type_and_denomination, (locked.machine_type, str(locked.denomination)), members
        )
        if why is not None:
            raise InvalidInput(
                _("Machine %(asset_number)s cannot join %(code)s: %(why)s.")
                % {"asset_number": locked.asset_number, "code": group.code, "why": why},
                code="link_mismatch",
            )
        pools.add_member(
            pool=group.pool,
            source_type=SourceType.MACHINE,
            source_id=str(locked.pk),
            venue=locked.venue,
            actor=actor,
        )
        member = LinkMember.objects.create(group=group, machine=locked, joined_at=now())
        record(
            locked.venue_id,
            actor,
            "machine.linked",
            member,
            {**describe(locked), "group": group.pk, "code": group.code, "pool": group.pool_id},
        )
        push.relink(locked.pk)
    return member


def leave_link(*, group: LinkGroup, machine: Machine, actor: Actor) -> LinkMember:
    """Unlink `machine` from the group: it stops contributing (its pool membership ends)."""
    with transaction.atomic():
        locked = lock_machine(machine.pk)
        member = lock_link_member(group_id=group.pk, machine=locked)
        if member is None:
            raise NotFound(
                _("Machine %(asset_number)s is not linked to this group.")
                % {"asset_number": locked.asset_number},
                code="not_linked",
            )
        member.left_at = now()
        member.save(update_fields=["left_at"])
        pools.remove_member(
            pool=member.group.pool, source_type=SourceType.MACHINE, source_id=str(locked.pk), actor=actor
        )
        record(
            locked.venue_id,
            actor,
            "machine.unlinked",
            member,
            {**describe(locked), "group": member.group_id, "code": member.group.code},
        )
        push.relink(locked.pk)
    return member
