"""The central: a member hall's contribution and result for a round, and the round's decision.

Called by the link's handlers (bingo.network.interconnected.link_handlers) inside `inbox.accept`'s
transaction, under the venue's link: each takes the prize's lock (FOR SHARE: the halls' messages go on
together), checks, writes. A refusal is a DomainError (the link records it as the message's answer and
nothing of it is counted): an unknown prize or round, a hall that is not a member, a round decided or past
its wait, a second contribution or result of a hall, a contribution that is not the prize's percent of the
sales, a result naming a card the game did not sell.

The decision (`decide_locked`) is the pure `bingo.network.interconnected.decide` on the results received,
paid by the pool
engine (`award_level` for the winners' shares together; the remainder stays in the pool, recorded).
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.network.interconnected import decide as rules
from bingo.network.interconnected.models import (
    DecisionRule,
    NetworkPrize,
    PrizeHall,
    PrizeRound,
    RoundContribution,
    RoundResult,
    RoundShare,
    RoundState,
)
from bingo.network.interconnected.services import payloads, prizes
from bingo.network.interconnected.services.locks import lock_prize, share_prize, try_lock_shared_prize
from halls import money
from halls.errors import Conflict, NotFound
from halls.link.kinds import LinkKind
from halls.link.services import streams
from halls.models import Venue
from halls.services import audit
from jackpots.models import PoolLevel, SourceType
from jackpots.services import awards, contributions, folding
from jackpots.services.locks import lock_levels
from jackpots.sources import PoolSource


def _prize(payload: dict[str, Any]) -> tuple[NetworkPrize, bool]:
    """A contribution's prize locked, and whether shared: FOR SHARE with the other halls' contributions
    and results, unless it may have to open the prize's next round (rounds of its own): FOR UPDATE, as
    decisions take it."""
    code = payloads.text(payload, "prize", max_length=30)
    found = NetworkPrize.objects.filter(code=code).values_list("pk", "auto_rounds").first()
    if found is None:
        raise NotFound(_("No interconnected prize %(code)s.") % {"code": code}, code="unknown_prize")
    prize_id, auto_rounds = found
    shared = not auto_rounds
    prize = share_prize(prize_id) if shared else lock_prize(prize_id)
    if not prize.active:
        raise Conflict(_("The prize %(code)s is closed.") % {"code": code}, code="prize_closed")
    return prize, shared


def _result_prize(payload: dict[str, Any]) -> NetworkPrize:
    """A result's prize, FOR SHARE: the halls' results go on together (they open no round); a decision
    waits for the ones in flight."""
    code = payloads.text(payload, "prize", max_length=30)
    prize_id = NetworkPrize.objects.filter(code=code).values_list("pk", flat=True).first()
    if prize_id is None:
        raise NotFound(_("No interconnected prize %(code)s.") % {"code": code}, code="unknown_prize")
    prize = share_prize(prize_id)
    if not prize.active:
        raise Conflict(_("The prize %(code)s is closed.") % {"code": code}, code="prize_closed")
    return prize


def _member(prize: NetworkPrize, venue_id: int) -> Venue:
    """The member hall's venue, with its operator and region, read with its membership (one statement)."""
    member = PrizeHall.objects.filter(prize=prize, venue_id=OuterRef("pk"))
    venue = Venue.objects.select_related("operator", "region").filter(Exists(member), pk=venue_id).first()
    if venue is None:
        raise Conflict(
            _("This hall is not a member of the prize %(code)s.") % {"code": prize.code}, code="not_member"
        )
    return venue


def _round(prize: NetworkPrize, payload: dict[str, Any]) -> PrizeRound:
    number = payloads.integer(payload, "round", low=1)
    rnd = PrizeRound.objects.filter(prize=prize, number=number).first()
    if rnd is None:
        raise NotFound(
            _("The prize %(code)s has no round %(number)s.") % {"code": prize.code, "number": number},
            code="unknown_round",
        )
    return rnd


def _decided(rnd: PrizeRound) -> Conflict:
    return Conflict(
        _("Round %(number)s is decided: nothing more counts in it.") % {"number": rnd.number},
        code="round_decided",
    )


