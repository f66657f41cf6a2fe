"""Verifiable draws (issue 28): a committed seed, the digest of the final sales, the balls derived from both.

Pure (no Django): the standalone verifier (scripts/verify_draw.py) imports this module and nothing else of the
project. Everything here is specified to the byte so that a third party can recompute a draw with any
SHA-256, HKDF and ChaCha20 of their own. Changing anything below changes past draws: a change needs new
labels ("v2"), never an edit in place.

**Seed and commitment.** A draw's seed is 32 random bytes from `secrets` (`new_seed`). Its commitment is
SHA-256 over those 32 bytes, written as 64 lower-case hex digits (`commit`; the same as `sha256sum` of the
raw bytes). The commitment is published before sales open; the seed is revealed after the game.

**Sales digest** (`sales_digest`, fixed at the close of sales, so nobody who knows the seed can choose cards
after it): SHA-256, as 64 lower-case hex digits, over these UTF-8 bytes, every line ending in one "\\n"
(0x0A), no other whitespace::

    bingo-sales/v1
    game:<game id>
    balls:1-<max ball>
    cards:<number of cards sold, decimal>
    <serial>:<n1>,<n2>,...,<nk>      one line per card sold

The game id and each serial are 1 to 64 characters of ``A-Z a-z 0-9 . _ -``. The card lines are sorted by
serial, compared as bytes (so "10" comes before "9"); a serial appears once. A card's numbers are its
distinct numbers in 1..max ball, ascending, decimal without leading zeros (a card may list none: then the
line is "<serial>:"). The max ball is 75 or 90. Example, a 90-ball game "G-7" with two cards sold::

    bingo-sales/v1\\ngame:G-7\\nballs:1-90\\ncards:2\\nA1:1,15,90\\nA2:3,4\\n

The JSON shape the verifier reads (`sales_from_json`)::

    {"format": "bingo-sales/v1", "game": "G-7", "max_ball": 90,
     "cards": [{"serial": "A1", "numbers": [1, 15, 90]}, {"serial": "A2", "numbers": [4, 3]}]}

(cards and numbers in any order; they are sorted for the digest).

`canonical_sales` is the reference writing of these bytes; `canonical_sales_of` (and `sales_digest_of`)
writes the same bytes in one pass from (serial, numbers) pairs, numbers packed one byte a number, without a
SoldCard per card: the close of sales of 100,000 cards uses it (bench/sales_digest.py measures both).

**Balls** (`balls`, `iter_balls`), from (seed, sales digest, max ball), with no home-made generator:

1. key = HKDF-SHA256 (RFC 5869) with IKM = the 32 seed bytes, salt = the 32 bytes of the sales digest (its
   hex decoded), info = the ASCII bytes ``bingo-draw/v1 balls 1-<max ball>``, length 32;
2. the stream = ChaCha20 (RFC 7539 block function) keystream under that key, block counter starting at 0 and
   a nonce of 12 zero bytes (cryptography's 16-byte "nonce" is 16 zero bytes), read as consecutive 32-bit
   little-endian words w;
3. an unbiased index below m (rejection sampling): take the next word w; if w >= 2**32 - (2**32 mod m) it is
   rejected and the next word taken; otherwise the index is w mod m;
4. a forward Fisher-Yates shuffle of the balls [1, 2, ..., max ball]: for k = 0, 1, ..., max ball - 1 (in
   that order) take j = k + index below (max ball - k), swap positions k and j; the k-th ball drawn
   (counting from 0) is then at position k. The whole order is the draw's sequence; a game that ends at a
   bingo has drawn a prefix of it.

**The golden ball** (`golden_ball`; electronic bingo's golden-ball prize, EB-05: the number whose Bingo wins
it, drawn once at the close of sales): the same steps 1 to 3 with info = the ASCII bytes
``bingo-draw/v1 golden 1-<max ball>`` (another key, so it says nothing of the balls' order), and the golden
ball = 1 + the first unbiased index below max ball.

**Verify** (`verify`): the revealed seed must hash to the commitment, and every ball drawn must equal the ball
at its position in the order derived from the seed and the sales digest; the result says "verified" or the
first thing that differs (the commitment, the golden ball when the game had one, or the first position with
what was drawn and what was due).
Refusals carry a reason and facts (`Verification`, `SalesError`): str() is the English sentence.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, NamedTuple

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SEED_BYTES = 32
DIGEST_HEX = 64
MAX_BALLS = (75, 90)
SALES_FORMAT = "bingo-sales/v1"
DRAW_LABEL = "bingo-draw/v1"
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_WORD = 4
_CHUNK = 1024  # keystream bytes made at a time (256 words; a 90-ball order needs about 90)
_ZEROS = bytes(_CHUNK)
_NONCE = bytes(16)
_BALLS = {top: frozenset(range(1, top + 1)) for top in MAX_BALLS}
_INT = frozenset({int})
_PURPOSES = ("balls", "golden")  # what a draw key is for (the HKDF info's second word)


# -- seed and commitment ------------------------------------------------------------------------------------


def new_seed() -> bytes:
    """A draw's secret seed: 32 bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


