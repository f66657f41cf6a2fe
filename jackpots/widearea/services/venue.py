"""A venue's side of a wide-area pool: its mirror (a local pool with the central's wide-area levels, same
names and rates, and any local levels of its own) that its machines and tables contribute to through the
pool engine as to any pool; the batches forwarded to the central through the outbox (written with the
cursor that says what they cover, in one transaction: each row forwarded exactly once); the hits reported;
and what it does with the central's entries on "network.<code>" (levels, decisions, reconciliations).

Link-failure policy: the venue offers the central's level while it heard the central's levels within the
pool's window (`offered`); past it, per the pool's setting, its machines show the level unavailable and
play on their local levels, or lock (their group's broadcast stops). Contributions go on into the mirror
and the outbox, sent when the line returns; when the levels are heard again the venue sends its totals to
be reconciled with the central's.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from halls import events, money
from halls.actors import Actor
from halls.cashier.models import PayableKind
from halls.cashier.services import payables
from halls.errors import Conflict, DomainError, InvalidInput
from halls.eventtypes import EventType, WideAreaDecided, WideAreaReconciled, WideAreaState
from halls.link.kinds import LinkKind
from halls.link.models import Destination, OutboxMessage
from halls.link.services import outbox
from halls.models import Network, Venue
from halls.services import audit
from jackpots.models import Contribution, Pool, PoolLevel, PoolMember
from jackpots.services import pools
from jackpots.services.locks import lock_levels
from jackpots.services.pools import LevelSpec
from jackpots.widearea import core, hooks, metrics
from jackpots.widearea.models import (
    ReconciliationState,
    Side,
    WideAreaClaim,
    WideAreaMirror,
    WideAreaReconciliation,
)
from jackpots.widearea.services import feed
from jackpots.widearea.services.differences import record_differences

log = logging.getLogger("hall.widearea")
VENUE = "widearea.venue"
BATCH_LIMIT = 50_000  # rows per batch (a backlog after a long outage goes in several)


def count_refusal(error: DomainError) -> None:
    """Log and count a refusal at the venue once (a machine's retry of the same message is answered from
    the gateway's replay, never refused again)."""
    log.warning("wide-area input refused at the venue: %s (%s)", error.code, error.message)
    metrics.refused("venue", error.code)


def _refuse(error: DomainError) -> DomainError:
    count_refusal(error)
    return error


def join(
    *,
    venue: Venue,
    network: Network,
    central_code: str,
    levels: Sequence[LevelSpec],
    local_levels: Sequence[LevelSpec] = (),
    authorisation_ref: str,
    actor: Actor,
) -> WideAreaMirror:
    """The venue takes part in the central's pool `central_code`: its mirror pool, with the wide-area
    `levels` (the central's names and rates; their seeds here are 0: the mirror's meter is what this
    venue's members contributed) and its own `local_levels`. Machines join it by a link group, tables as
    members, as for any pool."""
    if not network.venues.filter(pk=venue.pk).exists():
        raise InvalidInput(
            _("%(venue)s is not in the network %(network)s.")
            % {"venue": venue.name, "network": network.code},
            code="not_in_network",
        )
    wide = [
        LevelSpec(
            name=s.name, seed=money.ZERO, contribution_rate=s.contribution_rate, reserve_rate=s.reserve_rate
        )
        for s in levels
    ]
    with transaction.atomic():
        pool = pools.create_pool(
            name=_("Wide-area %(code)s") % {"code": central_code},
            code=f"{central_code}@{venue.licence_number}"[:40],
            jurisdiction=venue.jurisdiction,
            authorisation_ref=authorisation_ref,
            rule_pack="",
            venue=venue,
            levels=[*wide, *local_levels],
            carousel_bet=None,
            actor=actor,
        )
        mirror = WideAreaMirror.objects.create(
            venue=venue,
            network=network,
            central_code=central_code,
            pool=pool,
            wide_levels=[s.name for s in levels],
            joined_at=timezone.now(),
        )
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="widearea.joined",
            obj=mirror,
            data={"central": central_code, "pool": pool.pk, "wide_levels": mirror.wide_levels},
        )
    return mirror


def mirror_of_pool(pool_id: int) -> WideAreaMirror | None:
    return WideAreaMirror.objects.filter(pool_id=pool_id, left_at__isnull=True).first()


def offered(mirror: WideAreaMirror, now: datetime | None = None) -> core.Availability:
    return core.availability(
        mirror.heard_at, now or timezone.now(), mirror.offline_after_seconds, mirror.offline_action
    )