def _tags(venue: Venue) -> tuple[str, str]:
    """The venue's operator ("tax id · name") and region code as they stand now (IB-02…IB-04): kept with
    the contribution, so a later change of the venue's records never rewrites who paid what."""
    operator = venue.operator
    operator_tag = f"{operator.tax_id} · {operator.name}" if operator is not None else ""
    return operator_tag[:160], venue.region.code if venue.region is not None else ""


def _audit(venue_id: int, action: str, obj: Any, data: dict[str, Any]) -> None:
    audit.record(venue_id=venue_id, actor="link", action=action, obj=obj, data=data)


def accept_contribution(*, venue_id: int, payload: dict[str, Any]) -> dict[str, Any]:
    """A member hall's round game closed its sales: its contribution goes to the prize's pool, once.
    Under the prize FOR SHARE: halls' contributions go on together (a result or a decision waits)."""
    prize, shared = _prize(payload)
    venue = _member(prize, venue_id)
    rnd = _round(prize, payload)
    at = timezone.now()
    if rnd.state != RoundState.OPEN:
        raise _decided(rnd)
    if at >= rnd.closes_at:
        raise Conflict(
            _("Round %(number)s's wait expired: it takes no more games.") % {"number": rnd.number},
            code="round_closed",
        )
    if venue.licence_number not in rnd.expected:
        raise Conflict(_("This hall joined after round %(n)s opened.") % {"n": rnd.number}, code="not_member")
    if RoundContribution.objects.filter(round=rnd, venue=venue).exists():
        raise Conflict(
            _("This hall already plays a game in round %(number)s.") % {"number": rnd.number},
            code="already_contributed",
        )
    game = payloads.integer(payload, "game", low=1)
    number = payloads.integer(payload, "number", low=1)
    sales = payloads.sales(payload)
    sold = payloads.sold_ranges(payload)
    cards_sold = payloads.integer(payload, "cards_sold", low=1)
    if payloads.cards_in(sold) != cards_sold:
        raise payloads.bad("cards_sold")
    level = PoolLevel.objects.get(pool_id=prize.pool_id)
    split = money.split_contribution(sales, level.contribution_rate, level.reserve_rate)
    stated = (
        payloads.amount(payload, "to_meter", places=money.METER_PLACES),
        payloads.amount(payload, "to_reserve", places=money.METER_PLACES),
    )
    if stated != (split.to_meter, split.to_reserve):
        raise Conflict(
            _("The contribution is not the prize's share of the sales %(sales)s: %(meter)s to the meter.")
            % {"sales": sales, "meter": split.to_meter},
            code="contribution_mismatch",
            to_meter=str(split.to_meter),
            to_reserve=str(split.to_reserve),
        )
    receipt = contributions.contribute(
        pool=prize.pool_id,
        source=PoolSource.of(SourceType.VENUE, venue.pk).at("game", game),
        bet=sales,
        idempotency_key=f"ib:{rnd.pk}:venue:{venue.pk}",
        actor=f"link:{venue.licence_number}",
    )
    operator, region = _tags(venue)
    row = RoundContribution.objects.create(
        round=rnd,
        venue=venue,
        operator=operator,
        region=region,
        game=game,
        game_number=number,
        sales=sales,
        to_meter=split.to_meter,
        to_reserve=split.to_reserve,
        cards_sold=cards_sold,
        sold=sold,
        contribution_id=receipt.lines[0].contribution_id,
        received_at=at,
    )
    tagged = {"prize": prize.code, "round": rnd.number, "game": game, "sales": str(sales)}
    _audit(venue.pk, "network.contribution", row, {**tagged, "operator": operator, "region": region})
    # The round has a game now: the halls' next games get a fresh round (a prize with rounds of its own,
    # which `_prize` locked FOR UPDATE for this; shared, the beat opens it: ensure_rounds).
    if not shared:
        prizes.ensure_round_locked(prize, at=at)
    prizes.send_meter(prize, at=at, shared=shared)
    return {"round": rnd.number, "to_meter": str(split.to_meter), "contribution": row.pk}


