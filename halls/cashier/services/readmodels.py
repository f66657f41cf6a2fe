"""What the recalls and reports read of prizes payable: the one spelling of each payable's source (what
awarded it, unique per venue), and a prize's payment as a recall or a report shows it. Read-only: the
awarding services name their payables' sources here, and halls.cashier.services.payables writes them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Q

from halls.cashier.models import Payable

# --- the sources: what awarded a payable, one spelling each (unique per venue) ----------------------------


def bingo_award_source(award_id: int) -> str:
    """A traditional Line or Bingo winner's share (bingo.Award)."""
    return f"bingo.award:{award_id}"


def pool_award_source(award_id: int, claim_id: int | None = None) -> str:
    """A pool's award (jackpots.Award): a table seat's or a machine's; with `claim_id`, one winning card's
    share of a bingo program's award. The pool reports find them by award (`pool_award_payouts`)."""
    return f"pool.award:{award_id}" if claim_id is None else f"pool.award:{award_id}/claim:{claim_id}"


def machine_hit_source(hit_id: int) -> str:
    """A machine hit with no pool award row (recorded before awards were; kept for those rows)."""
    return f"machines.hit:{hit_id}"


# --- payments ---------------------------------------------------------------------------------------------


def payout_view(payable: Payable) -> dict[str, Any]:
    """What a recall or a report shows of a prize's payment: state, when, by whom, how, the receipt."""
    return {
        "payable": payable.pk,
        "kind": payable.kind,
        "description": payable.description,
        "amount": payable.amount,
        "state": payable.state,
        "awarded_at": payable.awarded_at,
        "paid_at": payable.paid_at,
        "paid_by": payable.paid_by.get_username() if payable.paid_by is not None else "",
        "method": payable.method,
        "receipt": payable.receipt,
    }


def payouts(sources: Iterable[str], *, venue_id: int | None = None) -> dict[str, dict[str, Any]]:
    """The payables of these sources (`payout_view`) by source; a source with none is left out."""
    wanted = sorted(set(sources))
    if not wanted:
        return {}
    rows = Payable.objects.filter(source__in=wanted).select_related("paid_by")
    if venue_id is not None:
        rows = rows.filter(venue_id=venue_id)
    return {p.source: payout_view(p) for p in rows}


def pool_award_payouts(award_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
    """The payables of these pool awards (jackpots.Award ids): a table seat's or a machine's one, a bingo
    program's one per winning card, in source order."""
    ids = sorted(set(award_ids))
    if not ids:
        return {}
    match = Q(source__in=[pool_award_source(i) for i in ids])
    for i in ids:
        match |= Q(source__startswith=pool_award_source(i) + "/")
    found: dict[int, list[dict[str, Any]]] = {}
    for p in Payable.objects.filter(match).select_related("paid_by").order_by("source"):
        award_id = int(p.source.split(":", 1)[1].split("/", 1)[0])
        found.setdefault(award_id, []).append(payout_view(p))
    return found