def central_levels(mirror: WideAreaMirror) -> dict[str, Decimal]:
    return {str(item["level"]): Decimal(str(item["amount"])) for item in mirror.levels or []}


# --- forwarding ------------------------------------------------------------------------------------------


def forward(*, mirror: WideAreaMirror, limit: int = BATCH_LIMIT) -> int | None:
    """The mirror's contributions to its wide-area levels not yet forwarded, as one outbox message of
    each level's exact sums, written with the cursor that says what it covers (one transaction: a row is
    forwarded once). The pool's lock first: every contribution in flight has committed, none starts, so no
    row with a lower id can commit after the cursor passed it. Returns the new cursor (None: nothing)."""
    with transaction.atomic():
        lock_levels(mirror.pool_id)
        row = WideAreaMirror.objects.get(pk=mirror.pk)
        wide = list(
            PoolLevel.objects.filter(pool_id=row.pool_id, name__in=row.wide_levels).values_list(
                "pk", flat=True
            )
        )
        found = list(
            Contribution.objects.filter(level_id__in=wide, id__gt=row.forwarded_through)  # (level, id) index
            .order_by("id")
            .values_list("id", "level__name", "bet", "to_meter", "to_reserve", "house", "source")[:limit]
        )
        if not found:
            return None
        kinds = sorted({str(f[6]).partition(":")[0] for f in found})
        sums = core.add_up((name, bet, m, r, h) for _id, name, bet, m, r, h, _source in found)
        first, through = row.forwarded_through, found[-1][0]
        forwarded = core.merge(core.sums_from_payload(row.forwarded), sums)
        WideAreaMirror.objects.filter(pk=row.pk).update(
            forwarded_through=through, forwarded=core.sums_payload(forwarded), batches=row.batches + 1
        )
        payload = {
            "pool": row.central_code,
            "from": first,
            "through": through,
            "kinds": kinds,  # the members' kinds (machine, table): the central checks OP-32
            "levels": core.sums_payload(sums),
        }
        audit.record(
            venue_id=row.venue_id, actor=VENUE, action="widearea.batch_forwarded", obj=row, data=payload
        )
        outbox.enqueue(venue_id=row.venue_id, kind=LinkKind.WA_CONTRIBUTIONS, payload=payload)
    return through


def forward_all() -> int:
    """Every active mirror's batch (the beat's task, every HALL_WIDE_AREA_FORWARD_SECONDS)."""
    return sum(
        1
        for mirror in WideAreaMirror.objects.filter(left_at__isnull=True).order_by("pk")
        if forward(mirror=mirror)
    )


# --- hits ------------------------------------------------------------------------------------------------


def hit_refusal(mirror: WideAreaMirror, level: str, now: datetime | None = None) -> DomainError | None:
    """Why a member's hit on `level` of the mirror cannot go to the central (None: it can)."""
    if level not in mirror.wide_levels:
        return InvalidInput(
            _("The level %(level)s is not a wide-area level of %(code)s.")
            % {"level": level, "code": mirror.central_code},
            code="level_not_linked",
        )
    if offered(mirror, now) != core.Availability.AVAILABLE:
        return Conflict(
            _(
                "The wide-area level %(level)s is unavailable: the central has not been heard for "
                "longer than the pool's window."
            )
            % {"level": level},
            code="level_unavailable",
        )
    return None


def report_hit(
    *,
    mirror: WideAreaMirror,
    source: str,
    level: str,
    key: str,
    actor: Actor,
    context: dict[str, Any] | None = None,
    at: datetime | None = None,
) -> WideAreaClaim:
    """A member's hit on a wide-area level: the claim kept here and the hit sent to the central (outbox),
    in one transaction. Refused (and counted): a level not linked, the level unavailable, a key reported
    before. The member waits for the decision (a machine locked for its hand pay)."""
    now = at or timezone.now()
    refusal = hit_refusal(mirror, level, now)
    if refusal is not None:
        raise _refuse(refusal)
    kind, _sep, member = source.partition("/")[0].partition(":")
    if not PoolMember.objects.filter(
        pool_id=mirror.pool_id, source_type=kind, source_id=member, removed_at__isnull=True
    ).exists():
        raise _refuse(
            InvalidInput(
                _("%(source)s is not a member of %(code)s.")
                % {"source": source, "code": mirror.central_code},
                code="not_a_member",
            )
        )
    if WideAreaClaim.objects.filter(mirror=mirror, key=key).exists():
        raise _refuse(
            Conflict(_("The hit %(key)s was already reported.") % {"key": key}, code="duplicate_hit")
        )
    with transaction.atomic():
        claim = WideAreaClaim.objects.create(
            mirror=mirror, key=key, source=source, level=level, reported_at=now, context=context or {}
        )
        payload = {
            "pool": mirror.central_code,
            "level": level,
            "key": key,
            "source": source,
            "at": now.isoformat(),
            "heard_at": mirror.heard_at.isoformat() if mirror.heard_at else None,
        }
        audit.record(
            venue_id=mirror.venue_id, actor=actor, action="widearea.hit_reported", obj=claim, data=payload
        )
        outbox.enqueue(venue_id=mirror.venue_id, kind=LinkKind.WA_HIT, payload=payload)
    return claim