def _check_seed(seed: bytes) -> None:
    if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
        raise ValueError(f"a seed is {SEED_BYTES} bytes")


def commit(seed: bytes) -> str:
    """The seed's commitment: SHA-256 of its 32 bytes, 64 lower-case hex digits."""
    _check_seed(seed)
    return hashlib.sha256(seed).hexdigest()


def seed_from_hex(text: str) -> bytes:
    """A revealed seed written as 64 hex digits (either case), as bytes; ValueError otherwise."""
    cleaned = text.strip().lower()
    if not _HEX64.fullmatch(cleaned):
        raise ValueError("a seed is written as 64 hex digits")
    return bytes.fromhex(cleaned)


def digest_from_hex(text: str) -> str:
    """A SHA-256 hex digest (a commitment or a sales digest) in its canonical form: 64 lower-case digits."""
    cleaned = text.strip().lower()
    if not _HEX64.fullmatch(cleaned):
        raise ValueError("a digest is written as 64 hex digits")
    return cleaned


# -- the sales digest ---------------------------------------------------------------------------------------


class SalesError(ValueError):
    """Sales that have no canonical form: why (one of SALES_ERRORS_EN's keys) and the facts."""

    def __init__(self, reason: str, **facts: Any) -> None:
        self.reason = reason
        self.facts = facts
        super().__init__(SALES_ERRORS_EN[reason] % facts)


SALES_ERRORS_EN = {
    "bad_format": "the sales are not in the format %(expected)s",
    "bad_game": "a game id is 1 to 64 letters, digits, dots, underscores or hyphens",
    "bad_max_ball": "the balls go up to 75 or 90, not %(max_ball)s",
    "bad_serial": "card %(index)s: a serial is 1 to 64 letters, digits, dots, underscores or hyphens",
    "repeated_serial": "serial %(serial)s is sold twice",
    "bad_numbers": "card %(serial)s: its numbers are distinct whole numbers from 1 to %(max_ball)s",
    "bad_shape": "the sales are an object with format, game, max_ball and a list of cards (serial, numbers)",
}


@dataclass(frozen=True)
class SoldCard:
    """One card sold in the game: its serial and its numbers (any order; the digest sorts them)."""

    serial: str
    numbers: tuple[int, ...] = ()


@dataclass(frozen=True)
class Sales:
    """A game's final sales, the input of `sales_digest`: the game's id, its ball range, the cards sold."""

    game: str
    max_ball: int
    cards: tuple[SoldCard, ...]


def canonical_sales(sales: Sales) -> bytes:
    """The documented bytes the sales digest hashes (see the module's docstring); SalesError if not valid."""
    if not isinstance(sales.game, str) or not _NAME.fullmatch(sales.game):
        raise SalesError("bad_game")
    max_ball = _check_max_ball(sales.max_ball)
    valid = _BALLS[max_ball]
    lines: dict[bytes, bytes] = {}
    for index, card in enumerate(sales.cards, start=1):
        if not isinstance(card.serial, str) or not _NAME.fullmatch(card.serial):
            raise SalesError("bad_serial", index=index)
        serial = card.serial.encode("ascii")
        if serial in lines:
            raise SalesError("repeated_serial", serial=card.serial)
        numbers = card.numbers
        distinct = set(numbers)
        # Whole numbers only (not True, not 1.0: they equal 1 but are written otherwise), in range, once each.
        if len(distinct) != len(numbers) or not distinct <= valid or not set(map(type, numbers)) <= _INT:
            raise SalesError("bad_numbers", serial=card.serial, max_ball=max_ball)
        lines[serial] = serial + b":" + ",".join(map(str, sorted(numbers))).encode("ascii") + b"\n"
    head = f"{SALES_FORMAT}\ngame:{sales.game}\nballs:1-{max_ball}\ncards:{len(lines)}\n".encode("ascii")
    return head + b"".join(lines[serial] for serial in sorted(lines))


