"""How a venue pays a decided wide-area hit, by the kind of member that hit: an app registers its payer
(machines: the machine's hand pay, or its unlock when there is nothing to pay); the default makes a
payable at the venue's cashier. jackpots never imports machines: machines registers here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jackpots.widearea.models import WideAreaClaim

Payer = Callable[["WideAreaClaim"], None]
_payers: dict[str, Payer] = {}


def register_payer(source_type: str, payer: Payer) -> None:
    _payers[source_type] = payer


def payer_of(source: str) -> Payer | None:
    return _payers.get(source.partition(":")[0])
