"""Cards and hand ranking (spec §6.1, §6.9, §6.11): pure, no database."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jackpots.poker import (
    AN96,
    SEVENS,
    STANDARD,
    THREE_CARD,
    Card,
    CardError,
    HandCategory,
    HandKind,
    HandOrdering,
    HandRank,
    SevensCombination,
    Suit,
    parse_card,
    parse_cards,
    rank_hand,
    rank_sevens,
)

C = HandCategory
DECK = tuple(Card(rank, suit) for rank in range(2, 15) for suit in Suit)
five_cards = st.lists(st.sampled_from(DECK), min_size=5, max_size=5, unique=True)


# --- cards ----------------------------------------------------------------------------------------------


def test_every_card_reads_back_its_own_name() -> None:
    assert len(DECK) == 52
    for card in DECK:
        assert parse_card(str(card)) == card
    assert parse_card("TD") == Card(10, Suit.DIAMONDS)
    assert parse_card("AS") == Card(14, Suit.SPADES)
    assert parse_card("2C") == Card(2, Suit.CLUBS)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("10H", "write the ten as T"),
        ("1S", "unknown rank"),
        ("AX", "unknown suit"),
        ("as", "unknown rank"),
        ("Ah", "unknown suit"),
        ("", "two characters"),
        ("ASD", "two characters"),
    ],
)
def test_bad_cards_say_why(text: str, message: str) -> None:
    with pytest.raises(CardError, match=message):
        parse_card(text)


def test_card_rank_out_of_range() -> None:
    with pytest.raises(CardError):
        Card(15, Suit.SPADES)
    with pytest.raises(CardError):
        Card(1, Suit.SPADES)


def test_parse_cards_accepts_spaces_commas_and_card_objects() -> None:
    expected = (Card(14, Suit.SPADES), Card(13, Suit.HEARTS))
    assert parse_cards("AS KH") == expected
    assert parse_cards("AS,KH") == expected
    assert parse_cards(["AS", Card(13, Suit.HEARTS)]) == expected


def test_duplicate_cards_are_refused_unless_the_shoe_has_several_decks() -> None:
    with pytest.raises(CardError, match="appears twice"):
        parse_cards("AS KS AS")
    with pytest.raises(CardError, match="appears twice"):
        rank_hand("AS KS QS JS AS")
    assert len(parse_cards("7S 7S", allow_duplicates=True)) == 2


def test_hand_size_must_match_the_ordering() -> None:
    with pytest.raises(CardError, match="5-card"):
        rank_hand("AS KS QS JS")
    with pytest.raises(CardError, match="3-card"):
        rank_hand("AS KS QS JS TS", THREE_CARD)
    with pytest.raises(ValueError, match="rank_sevens"):
        rank_hand("7S 7H 7D", SEVENS)


# --- five-card categories ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "category", "tiebreak"),
    [
        ("AS KS QS JS TS", C.ROYAL_FLUSH, (14,)),
        ("KH QH JH TH 9H", C.STRAIGHT_FLUSH, (13,)),
        ("5D 4D 3D 2D AD", C.STRAIGHT_FLUSH, (5,)),
        ("9S 9H 9D 9C 2S", C.FOUR_OF_A_KIND, (9, 2)),
        ("3S 3H 3D KC KS", C.FULL_HOUSE, (3, 13)),
        ("AH JH 8H 4H 2H", C.FLUSH, (14, 11, 8, 4, 2)),
        ("AS KH QD JC TS", C.STRAIGHT, (14,)),
        ("AS 2H 3D 4C 5S", C.STRAIGHT, (5,)),
        ("7S 7H 7D KC 2S", C.THREE_OF_A_KIND, (7, 13, 2)),
        ("JS JH 4D 4C AS", C.TWO_PAIR, (11, 4, 14)),
        ("QS QH 9D 5C 2S", C.PAIR, (12, 9, 5, 2)),
        ("KS JH 9D 5C 2S", C.HIGH_CARD, (13, 11, 9, 5, 2)),
        # No wrap-around (ML art. 59.1.b): Q-K-A-2-3 is just ace high.
        ("QS KH AD 2C 3S", C.HIGH_CARD, (14, 13, 12, 3, 2)),
        ("QS KS AS 2S 3S", C.FLUSH, (14, 13, 12, 3, 2)),
    ],
)
def test_five_card_categories(cards: str, category: HandCategory, tiebreak: tuple[int, ...]) -> None:
    rank = rank_hand(cards)
    assert rank.category is category
    assert rank.tiebreak == tiebreak


def test_ace_low_straight_is_the_lowest_straight_op25() -> None:
    wheel = rank_hand("AS 2H 3D 4C 5S")
    assert wheel < rank_hand("2S 3H 4D 5C 6S")
    assert wheel < rank_hand("TS JH QD KC AS")
    assert wheel > rank_hand("AS AH KD QC JS")  # still a straight, above three of a kind
    steel_wheel = rank_hand("AH 2H 3H 4H 5H")
    assert steel_wheel.category is C.STRAIGHT_FLUSH
    assert steel_wheel.tiebreak == (5,)
    assert steel_wheel < rank_hand("2D 3D 4D 5D 6D")


def test_straight_flushes_tie_on_the_highest_card_and_suits_never_rank() -> None:
    assert rank_hand("9S 8S 7S 6S 5S") == rank_hand("9H 8H 7H 6H 5H")
    assert rank_hand("KS QS JS TS 9S") > rank_hand("8H 7H 6H 5H 4H")
    assert rank_hand("AS KS QS JS TS") == rank_hand("AD KD QD JD TD")
    assert rank_hand("AS KS QS JS TS") > rank_hand("KS QS JS TS 9S")


def test_kickers_break_ties() -> None:
    assert rank_hand("AS AH KD 5C 2S") > rank_hand("AD AC QD JC 9S")
    assert rank_hand("KS KH 2D 2C AS") > rank_hand("KD KC 2S 2H QS")
    assert rank_hand("KS KH 3D 3C 2S") > rank_hand("KD KC 2S 2H AS")
    assert rank_hand("9S 9H 9D 9C AS") > rank_hand("9S 9H 9D 9C KS")
    assert rank_hand("TS TH TD 9C 9S") < rank_hand("JS JH JD 2C 2S")
    assert rank_hand("AS JS 8S 4S 3S") > rank_hand("AH JH 8H 4H 2H")


def test_an96_ranks_flush_above_full_house_op24() -> None:
    flush, full = "AH JH 8H 4H 2H", "3S 3H 3D KC KS"
    assert rank_hand(flush) < rank_hand(full)
    assert rank_hand(flush, AN96) > rank_hand(full, AN96)
    # Everything else keeps its place.
    assert rank_hand("9S 9H 9D 9C 2S", AN96) > rank_hand(flush, AN96)
    assert rank_hand(full, AN96) > rank_hand("AS KH QD JC TS", AN96)


def test_ranks_of_different_orderings_refuse_to_compare() -> None:
    with pytest.raises(TypeError, match="orderings"):
        _ = rank_hand("AS KS QS JS TS") > rank_hand("AS KS QS JS TS", AN96)
    with pytest.raises(TypeError):
        _ = rank_hand("AS KS QS JS TS") < 3
    assert rank_hand("AS KS QS JS TS") != rank_hand("AS KS QS JS TS", AN96)


def test_orderings_must_list_every_category_once() -> None:
    with pytest.raises(ValueError, match="twice"):
        HandOrdering("bad", HandKind.FIVE_CARD, (*STANDARD.categories, C.PAIR))
    with pytest.raises(ValueError, match="exactly"):
        HandOrdering("bad", HandKind.FIVE_CARD, STANDARD.categories[:-1])
    with pytest.raises(ValueError, match="not a category"):
        HandRank(C.FULL_HOUSE, (3, 2), THREE_CARD)


def _one_hand_per_class() -> list[HandRank]:
    """One hand for each of the 7,462 distinct five-card poker hands (rank multiset × flush or not)."""
    ranks: list[HandRank] = []
    suits = list(Suit)
    for multiset in itertools.combinations_with_replacement(range(2, 15), 5):
        counts = Counter(multiset)
        if max(counts.values()) > 4:
            continue
        if len(counts) == 5:
            ranks.append(rank_hand([Card(r, Suit.SPADES) for r in multiset]))  # the flush version
            plain = [Card(r, Suit.SPADES if i else Suit.HEARTS) for i, r in enumerate(multiset)]
            ranks.append(rank_hand(plain))
        else:
            seen: Counter[int] = Counter()
            cards = []
            for r in multiset:
                cards.append(Card(r, suits[seen[r]]))
                seen[r] += 1
            ranks.append(rank_hand(cards))
    return ranks


def test_the_7462_distinct_hands_rank_in_category_order() -> None:
    ranks = _one_hand_per_class()
    assert len(ranks) == len(set(ranks)) == 7462
    per_category = Counter(r.category for r in ranks)
    assert per_category == {
        C.ROYAL_FLUSH: 1,
        C.STRAIGHT_FLUSH: 9,
        C.FOUR_OF_A_KIND: 156,
        C.FULL_HOUSE: 156,
        C.FLUSH: 1277,
        C.STRAIGHT: 10,
        C.THREE_OF_A_KIND: 858,
        C.TWO_PAIR: 858,
        C.PAIR: 2860,
        C.HIGH_CARD: 1277,
    }
    ordered = sorted(ranks)
    strengths = [STANDARD.strength(r.category) for r in ordered]
    assert strengths == sorted(strengths)
    assert all(a < b for a, b in itertools.pairwise(ordered))  # strict: no two classes compare equal


# --- three-card hands (tripóquer) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "category", "tiebreak"),
    [
        ("QS KS AS", C.STRAIGHT_FLUSH, (14,)),
        ("AH 2H 3H", C.STRAIGHT_FLUSH, (3,)),
        ("7S 7H 7D", C.THREE_OF_A_KIND, (7,)),
        ("AS 2H 3D", C.STRAIGHT, (3,)),
        ("9S TH JD", C.STRAIGHT, (11,)),
        ("AD 9D 2D", C.FLUSH, (14, 9, 2)),
        ("QS QH 5D", C.PAIR, (12, 5)),
        ("KS 9H 2D", C.HIGH_CARD, (13, 9, 2)),
        ("KS AH 2D", C.HIGH_CARD, (14, 13, 2)),
    ],
)
def test_three_card_categories(cards: str, category: HandCategory, tiebreak: tuple[int, ...]) -> None:
    rank = rank_hand(cards, THREE_CARD)
    assert rank.category is category
    assert rank.tiebreak == tiebreak


def test_three_card_order_follows_the_fortuna_table() -> None:
    # AN10 ep. I.1.9.C.VII.1: escalera de color > trío > escalera > color > pareja.
    sf, trips, straight, flush, pair = (
        rank_hand(h, THREE_CARD) for h in ("2S 3S 4S", "2S 2H 2D", "QS KH AD", "AS KS 9S", "AS AH KD")
    )
    assert sf > trips > straight > flush > pair
    assert rank_hand("AS 2H 3D", THREE_CARD) < rank_hand("2S 3H 4D", THREE_CARD)


def test_all_22100_three_card_hands() -> None:
    counts = Counter(rank_hand(h, THREE_CARD).category for h in itertools.combinations(DECK, 3))
    assert counts == {
        C.STRAIGHT_FLUSH: 48,
        C.THREE_OF_A_KIND: 52,
        C.STRAIGHT: 720,
        C.FLUSH: 1096,
        C.PAIR: 3744,
        C.HIGH_CARD: 16440,
    }


# --- blackjack sevens -------------------------------------------------------------------------------------

S7 = SevensCombination


@pytest.mark.parametrize(
    ("cards", "combination"),
    [
        ("7H 7H 7H", S7.THREE_SEVENS_SAME_SUIT),  # six decks: the same card may repeat
        ("7H 7H 7S", S7.THREE_SEVENS),  # OP-31: not all the same suit is enough
        ("7H 7S 7D", S7.THREE_SEVENS),
        ("7D 7D KS", S7.TWO_SEVENS_SAME_SUIT),
        ("7D 7C", S7.TWO_SEVENS),
        ("7C KD 7S", S7.FIRST_CARD_SEVEN),
        ("7C", S7.FIRST_CARD_SEVEN),
        ("7S 7S 7S 7S", S7.THREE_SEVENS_SAME_SUIT),  # only the first three cards count
    ],
)
def test_sevens_pay_only_the_highest_combination(cards: str, combination: SevensCombination) -> None:
    rank = rank_sevens(cards)
    assert rank is not None
    assert rank.category is combination


def test_sevens_need_a_seven_first() -> None:
    assert rank_sevens("KS 7H 7D") is None
    with pytest.raises(CardError):
        rank_sevens("")
    ranks = [rank_sevens(h) for h in ("7H", "7H 7S", "7H 7H", "7H 7S 7D", "7H 7H 7H")]
    assert ranks == sorted(ranks, key=lambda r: SEVENS.strength(r.category) if r else 0)


# --- properties -------------------------------------------------------------------------------------------


@given(five_cards, five_cards)
def test_ranking_is_a_total_order_consistent_with_category(a: list[Card], b: list[Card]) -> None:
    for ordering in (STANDARD, AN96):
        ra, rb = rank_hand(a, ordering), rank_hand(b, ordering)
        assert sum([ra < rb, ra == rb, ra > rb]) == 1
        assert (ra <= rb) == (ra < rb or ra == rb)
        assert (ra >= rb) == (ra > rb or ra == rb)
        if ordering.strength(ra.category) != ordering.strength(rb.category):
            assert (ra > rb) == (ordering.strength(ra.category) > ordering.strength(rb.category))


@given(five_cards, five_cards, five_cards)
def test_ranking_is_transitive(a: list[Card], b: list[Card], c: list[Card]) -> None:
    low, mid, high = sorted(rank_hand(h) for h in (a, b, c))
    assert low <= mid <= high
    assert low <= high


@given(five_cards, st.permutations(list(Suit)), st.randoms(use_true_random=False))
def test_rank_ignores_card_order_and_suit_names(
    cards: list[Card], suit_map: list[Suit], rnd: random.Random
) -> None:
    relabel = dict(zip(Suit, suit_map, strict=True))
    shuffled = list(cards)
    rnd.shuffle(shuffled)
    renamed = [Card(c.rank, relabel[c.suit]) for c in cards]
    assert rank_hand(cards) == rank_hand(shuffled) == rank_hand(renamed)
