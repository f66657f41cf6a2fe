"""What the table services refuse alike: a hand that is not there, a hand no longer open."""

from __future__ import annotations

from django.utils.translation import gettext
from django.utils.translation import gettext as _

from halls.errors import Conflict, NotFound
from jackpots.tables.models import Hand, HandState

__all__ = ["no_hand", "require_open"]


def no_hand(hand_id: int) -> NotFound:
    return NotFound(f"No hand {hand_id}.", code="unknown_hand")


def require_open(hand: Hand, doing: str) -> None:
    if hand.state != HandState.OPEN:
        state = HandState(hand.state).label.lower()
        code = "hand_settled" if hand.state == HandState.SETTLED else "hand_void"
        raise Conflict(
            _("Hand %(number)s at %(table)s is %(state)s: cannot %(doing)s.")
            % {"number": hand.number, "table": hand.table, "state": state, "doing": gettext(doing)},
            code=code,
            state=hand.state,
        )