def sales_digest(sales: Sales) -> str:
    """The canonical sales digest: SHA-256 of `canonical_sales`, 64 lower-case hex digits."""
    return hashlib.sha256(canonical_sales(sales)).hexdigest()


# The fast writing of the card lines (`canonical_sales_of`): all the cards' numbers in one byte string, each
# card's sorted and ended by a 0 byte, checked and written by a few C calls over the whole of it.
_SERIAL, _NUMBERS = itemgetter(0), itemgetter(1)
_SERIALS = re.compile(r"[A-Za-z0-9._-]{1,64}(?:\n[A-Za-z0-9._-]{1,64})*")  # serials, one a line
_NUMBER_TWICE = re.compile(rb"([^\0])\1")  # a card's sorted numbers: one twice sits next to itself
_PACKED_OK = {top: bytes(range(top + 1)) for top in MAX_BALLS}  # the card ends (0) and the numbers 1..top
_PACKED_TEXT = {top: ["\n", *(f"{n}," for n in range(1, top + 1))] for top in MAX_BALLS}  # str.translate's


def canonical_sales_of(game: str, max_ball: int, cards: Iterable[tuple[str, bytes | Iterable[int]]]) -> bytes:
    """`canonical_sales(Sales(game, max_ball, cards))`: the same bytes, or the same SalesError (reason and
    facts), without a SoldCard per card when every card's numbers come packed one byte a number (a `bytes`,
    in any order: a card's packed cells, the free ones dropped). The close of sales of 100,000 cards.

    The fast way checks and writes the whole sales with a few C calls (bench/sales_digest.py); sales it does
    not take (a card not packed, or anything `canonical_sales` would refuse) go to `canonical_sales`, which
    writes them or names the first card refused. tests/bingo/test_verifiable.py proves the two identical."""
    cards = list(cards)
    fast = _canonical_packed(game, max_ball, cards)
    if fast is not None:
        return fast
    sold = tuple(SoldCard(serial, tuple(numbers)) for serial, numbers in cards)
    return canonical_sales(Sales(game=game, max_ball=max_ball, cards=sold))


def _canonical_packed(
    game: str, max_ball: int, cards: list[tuple[str, bytes | Iterable[int]]]
) -> bytes | None:
    """The canonical bytes of packed, valid sales; None for any others (`canonical_sales` says why)."""
    if not isinstance(game, str) or not _NAME.fullmatch(game) or type(max_ball) is not int:
        return None
    if max_ball not in MAX_BALLS or not cards or set(map(len, cards)) != {2}:
        return None
    if set(map(type, map(_SERIAL, cards))) != {str} or set(map(type, map(_NUMBERS, cards))) != {bytes}:
        return None
    cards = sorted(cards, key=_SERIAL)  # str order of ASCII serials is their byte order
    serials: list[str] = list(map(_SERIAL, cards))
    numbers: list[bytes] = list(map(_NUMBERS, cards))
    listed = "\n".join(serials)  # a serial with a "\n" of its own would add a line: the count tells
    if (
        not _SERIALS.fullmatch(listed)
        or listed.count("\n") != len(serials) - 1
        or len(set(serials)) < len(cards)
    ):
        return None
    packed = b"\0".join(map(bytes, map(sorted, numbers))) + b"\0"
    if packed.translate(None, _PACKED_OK[max_ball]) or packed.count(0) != len(cards):
        return None  # a number out of 1..max ball (a 0 too: one more card end than cards)
    if _NUMBER_TWICE.search(packed):
        return None  # a number twice in a card
    # "1,15,90,\n3,4,\n" -> "1,15,90\n3,4\n" -> each card's numbers' text, then its line.
    texts = packed.decode("latin-1").translate(_PACKED_TEXT[max_ball]).replace(",\n", "\n").split("\n")
    count = len(serials)
    lines = [":"] * (4 * count)  # serial, ":", numbers, "\n" per card
    lines[0::4], lines[2::4], lines[3::4] = serials, texts[:-1], ["\n"] * count
    head = f"{SALES_FORMAT}\ngame:{game}\nballs:1-{max_ball}\ncards:{count}\n"
    return (head + "".join(lines)).encode("ascii")