def accept_result(*, venue_id: int, payload: dict[str, Any]) -> dict[str, Any]:
    """A member hall's round game ended: its result counts in the round, which is decided when every hall
    has reported. After the decision, the result of a hall that played the round is kept as late and
    never counted (the decision stands).

    Under the prize FOR SHARE: results (and contributions) of different halls go on together. The result
    that completes the round decides it in its own transaction when no other transaction shares the
    prize (it takes it FOR UPDATE without waiting); otherwise the round is looked at right after this
    commits (`decide_reported`, under the prize FOR UPDATE once every hall reported), or by the beat
    (`decide_overdue`)."""
    prize = _result_prize(payload)
    venue = _member(prize, venue_id)
    rnd = _round(prize, payload)
    contribution = RoundContribution.objects.filter(round=rnd, venue=venue).first()
    if contribution is None:
        if rnd.state != RoundState.OPEN:
            raise _decided(rnd)
        raise Conflict(
            _("This hall has no game in round %(number)s.") % {"number": rnd.number}, code="no_contribution"
        )
    if RoundResult.objects.filter(round=rnd, venue=venue).exists():
        raise Conflict(
            _("This hall already reported round %(number)s.") % {"number": rnd.number},
            code="already_reported",
        )
    game = payloads.integer(payload, "game", low=1)
    if game != contribution.game:
        raise payloads.bad("game")
    void = payload.get("void") is True
    ordinal = None if payload.get("ordinal") is None else payloads.integer(payload, "ordinal", low=1, high=90)
    cards = payloads.winning_cards(payload, contribution.sold)
    if (void or ordinal is None) != (not cards) or (void and ordinal is not None):
        raise payloads.bad("ordinal")
    at = timezone.now()
    late = rnd.state != RoundState.OPEN
    row = RoundResult.objects.create(
        round=rnd, venue=venue, game=game, void=void, ordinal=ordinal, cards=cards, late=late, received_at=at
    )
    deciding = False
    if not late:
        # The last result: the prize exclusively now if no other transaction shares it (never waiting:
        # the sharers may wait for this one's venue locks), the pool it pays from before the audit. Else
        # looked at again once this commits: results in flight together do not see each other, and the
        # one committed last sees them all then.
        deciding = _all_reported(rnd) and try_lock_shared_prize(prize.pk)
        if deciding:
            lock_levels(prize.pool_id)
        else:
            transaction.on_commit(partial(decide_reported, rnd.pk), robust=True)
    reported = {"prize": prize.code, "round": rnd.number, "ordinal": ordinal, "cards": cards, "late": late}
    _audit(venue.pk, "network.result", row, {**reported, "void": void})
    if deciding:
        decide_locked(prize, rnd, rule=DecisionRule.ALL_REPORTED, at=at)
    return {"round": rnd.number, "late": late, "counted": not late, "decided": deciding}


def decide_reported(round_id: int, *, now: datetime | None = None) -> bool:
    """The round decided (ALL_REPORTED) if it is open and every hall has reported: after the commit of a
    result that completed it but could not take the prize for itself, and by the beat. Whether decided."""
    found = PrizeRound.objects.filter(pk=round_id, state=RoundState.OPEN).first()
    if found is None or not _all_reported(found):
        return False  # read without a lock: most rounds the beat looks at are still waiting
    with transaction.atomic():
        prize = lock_prize(found.prize_id)
        rnd = PrizeRound.objects.get(pk=round_id)
        if rnd.state != RoundState.OPEN or not _all_reported(rnd):
            return False
        decide_locked(prize, rnd, rule=DecisionRule.ALL_REPORTED, at=now or timezone.now())
    return True


def _all_reported(rnd: PrizeRound) -> bool:
    reported = set(
        RoundResult.objects.filter(round=rnd, late=False).values_list("venue__licence_number", flat=True)
    )
    return set(rnd.expected) <= reported


