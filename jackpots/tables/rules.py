"""What a casino table accepts as a seat's pool bet and cards, per rule pack (spec §6). No models, no
writes: only the refusals' texts go through Django's gettext.

The services call these before they write anything, so a refused bet or hand writes nothing. Every
refusal is a `halls.errors.DomainError` with a stable code:

- the table's game must be one the pack is for (`pack_not_for_game`); the interconnected AN10 poker
  carrusel also takes tripóquer tables, which add two community cards (spec §6.9, TP-AN10-3);
- a seat must exist at the table (`unknown_seat`);
- a pool bet above the pack's cap, half the table minimum (PR-ML-6, PR-CT-6, JP-EU11-05, JP-EU12-04,
  BJ-ML-6, BJ-EU-2), is refused (`pool_bet_over_limit`); so is a pool bet without the initial bet where
  the pack makes the initial bet an indispensable condition (CJ-AN10-05, JP-EU12-06:
  `initial_bet_required`), and a pool bet other than the pool's single stipulated amount (OP-37:
  `pool_bet_not_stipulated`);
- cards must parse (`invalid_cards`), be as many as the game deals (`wrong_card_count`) and, at poker
  tables dealt from one deck, appear once in the whole hand (`duplicate_card`); blackjack shoes hold six
  decks (spec §6.11.3), so repeats are fine there;
- buying an extra card exists only at póquer sin descarte (EU ep. 11.VI.3, ML art. 62.3:
  `no_extra_card`); where the pack says so (Euskadi, JP-EU11-09) the purchase FORFEITS the jackpot bet
  placed before it — the rule says "determinará de forma automática la pérdida", so it is recorded, not
  refused; discards exist only at póquer con descarte (`no_discard`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.utils.translation import gettext as _

from halls.errors import InvalidInput
from halls.money import CENT
from jackpots.poker import Card, CardError, HandKind, HandRank, parse_cards, rank_hand, rank_sevens
from jackpots.rulepacks import BetRegistration, Game, RulePack

ZERO = Decimal(0)

# Forfeit reasons stored on a seat's bet.
EXTRA_CARD_FORFEIT = "extra_card_purchase"

# Betting boxes per table when the operator does not say (ML art. 56.3: seven boxes; EU ep. 12.II.2.2:
# six at draw poker; blackjack and tripóquer layouts have seven).
DEFAULT_SEATS: Mapping[str, int] = {
    Game.POKER_SIN_DESCARTE: 7,
    Game.POKER_CON_DESCARTE: 6,
    Game.TRIPOQUER: 7,
    Game.BLACKJACK: 7,
}
MAX_SEATS = 9
# Blackjack pays on the first cards dealt (spec §6.11.3-4); later cards never count.
BLACKJACK_MAX_CARDS = 3


def games_for_pack(pack: RulePack) -> frozenset[Game]:
    """The table games a pack's pool bet may be played at (the AN10 interconnection adds tripóquer)."""
    games = {pack.game}
    if pack.community_cards:
        games.add(Game.TRIPOQUER)
    return frozenset(games)


def check_pack_for_game(pack: RulePack, game: str) -> None:
    if game not in games_for_pack(pack):
        allowed = ", ".join(sorted(games_for_pack(pack)))
        raise InvalidInput(
            _("Rule pack %(code)s is for %(allowed)s tables, not %(game)s.")
            % {"code": pack.code, "allowed": allowed, "game": game},
            code="pack_not_for_game",
            pack=pack.code,
            game=game,
        )


def is_manual_total(pack: RulePack) -> bool:
    """EU b.1 (JP-EU12-11): staff key in the hand's total jackpot bets, which then contributes."""
    return BetRegistration.MANUAL_HAND_TOTAL in pack.registrations


def community_cards_for(pack: RulePack, game: str) -> int:
    """Community cards a hand of this table shows: two at tripóquer tables of an interconnected pool."""
    return pack.community_cards if game == Game.TRIPOQUER and pack.community_cards else 0


def seat_card_count(pack: RulePack, game: str) -> tuple[int, int]:
    """(fewest, most) cards a seat registers at this table under this pack."""
    if game == Game.BLACKJACK:
        return 1, BLACKJACK_MAX_CARDS
    if pack.ordering is None:
        raise InvalidInput(
            _("Rule pack %(code)s has no combinations yet (OP-30).") % {"code": pack.code},
            code="pack_unusable",
        )
    count = pack.ordering.card_count - community_cards_for(pack, game)
    return count, count


def check_seat(seat: int, seats: int) -> None:
    if not 1 <= seat <= seats:
        raise InvalidInput(
            _("Seat %(seat)s does not exist: this table has seats 1 to %(seats)s.")
            % {"seat": seat, "seats": seats},
            code="unknown_seat",
            seat=seat,
        )