# --- the state the venue's members are in -----------------------------------------------------------------


def _record_state(mirror: WideAreaMirror, state: core.Availability, now: datetime) -> WideAreaState:
    """The state written and audited; the event is the caller's to emit (after every audit entry of its
    transaction: events and the outbox are numbered last, halls.locks)."""
    WideAreaMirror.objects.filter(pk=mirror.pk).update(state=state.value, state_since=now)
    mirror.state, mirror.state_since = state.value, now
    data = WideAreaState(
        pool=mirror.pool_id, central=mirror.central_code, state=state.value, levels=list(mirror.wide_levels)
    )
    audit.record(
        venue_id=mirror.venue_id, actor=VENUE, action="widearea.state_changed", obj=mirror, data=dict(data)
    )
    if state != core.Availability.AVAILABLE:
        metrics.OFFLINE.labels(action=state.value).inc()
    return data


def _set_state(mirror: WideAreaMirror, state: core.Availability, now: datetime) -> None:
    data = _record_state(mirror, state, now)
    events.emit(f"pool.{mirror.pool_id}", EventType.WIDE_AREA_STATE, data)


def watch(now: datetime | None = None) -> int:
    """Record every mirror whose state changed (the central silent past the window: withdrawn); the
    machines' broadcast reads `offered` itself, so this is the record, not the switch."""
    at = now or timezone.now()
    changed = 0
    for mirror in WideAreaMirror.objects.filter(left_at__isnull=True).order_by("pk"):
        state = offered(mirror, at)
        if state.value != mirror.state and state != core.Availability.AVAILABLE:
            with transaction.atomic():
                _set_state(mirror, state, at)
            changed += 1
    return changed


def send_meters(*, mirror: WideAreaMirror) -> None:
    """The venue's forwarded totals to the central, to be reconciled with what it received (as on link
    restore; also on demand: an operator's check, the benchmark's last step). Every earlier batch is ahead
    of it in the outbox, so the central compares like with like."""
    with transaction.atomic():
        lock_levels(mirror.pool_id)  # as `forward`: no batch commits between the totals read and their number
        row = WideAreaMirror.objects.get(pk=mirror.pk)
        _meters(row)


def _meters(mirror: WideAreaMirror) -> None:
    """Enqueue the venue's forwarded totals, for the central to reconcile with what it received."""
    outbox.enqueue(
        venue_id=mirror.venue_id,
        kind=LinkKind.WA_METERS,
        payload={
            "pool": mirror.central_code,
            "through": mirror.forwarded_through,
            "levels": mirror.forwarded,
        },
    )


# --- the central's entries -------------------------------------------------------------------------------


def _mirrors(code: Any) -> list[WideAreaMirror]:
    return list(
        WideAreaMirror.objects.filter(central_code=str(code), left_at__isnull=True)
        .select_related("venue")
        .order_by("pk")
    )


def outage_gap() -> timedelta:
    """A silence of the central this long means the line was down (two heartbeats missed): the levels
    heard after it come with a reconciliation of the venue's meters, whether or not the level had been
    withdrawn (a cut shorter than the pool's window is reconciled too)."""
    return timedelta(seconds=2 * settings.HALL_WIDE_AREA_HEARTBEAT_SECONDS)


