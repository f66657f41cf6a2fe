"""Cards and hand ranking for the table pools (spec §6.1, §6.9, §6.11). Pure: no Django.

Notation: a card is two characters, rank then suit. Ranks 2-9, T, J, Q, K, A; suits S (spades),
H (hearts), D (diamonds), C (clubs); upper case only, e.g. "AS", "TD", "7H". Ten is "T", never "10",
so every card has the same width and a typo cannot parse as another card.

The order of hand categories is data (`HandOrdering`), not code: Andalucía 1996 ranks a flush above a
full house (OP-24) and three-card tripóquer has its own order, while the evaluator that finds a hand's
category is the same for all of them. A `HandRank` compares by (category strength in its ordering,
tiebreak), so ranks from different orderings refuse to compare.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

RANK_CHARS = "23456789TJQKA"
ACE = 14
FIVE = 5
THREE = 3
SEVEN = 7


class CardError(ValueError):
    """A card or a hand that cannot be read, or that a single deck cannot hold."""


class Suit(StrEnum):
    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"


@dataclass(frozen=True)
class Card:
    """One card; `rank` runs 2..14 with the Ace as 14 (it plays as 1 only inside a straight)."""

    rank: int
    suit: Suit

    def __post_init__(self) -> None:
        if not 2 <= self.rank <= ACE:
            raise CardError(f"card rank must be 2..14, got {self.rank}")

    def __str__(self) -> str:
        return RANK_CHARS[self.rank - 2] + self.suit.value


def parse_card(text: str) -> Card:
    """Read one card such as "AS" or "TD"; anything else raises `CardError` saying why."""
    if not isinstance(text, str):
        raise CardError(f"a card is a two-character string, got {type(text).__name__}")
    if text[:2] == "10":
        raise CardError(f"{text!r}: write the ten as T (e.g. 'TH'), not 10")
    if len(text) != 2:
        raise CardError(f"{text!r}: a card is two characters, rank (2-9,T,J,Q,K,A) then suit (S,H,D,C)")
    rank_char, suit_char = text[0], text[1]
    if rank_char not in RANK_CHARS:
        raise CardError(f"{text!r}: unknown rank {rank_char!r}; ranks are 2-9, T, J, Q, K, A")
    try:
        suit = Suit(suit_char)
    except ValueError:
        raise CardError(f"{text!r}: unknown suit {suit_char!r}; suits are S, H, D, C") from None
    return Card(RANK_CHARS.index(rank_char) + 2, suit)


def parse_cards(cards: str | Iterable[str | Card], *, allow_duplicates: bool = False) -> tuple[Card, ...]:
    """Read "AS KS QS" (spaces or commas) or a sequence of cards; duplicates refused unless allowed.

    Poker tables deal from one 52-card deck, so a repeated card is an input error there; blackjack
    shoes hold six decks (spec §6.11.3), where the caller passes `allow_duplicates=True`.
    """
    items: Iterable[str | Card] = cards.replace(",", " ").split() if isinstance(cards, str) else cards
    parsed = tuple(item if isinstance(item, Card) else parse_card(item) for item in items)
    if not allow_duplicates:
        seen: set[Card] = set()
        for card in parsed:
            if card in seen:
                raise CardError(f"card {card} appears twice in one hand")
            seen.add(card)
    return parsed


class HandCategory(StrEnum):
    """Poker hand categories (spec §6.1); their order depends on the jurisdiction's `HandOrdering`."""

    ROYAL_FLUSH = "royal_flush"
    STRAIGHT_FLUSH = "straight_flush"
    FOUR_OF_A_KIND = "four_of_a_kind"
    FULL_HOUSE = "full_house"
    FLUSH = "flush"
    STRAIGHT = "straight"
    THREE_OF_A_KIND = "three_of_a_kind"
    TWO_PAIR = "two_pair"
    PAIR = "pair"
    HIGH_CARD = "high_card"


class SevensCombination(StrEnum):
    """Blackjack bolsa / apuesta acumulada combinations of the first cards dealt (spec §6.11.3-4)."""

    THREE_SEVENS_SAME_SUIT = "three_sevens_same_suit"
    THREE_SEVENS = "three_sevens"  # not all of the same suit (OP-31)
    TWO_SEVENS_SAME_SUIT = "two_sevens_same_suit"
    TWO_SEVENS = "two_sevens"  # different suits
    FIRST_CARD_SEVEN = "first_card_seven"


Category = HandCategory | SevensCombination


class HandKind(StrEnum):
    """Which evaluator reads the cards: five-card poker, three-card poker, or blackjack sevens."""

    FIVE_CARD = "five_card"
    THREE_CARD = "three_card"
    BLACKJACK_SEVENS = "blackjack_sevens"


