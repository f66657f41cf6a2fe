"""The central: an interconnected prize created on a network pool, its rounds opened, its meter sent.

Every write is one transaction with its audit entries (in each member hall's chain at the central, as the
pool engine audits a network pool) and, where the halls must hear it, its entry on "network.<code>".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.network.interconnected.decide import MAX_BALL
from bingo.network.interconnected.models import NetworkPrize, PrizeHall, PrizeKind, PrizeRound, RoundState
from bingo.network.interconnected.services.locks import lock_prize, try_lock_shared_prize
from bingo.network.interconnected.services.readmodels import live_meter
from halls import money
from halls.actors import Actor
from halls.errors import Conflict, DomainError, InvalidInput
from halls.link.kinds import LinkKind
from halls.link.services import streams
from halls.models import Network, Venue
from halls.services import audit, regions
from jackpots.models import SourceType
from jackpots.services import pools

MIN_WAIT_SECONDS = 60


def meter_seconds() -> float:
    """At most one meter entry per prize this often (a decision's is sent at once)."""
    return float(getattr(settings, "HALL_NETWORK_METER_SECONDS", 5))


def record(prize: NetworkPrize, actor: Actor, action: str, obj: Any, data: dict[str, Any]) -> None:
    """One audit entry in every member hall's chain (as a network pool's, jackpots.services.auditing)."""
    venue_ids = PrizeHall.objects.filter(prize=prize).values_list("venue_id", flat=True)
    audit.record_across(
        venue_ids=venue_ids, actor=actor, action=action, obj=obj, data={"prize": prize.code, **data}
    )


def _checked(code: str, percent: Decimal, reserve_percent: Decimal, max_ball: int, wait_seconds: int) -> None:
    if not code.strip() or len(code) > 30 or any(c in code for c in " :/"):
        raise InvalidInput(
            _("A prize code is 1–30 characters without spaces, “:” or “/”."), code="bad_prize_code"
        )
    if not Decimal(0) < percent <= money.HUNDRED or reserve_percent < 0 or percent + reserve_percent > 100:
        raise InvalidInput(
            _("The percentages of sales are above 0 and at most 100 together."), code="bad_percent"
        )
    if percent != percent.quantize(money.CENT) or reserve_percent != reserve_percent.quantize(money.CENT):
        raise InvalidInput(_("A percentage has at most 2 decimals."), code="bad_percent")
    if not 1 <= max_ball <= MAX_BALL:
        raise InvalidInput(
            _("The max ball is an extraction ordinal from 1 to %(max)s.") % {"max": MAX_BALL},
            code="bad_max_ball",
        )
    if wait_seconds < MIN_WAIT_SECONDS:
        raise InvalidInput(
            _("A round waits at least %(seconds)s seconds for the halls' results.")
            % {"seconds": MIN_WAIT_SECONDS},
            code="bad_wait",
        )


def _check_halls(network: Network, halls: Sequence[Venue]) -> None:
    if not halls:
        raise InvalidInput(_("An interconnected prize needs its member halls."), code="no_halls")
    members = set(network.venues.values_list("pk", flat=True))
    outside = [venue.name for venue in halls if venue.pk not in members]
    if outside:
        raise InvalidInput(
            _("Not in the network %(network)s: %(halls)s.")
            % {"network": network.code, "halls": ", ".join(outside)},
            code="hall_outside_network",
        )


def create_prize(
    *,
    network: Network,
    code: str,
    name: str,
    percent: Decimal,
    max_ball: int,
    seed: Decimal,
    wait_seconds: int,
    authorisation_ref: str,
    halls: Sequence[Venue],
    actor: Actor,
    reserve_percent: Decimal = Decimal(0),
    kind: PrizeKind = PrizeKind.INTERCONNECTED,
    auto_rounds: bool | None = None,
) -> NetworkPrize:
    """A new interconnected prize of `network` on a network pool of the engine (its one level: the seed,
    `percent` of sales to the meter, `reserve_percent` to the hidden reserve), `halls` its members. A Gran
    Línea / Gran Bingo (`kind`, AB-05/AB-08) has no max ball: the first completion in the network wins.
    `auto_rounds` (a Gran prize's by default: its electronic games run every minute or two): its rounds
    open by themselves (`ensure_round_locked`), the first one at once."""
    if kind != PrizeKind.INTERCONNECTED:
        max_ball = MAX_BALL
    if auto_rounds is None:
        auto_rounds = kind != PrizeKind.INTERCONNECTED
    code = code.strip()
    _checked(code, percent, reserve_percent, max_ball, wait_seconds)
    _check_halls(network, halls)
    if NetworkPrize.objects.filter(code=code).exists():
        raise Conflict(
            _("An interconnected prize %(code)s exists.") % {"code": code}, code="prize_code_taken"
        )
    with transaction.atomic():
        pool = pools.create_pool(
            name=name,
            code=f"IB-{code}",
            jurisdiction=network.jurisdiction,
            authorisation_ref=authorisation_ref,
            rule_pack="",
            network=network,
            levels=[
                pools.LevelSpec(
                    name=name.strip() or code,
                    seed=seed,
                    contribution_rate=money.rate(percent),
                    reserve_rate=money.rate(reserve_percent, name="reserve_percent"),
                )
            ],
            carousel_bet=None,
            actor=actor,
        )
        at = timezone.now()
        prize = NetworkPrize.objects.create(
            network=network,
            kind=kind,
            code=code,
            name=name.strip(),
            percent=percent,
            reserve_percent=reserve_percent,
            max_ball=max_ball,
            wait_seconds=wait_seconds,
            pool=pool,
            created_at=at,
            created_by=actor if isinstance(actor, User) else None,
            auto_rounds=auto_rounds,
        )
        for venue in sorted(halls, key=lambda v: v.pk):
            PrizeHall.objects.create(prize=prize, venue=venue, added_at=at)
            pools.add_member(
                pool=pool, source_type=SourceType.VENUE, source_id=str(venue.pk), venue=venue, actor=actor
            )
        record(
            prize,
            actor,
            "network.prize_created",
            prize,
            {
                "pool": pool.code,
                "kind": str(kind),
                "percent": str(percent),
                "reserve_percent": str(reserve_percent),
                "max_ball": max_ball,
                "wait_seconds": wait_seconds,
                "auto_rounds": auto_rounds,
                "halls": [v.licence_number for v in halls],
            },
        )
        ensure_round_locked(prize, at=at)
    return prize


def open_round(*, prize: NetworkPrize, actor: Actor, wait_seconds: int | None = None) -> PrizeRound:
    """The prize's next round: each member hall's next game in the prize's room plays it; decided once
    every hall reported, or `wait_seconds` (the prize's by default) after now among those received.
    Refused (``no_region_agreement``) when the halls span a pair of regions without a valid agreement."""
    wait = prize.wait_seconds if wait_seconds is None else wait_seconds
    if wait < MIN_WAIT_SECONDS:
        raise InvalidInput(
            _("A round waits at least %(seconds)s seconds for the halls' results.")
            % {"seconds": MIN_WAIT_SECONDS},
            code="bad_wait",
        )
    with transaction.atomic():
        prize = lock_prize(prize.pk)
        if not prize.active:
            raise Conflict(_("The prize %(code)s is closed.") % {"code": prize.code}, code="prize_closed")
        return _open_locked(prize, actor, wait, timezone.now())


def _open_locked(prize: NetworkPrize, actor: Actor, wait: int, at: datetime) -> PrizeRound:
    members = [h.venue for h in PrizeHall.objects.filter(prize=prize).select_related("venue__region")]
    # R-14: a round spans its halls' regions only under their agreements valid now; a round already
    # open when one is revoked plays out under the agreement it opened with (Interpretation).
    regions.check_network_span(network=prize.network, venues=members)
    number = (prize.rounds.aggregate(n=Max("number"))["n"] or 0) + 1
    halls = sorted(v.licence_number for v in members)
    rnd = PrizeRound.objects.create(
        prize=prize,
        number=number,
        max_ball=prize.max_ball,
        expected=halls,
        opened_at=at,
        closes_at=at + timedelta(seconds=wait),
    )
    opened = {
        "prize": prize.code,
        "kind": prize.kind,
        "name": prize.name,
        "round": number,
        "percent": str(prize.percent),
        "reserve_percent": str(prize.reserve_percent),
        "max_ball": prize.max_ball,
        "closes_at": rnd.closes_at.isoformat(),
        "halls": halls,
    }
    record(prize, actor, "network.round_opened", rnd, opened)  # the audit chains before the streams
    streams.append(stream=prize.stream, kind=LinkKind.IB_ROUND_OPENED, payload=opened)
    send_meter(prize, at=at, force=True)
    return rnd


def fresh_round(prize: NetworkPrize, at: datetime) -> PrizeRound | None:
    """The prize's newest open round if no hall has played a game in it yet and its wait still runs: the
    one each member hall's next game joins."""
    newest = prize.rounds.filter(state=RoundState.OPEN).order_by("-number").first()
    if newest is None or newest.closes_at <= at or newest.contributions.exists():
        return None
    return newest


def ensure_round_locked(prize: NetworkPrize, *, at: datetime) -> PrizeRound | None:
    """A prize whose rounds open by themselves (`auto_rounds`, the prize locked): a fresh round opened
    unless one is open already (`fresh_round`), so every member hall's next game has a round to join.
    Called when a hall's game joins a round (its contribution) and by the beat; idempotent (a second call
    finds the fresh round). None when nothing was opened; a round the regions' agreements no longer allow
    is not opened (the beat retries; what was being accepted stands)."""
    if not prize.auto_rounds or not prize.active or fresh_round(prize, at) is not None:
        return None
    try:
        with transaction.atomic():  # a refusal leaves nothing half-written
            return _open_locked(prize, "network", prize.wait_seconds, at)
    except DomainError:
        return None


def ensure_rounds(*, now: datetime | None = None) -> list[int]:
    """Beat: every active prize with rounds of its own has a fresh round open (each in its own
    transaction). The ids of the rounds opened."""
    at = now or timezone.now()
    opened = []
    for prize_id in NetworkPrize.objects.filter(active=True, auto_rounds=True).values_list("pk", flat=True):
        with transaction.atomic():
            rnd = ensure_round_locked(lock_prize(prize_id), at=at)
        if rnd is not None:
            opened.append(rnd.pk)
    return opened


def send_meter(prize: NetworkPrize, *, at: datetime, force: bool = False, shared: bool = False) -> bool:
    """Append the prize's meter to its stream (under the prize's lock): when `force`d, or when it changed
    and the last one is `meter_seconds` old. Returns whether one was sent. `shared`: the caller holds the
    prize FOR SHARE (a contribution): sent only if no other transaction shares it now (the beat sends it
    otherwise)."""
    last = prize.meter_sent_at
    if not force and last is not None and (at - last).total_seconds() < meter_seconds():
        return False
    amount = live_meter(prize)
    if not force and amount == prize.meter_sent_amount:
        return False
    if shared and not try_lock_shared_prize(prize.pk):
        return False
    shown = {
        "prize": prize.code,
        "kind": prize.kind,
        "name": prize.name,
        "amount": str(amount),
        "max_ball": prize.max_ball,
        "at": at.isoformat(),
    }
    streams.append(stream=prize.stream, kind=LinkKind.IB_METER, payload=shown)
    prize.meter_sent_at = at
    prize.meter_sent_amount = amount
    prize.save(update_fields=["meter_sent_at", "meter_sent_amount"])
    return True


def send_stale_meters(*, now: datetime | None = None) -> int:
    """Beat: each active prize whose meter moved since its last entry gets one (the throttle held it)."""
    at = now or timezone.now()
    sent = 0
    for prize_id in NetworkPrize.objects.filter(active=True).values_list("pk", flat=True):
        with transaction.atomic():
            sent += send_meter(lock_prize(prize_id), at=at)
    return sent