def sales_digest_of(game: str, max_ball: int, cards: Iterable[tuple[str, bytes | Iterable[int]]]) -> str:
    """`sales_digest(Sales(game, max_ball, cards))` the fast way: SHA-256 of `canonical_sales_of`."""
    return hashlib.sha256(canonical_sales_of(game, max_ball, cards)).hexdigest()


def sales_from_json(data: object) -> Sales:
    """Sales from their JSON shape (the module's docstring); SalesError naming what is wrong."""
    if not isinstance(data, Mapping):
        raise SalesError("bad_shape")
    if data.get("format") != SALES_FORMAT:
        raise SalesError("bad_format", expected=SALES_FORMAT)
    game, max_ball, cards = data.get("game"), data.get("max_ball"), data.get("cards")
    if not isinstance(game, str):
        raise SalesError("bad_game")
    if not isinstance(cards, list):
        raise SalesError("bad_shape")
    sold: list[SoldCard] = []
    for index, card in enumerate(cards, start=1):
        if not isinstance(card, Mapping) or not isinstance(card.get("serial"), str):
            raise SalesError("bad_serial", index=index)
        numbers = card.get("numbers", [])
        if not isinstance(numbers, list):
            raise SalesError("bad_numbers", serial=card["serial"], max_ball=max_ball)
        sold.append(SoldCard(card["serial"], tuple(numbers)))
    sales = Sales(game=game, max_ball=_check_max_ball(max_ball), cards=tuple(sold))
    canonical_sales(sales)  # every other refusal, now
    return sales


def sales_to_json(sales: Sales) -> dict[str, Any]:
    """The JSON shape of `sales` (as `sales_from_json` reads it), cards and numbers in canonical order."""
    cards = sorted(sales.cards, key=lambda card: card.serial.encode("ascii"))
    return {
        "format": SALES_FORMAT,
        "game": sales.game,
        "max_ball": sales.max_ball,
        "cards": [{"serial": card.serial, "numbers": sorted(card.numbers)} for card in cards],
    }


def _check_max_ball(max_ball: object) -> int:
    if type(max_ball) is not int or max_ball not in MAX_BALLS:
        raise SalesError("bad_max_ball", max_ball=max_ball)
    return max_ball


# -- the balls ----------------------------------------------------------------------------------------------


def draw_key(seed: bytes, digest: str, max_ball: int, purpose: str = "balls") -> bytes:
    """Step 1: the ChaCha20 key, HKDF-SHA256 of the seed, salted with the sales digest, for the ball range
    and the purpose ("balls": the order; "golden": the golden ball)."""
    _check_seed(seed)
    if purpose not in _PURPOSES:
        raise ValueError(f"a draw key is for {' or '.join(_PURPOSES)}")
    salt = bytes.fromhex(digest_from_hex(digest))
    info = f"{DRAW_LABEL} {purpose} 1-{_check_max_ball(max_ball)}".encode("ascii")
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(seed)


def _words(key: bytes) -> Iterator[int]:
    """Step 2: the keystream's 32-bit little-endian words, without end."""
    stream = Cipher(algorithms.ChaCha20(key, _NONCE), mode=None).encryptor()
    while True:
        block = stream.update(_ZEROS)
        yield from (int.from_bytes(block[i : i + _WORD], "little") for i in range(0, _CHUNK, _WORD))


def _below(words: Iterator[int], m: int) -> int:
    """Step 3: an index in 0..m-1, each equally likely (words past the last whole multiple of m rejected)."""
    limit = 2**32 - (2**32 % m)
    while True:
        word = next(words)
        if word < limit:
            return word % m