_CATEGORIES_OF: dict[HandKind, frozenset[Category]] = {
    HandKind.FIVE_CARD: frozenset(HandCategory),
    # Three cards cannot make four of a kind, a full house or two pair; Q-K-A suited is a straight flush.
    HandKind.THREE_CARD: frozenset(HandCategory)
    - {
        HandCategory.ROYAL_FLUSH,
        HandCategory.FOUR_OF_A_KIND,
        HandCategory.FULL_HOUSE,
        HandCategory.TWO_PAIR,
    },
    HandKind.BLACKJACK_SEVENS: frozenset(SevensCombination),
}


@dataclass(frozen=True)
class HandOrdering:
    """A jurisdiction's order of categories, highest first, for one kind of hand."""

    name: str
    kind: HandKind
    categories: tuple[Category, ...]

    def __post_init__(self) -> None:
        if len(set(self.categories)) != len(self.categories):
            raise ValueError(f"ordering {self.name}: a category is listed twice")
        if set(self.categories) != _CATEGORIES_OF[self.kind]:
            raise ValueError(f"ordering {self.name}: must list exactly the {self.kind} categories")

    @property
    def card_count(self) -> int:
        return THREE if self.kind is HandKind.THREE_CARD else FIVE

    def strength(self, category: Category) -> int:
        """Higher is better; the lowest category has strength 1."""
        try:
            return len(self.categories) - self.categories.index(category)
        except ValueError:
            raise ValueError(f"{category} is not a category of ordering {self.name}") from None


_C = HandCategory
# ML art. 59.1, AN10 ep. I.1.9.A.V.1, CT ep. 10.V.1, EU ep. 11.V.1: full house above flush.
STANDARD = HandOrdering(
    "standard",
    HandKind.FIVE_CARD,
    (
        _C.ROYAL_FLUSH,
        _C.STRAIGHT_FLUSH,
        _C.FOUR_OF_A_KIND,
        _C.FULL_HOUSE,
        _C.FLUSH,
        _C.STRAIGHT,
        _C.THREE_OF_A_KIND,
        _C.TWO_PAIR,
        _C.PAIR,
        _C.HIGH_CARD,
    ),
)
# AN96 Anexo Único, Primero.5.1: "Color" above "Full" (OP-24).
AN96 = HandOrdering(
    "an96",
    HandKind.FIVE_CARD,
    (
        _C.ROYAL_FLUSH,
        _C.STRAIGHT_FLUSH,
        _C.FOUR_OF_A_KIND,
        _C.FLUSH,
        _C.FULL_HOUSE,
        _C.STRAIGHT,
        _C.THREE_OF_A_KIND,
        _C.TWO_PAIR,
        _C.PAIR,
        _C.HIGH_CARD,
    ),
)
# Tripóquer, AN10 ep. I.1.9.C.V and the "Fortuna" table of VII.1: with three cards a straight
# (5x) beats a flush (4x) and three of a kind (30x) beats a straight.
THREE_CARD = HandOrdering(
    "three_card",
    HandKind.THREE_CARD,
    (_C.STRAIGHT_FLUSH, _C.THREE_OF_A_KIND, _C.STRAIGHT, _C.FLUSH, _C.PAIR, _C.HIGH_CARD),
)
_S = SevensCombination
# AN10 ep. I.1.3.V.1.e and EU ep. 03.V.1.f list the sevens in this order of prize.
SEVENS = HandOrdering(
    "blackjack_sevens",
    HandKind.BLACKJACK_SEVENS,
    (_S.THREE_SEVENS_SAME_SUIT, _S.THREE_SEVENS, _S.TWO_SEVENS_SAME_SUIT, _S.TWO_SEVENS, _S.FIRST_CARD_SEVEN),
)


@dataclass(frozen=True)
class HandRank:
    """A hand's category and tiebreak under one ordering; compares like the hands it describes.

    `tiebreak` holds card ranks in the order they decide ties: the straight's top card (5 for
    A-2-3-4-5, OP-25), the four's rank then the kicker, trips then pair, and so on. Suits never rank.
    """

    category: Category
    tiebreak: tuple[int, ...]
    ordering: HandOrdering

    def __post_init__(self) -> None:
        self.ordering.strength(self.category)  # refuses a category foreign to the ordering

    def _key(self, other: object) -> tuple[tuple[int, tuple[int, ...]], tuple[int, tuple[int, ...]]]:
        if not isinstance(other, HandRank):
            raise TypeError(f"cannot compare a HandRank with {type(other).__name__}")
        if other.ordering != self.ordering:
            raise TypeError(
                f"cannot compare ranks of orderings {self.ordering.name} and {other.ordering.name}"
            )
        mine = (self.ordering.strength(self.category), self.tiebreak)
        theirs = (other.ordering.strength(other.category), other.tiebreak)
        return mine, theirs

    def __lt__(self, other: object) -> bool:
        mine, theirs = self._key(other)
        return mine < theirs

    def __le__(self, other: object) -> bool:
        mine, theirs = self._key(other)
        return mine <= theirs

    def __gt__(self, other: object) -> bool:
        mine, theirs = self._key(other)
        return mine > theirs

    def __ge__(self, other: object) -> bool:
        mine, theirs = self._key(other)
        return mine >= theirs

    def __str__(self) -> str:
        cards = "-".join(RANK_CHARS[r - 2] for r in self.tiebreak)
        return f"{self.category.value.replace('_', ' ')} ({cards})" if cards else self.category.value