def levels_heard(payload: dict[str, Any]) -> None:
    """The central's levels: shown by this venue's machines from now; the link is up. A mirror that had
    withdrawn the level offers it again; it, and any mirror that had not heard the central for
    `outage_gap`, sends its meters to be reconciled."""
    now = timezone.now()
    heard = WideAreaMirror.objects.filter(
        central_code=str(payload.get("pool")),
        left_at__isnull=True,
        venue__licence_number__in=[str(v) for v in payload.get("venues") or []],
    )
    # Two statements whatever the number of mirrors (four entries a second reach every venue): the ones
    # coming back from a cut, then every one's levels.
    back = list(
        heard.filter(~Q(state=core.Availability.AVAILABLE.value) | Q(heard_at__lt=now - outage_gap()))
        .select_related("venue")
        .order_by("pk")
    )
    restored = [m for m in back if m.state != core.Availability.AVAILABLE]
    for pool_id in sorted({m.pool_id for m in back}):  # as `forward` (before the mirrors' rows): the
        lock_levels(pool_id)  # totals sent below are those of every batch numbered before them
    policy: dict[str, Any] = {}
    if payload.get("offline_after_seconds"):
        policy["offline_after_seconds"] = int(payload["offline_after_seconds"])
    if payload.get("offline_action"):
        policy["offline_action"] = str(payload["offline_action"])
    heard.update(
        levels=payload.get("levels") or [],
        levels_at=parse_datetime(str(payload.get("at") or "")),
        heard_at=now,
        **policy,
    )
    # One installation holds one venue's mirror; the loopback (tests, the embedded demo) holds several:
    # every audit entry first, then the events and the outbox (halls.locks' order).
    shown = [(m, _record_state(m, core.Availability.AVAILABLE, now)) for m in restored]
    for mirror, data in shown:
        events.emit(f"pool.{mirror.pool_id}", EventType.WIDE_AREA_STATE, data)
    for mirror in back:
        mirror.refresh_from_db()
        _meters(mirror)


def _pay(claim: WideAreaClaim) -> None:
    payer = hooks.payer_of(claim.source)
    if payer is not None:
        payer(claim)
        return
    pay_at_cashier(claim)


def pay_at_cashier(claim: WideAreaClaim) -> None:
    """The default payer: the claim's amount waits at this venue's cashier as a payable (none for 0)."""
    amount = claim.amount or money.ZERO
    payables.hold_award_accounts([claim.mirror.venue_id])
    with payables.venue_language(claim.mirror.venue_id):
        payables.create_payable(
            venue_id=claim.mirror.venue_id,
            kind=PayableKind.TABLE,
            source=f"widearea.claim:{claim.pk}",
            description=_("%(source)s · %(level)s · wide-area %(code)s")
            % {"source": claim.source, "level": claim.level, "code": claim.mirror.central_code},
            amount=amount,
            actor=VENUE,
        )


def decided(payload: dict[str, Any]) -> None:
    """A hit decided at the central: every venue shows the reset level; the winning venue's claim gets its
    outcome and is paid at its cashier (once: the stream's position, and the claim decided once)."""
    now = timezone.now()
    for mirror in _mirrors(payload.get("pool")):
        WideAreaMirror.objects.filter(pk=mirror.pk).update(levels=payload.get("levels") or mirror.levels)
        if mirror.venue.licence_number != payload.get("venue"):
            continue
        claim = WideAreaClaim.objects.filter(
            mirror=mirror, key=str(payload.get("key")), decided_at__isnull=True
        ).first()
        if claim is None:
            log.warning("a wide-area decision for an unknown or decided claim %s", payload.get("key"))
            continue
        claim.outcome = str(payload.get("outcome"))
        claim.amount = money.cents(Decimal(str(payload.get("amount"))))
        claim.decided_at = now
        claim.save(update_fields=["outcome", "amount", "decided_at"])
        shown = WideAreaDecided(
            pool=mirror.pool_id,
            central=mirror.central_code,
            level=claim.level,
            source=claim.source,
            outcome=claim.outcome,  # type: ignore[typeddict-item]
            amount=claim.amount,
        )
        _pay(claim)  # its locks (a machine's, the cashier's accounts) before the audit entry
        audit.record(
            venue_id=mirror.venue_id,
            actor=VENUE,
            action="widearea.hit_decided_here",
            obj=claim,
            data=dict(shown),
        )
        events.emit(f"pool.{mirror.pool_id}", EventType.WIDE_AREA_DECIDED, shown)