def iter_balls(seed: bytes, digest: str, max_ball: int) -> Iterator[int]:
    """Step 4: the draw's balls one by one, in order (a worker resuming a game takes the same sequence)."""
    words = _words(draw_key(seed, digest, max_ball))
    order = list(range(1, max_ball + 1))
    for k in range(max_ball):
        j = k + _below(words, max_ball - k)
        order[k], order[j] = order[j], order[k]
        yield order[k]


def golden_ball(seed: bytes, digest: str, max_ball: int) -> int:
    """The golden ball: 1 + an unbiased index below max ball, from its own key (info "... golden 1-N")."""
    return 1 + _below(_words(draw_key(seed, digest, max_ball, "golden")), max_ball)


def balls(seed: bytes, digest: str, max_ball: int, count: int | None = None) -> list[int]:
    """The draw's order: all max_ball balls, or its first `count`."""
    taken = iter_balls(seed, digest, max_ball)
    limit = max_ball if count is None else max(0, min(count, max_ball))
    return [next(taken) for _ in range(limit)]


# -- verification -------------------------------------------------------------------------------------------


class Verification(NamedTuple):
    """What a check of a draw found: "verified", or the first thing that differs, with its facts."""

    reason: str  # one of VERIFICATION_EN's keys
    facts: Mapping[str, Any]

    @property
    def verified(self) -> bool:
        return self.reason == "verified"

    def __str__(self) -> str:
        said = VERIFICATION_EN[self.reason] % dict(self.facts)
        if self.verified and "golden" in self.facts:
            said += GOLDEN_VERIFIED_EN % dict(self.facts)
        return said


VERIFICATION_EN = {
    "verified": "verified: the seed matches its commitment and all %(count)s balls drawn follow from it",
    "commitment_mismatch": "the seed does not match the commitment: its SHA-256 is %(computed)s, "
    "the commitment published was %(commitment)s",
    "sales_digest_mismatch": "the sales digest differs: the sales give %(computed)s, not %(given)s",
    "ball_differs": "ball %(position)s differs: %(drawn)s was drawn, the seed gives %(expected)s",
    "golden_differs": "the golden ball differs: %(drawn)s was drawn, the seed gives %(expected)s",
    "too_many_balls": "%(count)s balls drawn, but a game of balls 1-%(max_ball)s has only %(max_ball)s",
}


GOLDEN_VERIFIED_EN = ", and so does the golden ball %(golden)s"


def verify(
    seed: bytes,
    commitment: str,
    digest: str,
    drawn: Iterable[int],
    max_ball: int,
    *,
    golden: int | None = None,
) -> Verification:
    """Check a revealed draw: the seed against its commitment, the golden ball (`golden`, when the game drew
    one at its close of sales) against the seed's, then every ball drawn against the order the seed gives
    (positions count from 1). The first difference is the answer."""
    computed = commit(seed)
    published = digest_from_hex(commitment)
    if not hmac.compare_digest(computed, published):
        return Verification("commitment_mismatch", {"computed": computed, "commitment": published})
    if golden is not None:
        expected_golden = golden_ball(seed, digest, max_ball)
        if golden != expected_golden:
            return Verification("golden_differs", {"drawn": golden, "expected": expected_golden})
    drawn = list(drawn)
    if len(drawn) > max_ball:
        return Verification("too_many_balls", {"count": len(drawn), "max_ball": max_ball})
    for position, (ball, expected) in enumerate(
        zip(drawn, iter_balls(seed, digest, max_ball), strict=False), start=1
    ):
        if ball != expected:
            return Verification("ball_differs", {"position": position, "drawn": ball, "expected": expected})
    facts = {"count": len(drawn)} if golden is None else {"count": len(drawn), "golden": golden}
    return Verification("verified", facts)


def check_sales(sales: Sales, digest: str) -> Verification | None:
    """None when `sales` give the sales digest published; otherwise the mismatch, with both digests."""
    computed, given = sales_digest(sales), digest_from_hex(digest)
    if hmac.compare_digest(computed, given):
        return None
    return Verification("sales_digest_mismatch", {"computed": computed, "given": given})