# --- bets ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatBetInput:
    seat: int
    initial_bet: Decimal
    pool_bet: Decimal


def _amount(name: str, seat: int, value: Decimal) -> Decimal:
    if not isinstance(value, Decimal) or not value.is_finite() or value < 0:
        raise InvalidInput(
            _("Seat %(seat)s: the %(name)s must be an amount of 0 or more.") % {"seat": seat, "name": name},
            code="bad_amount",
        )
    if value != value.quantize(CENT):
        raise InvalidInput(
            _("Seat %(seat)s: the %(name)s %(value)s is not in whole cents.")
            % {"seat": seat, "name": name, "value": value},
            code="bad_amount",
        )
    return value


def check_bet(
    pack: RulePack, *, table_minimum: Decimal, stipulated_bet: Decimal | None, bet: SeatBetInput
) -> None:
    """Refuse a seat's bets that the pack does not allow; the bet is then not registered at all."""
    initial = _amount("initial bet", bet.seat, bet.initial_bet)
    pool_bet = _amount("pool bet", bet.seat, bet.pool_bet)
    if pool_bet == 0:
        raise InvalidInput(
            _("Seat %(seat)s: no pool bet to register.") % {"seat": bet.seat},
            code="bad_amount",
            seat=bet.seat,
        )
    cap = pack.max_pool_bet(table_minimum)
    if cap is not None and pool_bet > cap:
        raise InvalidInput(
            _(
                "Seat %(seat)s: the pool bet %(pool_bet)s is above %(cap)s, "
                "half of the table minimum %(table_minimum)s (%(code)s)."
            )
            % {
                "seat": bet.seat,
                "pool_bet": pool_bet,
                "cap": cap,
                "table_minimum": table_minimum,
                "code": pack.code,
            },
            code="pool_bet_over_limit",
            seat=bet.seat,
            limit=str(cap),
        )
    if pack.requires_initial_bet and initial == 0:
        raise InvalidInput(
            _("Seat %(seat)s: a pool bet needs the table's initial bet first (%(code)s).")
            % {"seat": bet.seat, "code": pack.code},
            code="initial_bet_required",
            seat=bet.seat,
        )
    if stipulated_bet is not None and pool_bet != stipulated_bet:
        raise InvalidInput(
            _("Seat %(seat)s: the pool bet is the stipulated %(stipulated_bet)s, not %(pool_bet)s (OP-37).")
            % {"seat": bet.seat, "stipulated_bet": stipulated_bet, "pool_bet": pool_bet},
            code="pool_bet_not_stipulated",
            seat=bet.seat,
            stipulated=str(stipulated_bet),
        )


def check_manual_total(total: Decimal, seat_total: Decimal | None, stipulated_bet: Decimal | None) -> Decimal:
    """The b.1 hand total: whole cents, more than 0, the seats' bets when they are registered."""
    if not isinstance(total, Decimal) or not total.is_finite() or total <= 0 or total != total.quantize(CENT):
        raise InvalidInput(
            _("The hand's total %(total)s must be an amount above 0 in whole cents.") % {"total": total},
            code="bad_amount",
        )
    if stipulated_bet is not None and total % stipulated_bet:
        raise InvalidInput(
            _("The hand's total %(total)s is not a whole number of %(stipulated_bet)s jackpot bets.")
            % {"total": total, "stipulated_bet": stipulated_bet},
            code="pool_bet_not_stipulated",
        )
    if seat_total is not None and total != seat_total:
        raise InvalidInput(
            _("The hand's total %(total)s differs from the seats' registered pool bets %(seat_total)s.")
            % {"total": total, "seat_total": seat_total},
            code="manual_total_mismatch",
            seats=str(seat_total),
        )
    return total


# --- cards --------------------------------------------------------------------------------------------


def read_cards(text: str | Sequence[str], *, what: str, allow_duplicates: bool) -> tuple[Card, ...]:
    """Parse cards (`invalid_cards`); a card twice where one deck is dealt is `duplicate_card`."""
    try:
        cards = parse_cards(text, allow_duplicates=True)
    except CardError as exc:
        raise InvalidInput(_("%(what)s: %(exc)s") % {"what": what, "exc": exc}, code="invalid_cards") from exc
    if not allow_duplicates:
        seen: set[Card] = set()
        for card in cards:
            if card in seen:
                raise InvalidInput(
                    _("%(what)s: card %(card)s appears twice; one deck holds it once.")
                    % {"what": what, "card": card},
                    code="duplicate_card",
                    card=str(card),
                )
            seen.add(card)
    return cards