def decide_locked(prize: NetworkPrize, rnd: PrizeRound, *, rule: str, at: datetime) -> PrizeRound:
    """Decide the round (the prize locked, the round open): the results received, the pure decision on
    the folded meter, the winners' shares paid by the pool engine, the decision announced."""
    results = list(RoundResult.objects.filter(round=rnd, late=False).select_related("venue"))
    levels = lock_levels(prize.pool_id)
    folding.fold_locked(prize.pool, levels, actor="network")
    level = levels[0]
    decision = rules.decide(
        [rules.HallResult(r.venue.licence_number, r.ordinal, tuple(r.cards)) for r in results],
        max_ball=rnd.max_ball,
        pool=level.amount,
    )
    if decision.paid > 0:
        paid = awards.award_level(
            level=level,
            amount=decision.paid,
            winner={
                "source": f"network:{prize.code}/round:{rnd.number}",
                "hand": f"round:{rnd.number}",
                "category": "interconnected",
                "label": f"{prize.name} · {rnd.number}",
                "cards": [f"{s.hall}/{s.card}" for s in decision.shares],
            },
            idempotency_key=f"ib:{rnd.pk}",
            actor="network",
        )
        rnd.settlement_id = paid.settlement_id
    venues = {r.venue.licence_number: r.venue for r in results}
    shares = [
        RoundShare.objects.create(round=rnd, venue=venues[s.hall], card=s.card, amount=s.amount)
        for s in decision.shares
    ]
    reported = {r.venue.licence_number for r in results}
    rnd.state = RoundState.DECIDED
    rnd.decided_at = at
    rnd.rule = rule
    rnd.ordinal = decision.ordinal
    rnd.pool_amount = decision.pool
    rnd.share = decision.share
    rnd.remainder = decision.remainder
    rnd.missing = sorted(set(rnd.expected) - reported)
    rnd.save()
    announced = decision_payload(prize, rnd, shares, results)
    prizes.record(prize, "network", "network.round_decided", rnd, announced)  # audit before the streams
    streams.append(stream=prize.stream, kind=LinkKind.IB_DECISION, payload=announced)
    prizes.send_meter(prize, at=at, force=True)
    return rnd


def decision_payload(
    prize: NetworkPrize, rnd: PrizeRound, shares: list[RoundShare], results: list[RoundResult]
) -> dict[str, Any]:
    return {
        "prize": prize.code,
        "pool_code": prize.pool.code,  # the venues' feed names the pool their shares were paid from
        "round": rnd.number,
        "rule": rnd.rule,
        "ordinal": rnd.ordinal,
        "max_ball": rnd.max_ball,
        "pool": str(rnd.pool_amount),
        "share": str(rnd.share),
        "remainder": str(rnd.remainder),
        "shares": [
            {"id": s.pk, "hall": s.venue.licence_number, "card": s.card, "amount": str(s.amount)}
            for s in shares
        ],
        "missing": rnd.missing,
        "void": sorted(r.venue.licence_number for r in results if r.void),
    }


def decide_overdue(*, now: datetime | None = None) -> list[int]:
    """Beat: every open round every hall has reported (its decision after the last result's commit was
    lost with its process) decided as such; every open round past its wait decided among the results
    received (rule recorded). Each in its own transaction; the ids of the rounds decided."""
    at = now or timezone.now()
    decided = []
    still_open = PrizeRound.objects.filter(state=RoundState.OPEN).order_by("closes_at", "pk")
    for round_id in still_open.values_list("pk", flat=True):
        if decide_reported(round_id, now=at):
            decided.append(round_id)
    due = PrizeRound.objects.filter(state=RoundState.OPEN, closes_at__lte=at).order_by("closes_at", "pk")
    for round_id, prize_id in due.values_list("pk", "prize_id"):
        with transaction.atomic():
            prize = lock_prize(prize_id)
            rnd = PrizeRound.objects.get(pk=round_id)
            if rnd.state != RoundState.OPEN:
                continue  # decided meanwhile (its last result came)
            decide_locked(prize, rnd, rule=DecisionRule.WAIT_EXPIRED, at=at)
            decided.append(round_id)
    return decided