def reconciled(payload: dict[str, Any]) -> None:
    """The central's answer to this venue's meters: its records of the venue (what it received, the
    batches it accepted, its ledger of them) checked here against what the venue forwarded
    (core.reconcile), the reconciliation and each difference recorded here too, once (by the meters
    message's sequence the central names: its entry applied again records nothing), audited, counted,
    and shown on the pool's stream."""
    for mirror in _mirrors(payload.get("pool")):
        if mirror.venue.licence_number != payload.get("venue"):
            continue
        key = int(payload.get("sequence") or 0)
        if WideAreaReconciliation.objects.filter(
            side=Side.VENUE, venue_id=mirror.venue_id, pool_code=mirror.central_code, key=key
        ).exists():
            continue
        sent = _meters_sent(mirror, key)
        stated = core.sums_from_payload(sent["levels"] if sent else mirror.forwarded)
        through = int(sent["through"]) if sent else mirror.forwarded_through
        received = core.sums_from_payload(payload.get("levels") or {})
        # An older central tells only its received totals: those stand for its other records.
        applied = core.sums_from_payload(payload.get("applied", payload.get("levels")) or {})
        ledger = core.sums_from_payload(payload.get("ledger", payload.get("levels")) or {})
        found = core.reconcile(stated=stated, received=received, applied=applied, ledger=ledger)
        now = timezone.now()
        row = WideAreaReconciliation.objects.create(
            side=Side.VENUE,
            pool_code=mirror.central_code,
            venue_id=mirror.venue_id,
            key=key,
            through=through,
            stated=core.sums_payload(stated),
            received=core.sums_payload(received),
            applied=core.sums_payload(applied),
            ledger=core.sums_payload(core.money_only(ledger)),
            differences=len(found),
            state=ReconciliationState.DIFFERS if found else ReconciliationState.AGREED,
            reconciled_at=now,
        )
        record_differences(row, found)
        for check in core.Check:
            count = sum(1 for f in found if f.check == check)
            if count:
                metrics.RECONCILE_DIFFERENCES.labels(side=Side.VENUE, check=check.value).inc(count)
        metrics.RECONCILIATIONS.labels(side=Side.VENUE, state=row.state).inc()
        shown = WideAreaReconciled(
            pool=mirror.pool_id,
            central=mirror.central_code,
            state=row.state,  # type: ignore[typeddict-item]
            differences=len(found),
        )
        audit.record(
            venue_id=mirror.venue_id,
            actor=VENUE,
            action="widearea.meters_reconciled",
            obj=row,
            data={
                "sequence": key,
                "state": row.state,
                "differences": [f.as_payload() for f in found],
                "central_differences": len(payload.get("differences") or []),
            },
        )
        feed.reconciled(row)  # after the audit entry (the lock order: the audit's head, then the feed's)
        events.emit(f"pool.{mirror.pool_id}", EventType.WIDE_AREA_RECONCILED, shown)


def _meters_sent(mirror: WideAreaMirror, sequence: int) -> dict[str, Any] | None:
    """The venue's meters message numbered `sequence` as it sent it (its outbox keeps every message): the
    totals the central reconciled, whatever was forwarded since (None: not found here)."""
    sent = (
        OutboxMessage.objects.filter(
            venue_id=mirror.venue_id,
            destination=Destination.CENTRAL,
            sequence=sequence,
            kind=LinkKind.WA_METERS,
        )
        .values_list("payload", flat=True)
        .first()
    )
    if not isinstance(sent, dict) or sent.get("pool") != mirror.central_code:
        return None
    return sent


def last_reconciliation(mirror: WideAreaMirror) -> WideAreaReconciliation | None:
    """The mirror's latest reconciliation as recorded here (None: never reconciled)."""
    return (
        WideAreaReconciliation.objects.filter(
            side=Side.VENUE, venue_id=mirror.venue_id, pool_code=mirror.central_code
        )
        .order_by("-reconciled_at", "-pk")
        .first()
    )


def balance(*, mirror: WideAreaMirror) -> dict[str, Any]:
    """The venue's check, per wide-area level, to the cent: what its members contributed (the mirror's
    ledger) = what it forwarded + what waits to be batched; and the mirror pool's own balancing."""
    from jackpots.services import reports

    rows = Contribution.objects.filter(pool_id=mirror.pool_id, level__name__in=mirror.wide_levels)
    contributed = core.add_up(rows.values_list("level__name", "bet", "to_meter", "to_reserve", "house"))
    waiting = core.add_up(
        rows.filter(id__gt=mirror.forwarded_through).values_list(
            "level__name", "bet", "to_meter", "to_reserve", "house"
        )
    )
    accounted = core.merge(core.sums_from_payload(mirror.forwarded), waiting)
    mismatches = [d.as_payload() for d in core.differences(contributed, accounted)]
    report = reports.balance(Pool.objects.get(pk=mirror.pool_id))
    return {"holds": report.holds and not mismatches, "mismatches": mismatches, "report": report.as_dict()}