def cards_text(cards: Iterable[Card]) -> str:
    return " ".join(str(c) for c in cards)


@dataclass(frozen=True)
class SeatCardsInput:
    seat: int
    cards: str | Sequence[str]
    discard: bool = False
    extra_card: bool = False


@dataclass(frozen=True)
class ReadHand:
    """One seat's cards as the rules read them."""

    seat: int
    cards: tuple[Card, ...]
    discard: bool
    extra_card: bool


def read_seat(pack: RulePack, game: str, entry: SeatCardsInput) -> ReadHand:
    if entry.discard and game != Game.POKER_CON_DESCARTE:
        raise InvalidInput(
            _("Seat %(seat)s: only póquer con descarte has discards.") % {"seat": entry.seat},
            code="no_discard",
            seat=entry.seat,
        )
    if entry.extra_card and game != Game.POKER_SIN_DESCARTE:
        raise InvalidInput(
            _("Seat %(seat)s: only póquer sin descarte sells an extra card.") % {"seat": entry.seat},
            code="no_extra_card",
            seat=entry.seat,
        )
    cards = read_cards(entry.cards, what=f"Seat {entry.seat}", allow_duplicates=game == Game.BLACKJACK)
    fewest, most = seat_card_count(pack, game)
    if not fewest <= len(cards) <= most:
        wanted = str(fewest) if fewest == most else f"{fewest} to {most}"
        raise InvalidInput(
            _("Seat %(seat)s: %(count)s cards given, this table registers %(wanted)s.")
            % {"seat": entry.seat, "count": len(cards), "wanted": wanted},
            code="wrong_card_count",
            seat=entry.seat,
        )
    return ReadHand(entry.seat, cards, entry.discard, entry.extra_card)


def read_community(pack: RulePack, game: str, text: str | Sequence[str] | None) -> tuple[Card, ...]:
    wanted = community_cards_for(pack, game)
    if not text:
        return ()
    cards = read_cards(text, what="Community cards", allow_duplicates=False)
    if len(cards) != wanted:
        raise InvalidInput(
            _("%(count)s community cards given, this table shows %(wanted)s.")
            % {"count": len(cards), "wanted": wanted},
            code="wrong_card_count",
        )
    return cards


def check_one_deck(game: str, hands: Mapping[int, Sequence[Card]], community: Sequence[Card]) -> None:
    """At a poker table every card exists once in a hand (one deck); a blackjack shoe has six."""
    if game == Game.BLACKJACK:
        return
    seen: dict[Card, str] = {}
    holders: list[tuple[str, Sequence[Card]]] = [("the community cards", community)]
    holders += [(f"seat {seat}", cards) for seat, cards in sorted(hands.items())]
    for holder, cards in holders:
        for card in cards:
            if card in seen and seen[card] != holder:
                raise InvalidInput(
                    _(
                        "Card %(card)s is given to both %(first_holder)s "
                        "and %(holder)s: one deck holds it once."
                    )
                    % {"card": card, "first_holder": seen[card], "holder": holder},
                    code="duplicate_card",
                    card=str(card),
                )
            seen[card] = holder


def rank_seat(pack: RulePack, game: str, cards: Sequence[Card], community: Sequence[Card]) -> HandRank | None:
    """The seat's hand under the pack's ordering; None when blackjack's first cards hold no seven."""
    if pack.ordering is None:
        raise InvalidInput(
            _("Rule pack %(code)s has no combinations yet (OP-30).") % {"code": pack.code},
            code="pack_unusable",
        )
    if pack.ordering.kind is HandKind.BLACKJACK_SEVENS:
        return rank_sevens(cards)
    try:
        return rank_hand([*cards, *community], pack.ordering)
    except CardError as exc:  # e.g. the community cards are not in yet
        raise InvalidInput(f"{exc}", code="wrong_card_count") from exc


def forfeits(pack: RulePack, *, extra_card: bool) -> str:
    """Why the seat's pool bet is lost by what it did during the hand ('' when it stands)."""
    if extra_card and pack.extra_card_forfeits_pool_bet:
        return EXTRA_CARD_FORFEIT
    return ""


# --- idempotency keys ---------------------------------------------------------------------------------


def seat_contribution_key(table_id: int, hand_id: int, seat: int) -> str:
    """The engine's idempotency key of a seat's pool bet: a retried registration contributes once."""
    return f"table:{table_id}:hand:{hand_id}:seat:{seat}"


def hand_total_key(table_id: int, hand_id: int) -> str:
    """The key of a b.1 hand total."""
    return f"table:{table_id}:hand:{hand_id}:total"


def hand_award_key(table_id: int, hand_id: int) -> str:
    return f"table:{table_id}:hand:{hand_id}:award"