def _straight_top(ranks: Sequence[int]) -> int | None:
    """Top card of a straight made by distinct `ranks`, or None; the low Ace plays as 1 (OP-25).

    No wrap-around: Q-K-A-2-3 is not a straight (ML art. 59.1.b).
    """
    distinct = sorted(set(ranks), reverse=True)
    if len(distinct) != len(ranks):
        return None
    if distinct[0] - distinct[-1] == len(ranks) - 1:
        return distinct[0]
    low_ace = [*distinct[1:], 1]  # A-2-3-4-5 (or A-2-3 in three-card hands)
    if distinct[0] == ACE and low_ace[0] - low_ace[-1] == len(ranks) - 1:
        return low_ace[0]
    return None


def _evaluate(cards: Sequence[Card]) -> tuple[HandCategory, tuple[int, ...]]:
    """Category and tiebreak of a 3- or 5-card poker hand."""
    ranks = [c.rank for c in cards]
    counts = Counter(ranks)
    # Most copies first, then higher rank: this is also the tiebreak order for every grouped hand.
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    by_group = tuple(rank for rank, _ in groups)
    shape = tuple(n for _, n in groups)
    is_flush = len({c.suit for c in cards}) == 1
    top = _straight_top(ranks)
    if top is not None and is_flush:
        if len(cards) == FIVE and top == ACE:
            return _C.ROYAL_FLUSH, (top,)
        return _C.STRAIGHT_FLUSH, (top,)
    if shape[0] == 4:
        return _C.FOUR_OF_A_KIND, by_group
    if shape == (3, 2):
        return _C.FULL_HOUSE, by_group
    # From here the categories exclude one another (trips have no flush or straight), so the order of
    # the checks does not matter; how they rank is the ordering's business.
    if shape[0] == 3:
        return _C.THREE_OF_A_KIND, by_group
    if is_flush:
        return _C.FLUSH, by_group
    if top is not None:
        return _C.STRAIGHT, (top,)
    if shape[:2] == (2, 2):
        return _C.TWO_PAIR, by_group
    if shape[0] == 2:
        return _C.PAIR, by_group
    return _C.HIGH_CARD, by_group


def rank_hand(cards: str | Iterable[str | Card], ordering: HandOrdering = STANDARD) -> HandRank:
    """Rank a poker hand of exactly `ordering.card_count` distinct cards under `ordering`."""
    if ordering.kind is HandKind.BLACKJACK_SEVENS:
        raise ValueError("blackjack sevens are ranked with rank_sevens, not rank_hand")
    hand = parse_cards(cards)
    if len(hand) != ordering.card_count:
        raise CardError(
            f"ordering {ordering.name} ranks {ordering.card_count}-card hands, got {len(hand)} cards"
        )
    category, tiebreak = _evaluate(hand)
    return HandRank(category, tiebreak, ordering)


def rank_sevens(first_cards: str | Iterable[str | Card]) -> HandRank | None:
    """The highest sevens combination of a blackjack hand's first cards in deal order, or None.

    Only the highest combination is paid (AN10 ep. I.1.3.V.1.e, EU ep. 03.V.1.f), so three sevens
    never also count as "first card is a 7". Cards beyond the third do not matter. Shoes hold six
    decks, so the same card may repeat.
    """
    cards = parse_cards(first_cards, allow_duplicates=True)[:THREE]
    if not cards:
        raise CardError("no cards given")
    sevens = 0
    for card in cards:
        if card.rank != SEVEN:
            break
        sevens += 1
    same_suit = len({c.suit for c in cards[:sevens]}) == 1
    category: SevensCombination
    if sevens == THREE:
        category = _S.THREE_SEVENS_SAME_SUIT if same_suit else _S.THREE_SEVENS
    elif sevens == 2:
        category = _S.TWO_SEVENS_SAME_SUIT if same_suit else _S.TWO_SEVENS
    elif sevens == 1:
        category = _S.FIRST_CARD_SEVEN
    else:
        return None
    return HandRank(category, (), SEVENS)
