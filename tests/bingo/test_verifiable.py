"""Verifiable draws' pure core (bingo.verifiable) and its standalone verifier (scripts/verify_draw.py).

No database: these run in both test runs. The uniformity tests are deterministic (fixed seeds) and fail only
below a p-value of 1e-6 (CHI_SQUARE_P_MIN), which a uniform generator reaches once in a million fixed seed
sets: with these seeds they can never flake, and a biased draw (one ball 1 % more likely over 100,000 draws)
fails them.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bingo import verifiable as v

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "verify_draw.py"
CHI_SQUARE_P_MIN = 1e-6

seeds = st.binary(min_size=32, max_size=32)
max_balls = st.sampled_from(v.MAX_BALLS)
names = st.from_regex(r"[A-Za-z0-9._-]{1,12}", fullmatch=True)


@st.composite
def sales_of(draw: st.DrawFn, max_ball: int | None = None) -> v.Sales:
    top = draw(max_balls) if max_ball is None else max_ball
    serials = draw(st.lists(names, unique=True, max_size=12))
    cards = tuple(
        v.SoldCard(serial, tuple(draw(st.lists(st.integers(1, top), unique=True, max_size=15))))
        for serial in serials
    )
    return v.Sales(game=draw(names), max_ball=top, cards=cards)


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_draw", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


verify_draw = load_script()


# -- known answers ------------------------------------------------------------------------------------------

EXAMPLE = v.Sales("G-7", 90, (v.SoldCard("A2", (4, 3)), v.SoldCard("A1", (90, 1, 15))))
EXAMPLE_SEED = bytes(range(32))
EXAMPLE_DIGEST = "596fd7da2f63fd57661a6136f782269d52e37964da7f32ffbb5b95cd9f73a76f"
EXAMPLE_COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
EXAMPLE_KEY = "09f2e91d28a5a7c82221bc43bf42d72516333658196f66b14ca2a6b0c536a7e3"
EXAMPLE_BALLS = [
    30, 2, 24, 6, 68, 20, 56, 38, 10, 80, 11, 32, 21, 77, 54, 34, 51, 28, 17, 61, 79, 4, 83, 36, 88,
    13, 9, 18, 66, 29, 33, 63, 87, 45, 5, 26, 82, 57, 70, 47, 19, 14, 72, 71, 76, 53, 15, 58, 39, 74,
    41, 69, 48, 12, 42, 90, 46, 43, 62, 31, 25, 73, 81, 40, 44, 22, 89, 49, 3, 50, 37, 85, 60, 75, 64,
    1, 16, 86, 23, 67, 84, 59, 35, 55, 52, 65, 27, 8, 7, 78,
]  # fmt: skip
EMPTY_75 = v.Sales("E-1", 75, ())
EMPTY_75_DIGEST = "91c939a9c64e091b54b98472f28ce90942a99042dce578f30bfe8a403ee8d79e"
ZERO_SEED_COMMITMENT = "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
EMPTY_75_BALLS = [
    26, 18, 61, 24, 52, 13, 64, 1, 7, 53, 9, 30, 45, 4, 39, 5, 34, 60, 23, 49, 42, 54, 36, 58, 37,
    10, 33, 17, 57, 67, 44, 48, 35, 6, 75, 46, 41, 3, 71, 31, 63, 12, 11, 21, 55, 15, 19, 74, 29, 73,
    47, 62, 56, 27, 28, 16, 22, 14, 20, 25, 38, 51, 65, 50, 68, 40, 2, 43, 32, 70, 69, 66, 72, 59, 8,
]  # fmt: skip


def test_known_answers_are_fixed() -> None:
    assert (
        v.canonical_sales(EXAMPLE) == b"bingo-sales/v1\ngame:G-7\nballs:1-90\ncards:2\nA1:1,15,90\nA2:3,4\n"
    )
    assert v.sales_digest(EXAMPLE) == EXAMPLE_DIGEST
    assert v.commit(EXAMPLE_SEED) == EXAMPLE_COMMITMENT == hashlib.sha256(EXAMPLE_SEED).hexdigest()
    assert v.draw_key(EXAMPLE_SEED, EXAMPLE_DIGEST, 90).hex() == EXAMPLE_KEY
    assert v.balls(EXAMPLE_SEED, EXAMPLE_DIGEST, 90) == EXAMPLE_BALLS
    assert v.sales_digest(EMPTY_75) == EMPTY_75_DIGEST
    assert v.commit(bytes(32)) == ZERO_SEED_COMMITMENT
    assert v.balls(bytes(32), EMPTY_75_DIGEST, 75) == EMPTY_75_BALLS


def test_the_documented_example_is_the_one_in_the_module_docstring() -> None:
    assert v.__doc__ is not None
    assert r"bingo-sales/v1\ngame:G-7\nballs:1-90\ncards:2\nA1:1,15,90\nA2:3,4\n" in v.__doc__
    assert v.sales_from_json(
        json.loads(v.__doc__.split("verifier reads (`sales_from_json`)::")[1].split("(")[0])
    )
    assert v.sales_digest(v.sales_from_json(v.sales_to_json(EXAMPLE))) == EXAMPLE_DIGEST


# -- the documented algorithm, recomputed from the docstring alone ------------------------------------------


def hkdf_sha256(ikm: bytes, salt: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 with the standard library's HMAC (not the module's HKDF)."""
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out, counter = out + block, counter + 1
    return out[:length]


def documented_balls(seed: bytes, digest: str, max_ball: int) -> list[int]:
    key = hkdf_sha256(seed, bytes.fromhex(digest), f"bingo-draw/v1 balls 1-{max_ball}".encode(), 32)
    stream = Cipher(algorithms.ChaCha20(key, bytes(16)), mode=None).encryptor().update(bytes(4096))

    def words() -> Iterator[int]:
        for i in range(0, len(stream), 4):
            yield int.from_bytes(stream[i : i + 4], "little")

    taken = words()
    order = list(range(1, max_ball + 1))
    for k in range(max_ball):
        m = max_ball - k
        while (w := next(taken)) >= 2**32 - (2**32 % m):
            pass
        j = k + w % m
        order[k], order[j] = order[j], order[k]
    return order


@settings(max_examples=30, deadline=None)
@given(seeds, sales_of())
def test_the_balls_follow_the_documented_algorithm(seed: bytes, sales: v.Sales) -> None:
    digest = v.sales_digest(sales)
    canonical = v.canonical_sales(sales)
    assert digest == hashlib.sha256(canonical).hexdigest()
    assert v.balls(seed, digest, sales.max_ball) == documented_balls(seed, digest, sales.max_ball)


# -- determinism and shape ----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(seeds, sales_of(), st.integers(0, 100))
def test_a_draw_is_a_permutation_the_same_every_time_and_resumable(
    seed: bytes, sales: v.Sales, count: int
) -> None:
    digest = v.sales_digest(sales)
    order = v.balls(seed, digest, sales.max_ball)
    assert sorted(order) == list(range(1, sales.max_ball + 1))
    assert v.balls(seed, digest, sales.max_ball) == order
    assert v.balls(seed, digest, sales.max_ball, count) == order[:count]
    # A worker restarted mid-game recomputes the sequence and carries on from where it was.
    resumed = v.iter_balls(seed, digest, sales.max_ball)
    assert [next(resumed) for _ in range(min(count, sales.max_ball))] == order[:count]
    assert list(resumed) == order[count:]


@settings(max_examples=60, deadline=None)
@given(sales_of(), st.randoms(use_true_random=False))
def test_the_sales_digest_does_not_depend_on_the_order_of_cards_or_numbers(sales: v.Sales, rnd) -> None:
    cards = [
        v.SoldCard(card.serial, tuple(rnd.sample(card.numbers, len(card.numbers)))) for card in sales.cards
    ]
    rnd.shuffle(cards)
    shuffled = v.Sales(sales.game, sales.max_ball, tuple(cards))
    assert v.sales_digest(shuffled) == v.sales_digest(sales)
    assert v.sales_digest(v.sales_from_json(json.loads(json.dumps(v.sales_to_json(shuffled))))) == (
        v.sales_digest(sales)
    )


# -- verification: every change detected --------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(seeds, sales_of(), st.integers(0, 90))
def test_a_drawn_prefix_verifies(seed: bytes, sales: v.Sales, count: int) -> None:
    digest = v.sales_digest(sales)
    drawn = v.balls(seed, digest, sales.max_ball, count)
    result = v.verify(seed, v.commit(seed), digest, drawn, sales.max_ball)
    assert result.verified
    assert str(result).startswith("verified")
    assert result.facts == {"count": len(drawn)}


@settings(max_examples=60, deadline=None)
@given(seeds, seeds, sales_of())
def test_a_seed_replaced_after_its_commitment_is_detected(committed: bytes, revealed: bytes, sales) -> None:
    if committed == revealed:
        return
    digest = v.sales_digest(sales)
    # The balls were drawn from the replaced seed, and it is that seed that is revealed.
    drawn = v.balls(revealed, digest, sales.max_ball)
    result = v.verify(revealed, v.commit(committed), digest, drawn, sales.max_ball)
    assert result.reason == "commitment_mismatch"
    assert not result.verified
    assert v.commit(committed) in str(result)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seeds, sales_of(), st.data())
def test_one_sale_changed_after_the_close_is_detected(
    seed: bytes, sales: v.Sales, data: st.DataObject
) -> None:
    digest = v.sales_digest(sales)
    drawn = v.balls(seed, digest, sales.max_ball)
    cards = list(sales.cards)
    change = data.draw(st.sampled_from(["add", "remove", "number", "serial", "game"] if cards else ["add"]))
    if change == "add":
        serial = data.draw(names.filter(lambda s: s not in {c.serial for c in cards}))
        cards.append(v.SoldCard(serial, (1,)))
    elif change == "remove":
        cards.pop(data.draw(st.integers(0, len(cards) - 1)))
    elif change == "number":
        i = data.draw(st.integers(0, len(cards) - 1))
        free = sorted(set(range(1, sales.max_ball + 1)) - set(cards[i].numbers))
        cards[i] = v.SoldCard(cards[i].serial, (*cards[i].numbers[1:], data.draw(st.sampled_from(free))))
    elif change == "serial":
        i = data.draw(st.integers(0, len(cards) - 1))
        serial = data.draw(names.filter(lambda s: s not in {c.serial for c in cards}))
        cards[i] = v.SoldCard(serial, cards[i].numbers)
    changed = v.Sales(sales.game + "x" if change == "game" else sales.game, sales.max_ball, tuple(cards))
    mismatch = v.check_sales(changed, digest)
    assert mismatch is not None and mismatch.reason == "sales_digest_mismatch"
    assert v.check_sales(sales, digest) is None
    # Recomputed from the changed sales, the balls drawn no longer follow (90! or 75! orders: never equal).
    result = v.verify(seed, v.commit(seed), v.sales_digest(changed), drawn, sales.max_ball)
    assert result.reason == "ball_differs"


@settings(max_examples=60, deadline=None)
@given(seeds, sales_of(), st.data())
def test_one_ball_changed_is_named_at_its_position(seed: bytes, sales: v.Sales, data: st.DataObject) -> None:
    digest = v.sales_digest(sales)
    drawn = v.balls(seed, digest, sales.max_ball)
    position = data.draw(st.integers(1, sales.max_ball))
    wrong = data.draw(st.integers(0, 100).filter(lambda b: b != drawn[position - 1]))
    due = drawn[position - 1]
    drawn[position - 1] = wrong
    result = v.verify(seed, v.commit(seed), digest, drawn, sales.max_ball)
    assert result.reason == "ball_differs"
    assert result.facts == {"position": position, "drawn": wrong, "expected": due}
    assert str(result) == f"ball {position} differs: {wrong} was drawn, the seed gives {due}"


def test_more_balls_than_the_range_and_a_ball_too_many_are_refused() -> None:
    drawn = [*EXAMPLE_BALLS, 1]
    result = v.verify(EXAMPLE_SEED, EXAMPLE_COMMITMENT, EXAMPLE_DIGEST, drawn, 90)
    assert result.reason == "too_many_balls"
    assert v.verify(EXAMPLE_SEED, EXAMPLE_COMMITMENT.upper(), EXAMPLE_DIGEST, EXAMPLE_BALLS, 90).verified


@pytest.mark.parametrize(
    ("sales", "reason"),
    [
        (v.Sales("G 7", 90, ()), "bad_game"),
        (v.Sales("G", 80, ()), "bad_max_ball"),
        (v.Sales("G", 90, (v.SoldCard("a:b", (1,)),)), "bad_serial"),
        (v.Sales("G", 90, (v.SoldCard("A", (1,)), v.SoldCard("A", (2,)))), "repeated_serial"),
        (v.Sales("G", 75, (v.SoldCard("A", (76,)),)), "bad_numbers"),
        (v.Sales("G", 90, (v.SoldCard("A", (0,)),)), "bad_numbers"),
        (v.Sales("G", 90, (v.SoldCard("A", (5, 5)),)), "bad_numbers"),
        (v.Sales("G", 90, (v.SoldCard("A", (True,)),)), "bad_numbers"),
    ],
)
def test_sales_without_a_canonical_form_are_refused_with_the_reason(sales: v.Sales, reason: str) -> None:
    with pytest.raises(v.SalesError) as caught:
        v.sales_digest(sales)
    assert caught.value.reason == reason


# -- the fast way (canonical_sales_of) writes the reference's bytes, refuses what it refuses -------------


def _outcome(write: object, *args: object) -> tuple[str, object]:
    """What a writing gives: ("bytes", them) or ("refused", (reason, facts))."""
    try:
        return "bytes", write(*args)  # type: ignore[operator]
    except v.SalesError as exc:
        return "refused", (exc.reason, exc.facts)


@settings(max_examples=300)
@given(sales_of(), st.randoms(use_true_random=False), st.booleans())
def test_the_fast_way_writes_the_reference_bytes(sales: v.Sales, rnd: object, packed: bool) -> None:
    cards = [
        (card.serial, bytes(rnd.sample(card.numbers, len(card.numbers))) if packed else list(card.numbers))  # type: ignore[attr-defined]
        for card in sales.cards
    ]
    rnd.shuffle(cards)  # type: ignore[attr-defined]
    fast = v.canonical_sales_of(sales.game, sales.max_ball, cards)
    assert fast == v.canonical_sales(sales)
    assert v.sales_digest_of(sales.game, sales.max_ball, iter(cards)) == v.sales_digest(sales)


# Sales of every kind: serials of any characters (":", a line break, none, too long, repeated), numbers packed
# in any bytes (0, above the range, twice) or as other things.
dirty_serials = st.one_of(names, st.text(max_size=3), st.just("A" * 65), st.just("a\nb"), st.integers(0, 9))
dirty_numbers = st.one_of(
    st.binary(max_size=6),
    st.lists(st.integers(1, 90), unique=True, max_size=4).map(bytes),
    st.lists(st.one_of(st.integers(-1, 91), st.booleans(), st.just(1.0)), max_size=4),
)


@settings(max_examples=500)
@given(
    st.one_of(names, st.just("G 7")),
    st.sampled_from([75, 90, 80]),
    st.lists(st.tuples(dirty_serials, dirty_numbers), max_size=6),
)
def test_the_fast_way_refuses_what_the_reference_refuses_for_the_same_reason(
    game: str, max_ball: int, cards: list[tuple[str, object]]
) -> None:
    sold = tuple(v.SoldCard(serial, tuple(numbers)) for serial, numbers in cards)  # type: ignore[arg-type]
    reference = _outcome(v.canonical_sales, v.Sales(game=game, max_ball=max_ball, cards=sold))
    assert _outcome(v.canonical_sales_of, game, max_ball, cards) == reference


@pytest.mark.parametrize(
    ("cards", "reason"),
    [
        ([("a:b", b"\x01")], "bad_serial"),
        ([("a\nb", b"\x01")], "bad_serial"),
        ([("A", b"\x01"), ("A", b"\x02")], "repeated_serial"),
        ([("A", b"\x5b")], "bad_numbers"),  # 91
        ([("A", b"\x00")], "bad_numbers"),
        ([("A", b"\x01\x00\x02"), ("B", b"")], "bad_numbers"),  # a 0 would split the card in two
        ([("A", b"\x05\x05")], "bad_numbers"),
    ],
)
def test_packed_sales_without_a_canonical_form_are_refused_with_the_reason(
    cards: list[tuple[str, bytes]], reason: str
) -> None:
    with pytest.raises(v.SalesError) as caught:
        v.sales_digest_of("G", 90, cards)
    assert caught.value.reason == reason


def test_the_fast_way_gives_the_known_digest() -> None:
    cards = [("A2", bytes([4, 3])), ("A1", bytes([90, 1, 15]))]
    assert v.sales_digest_of("G-7", 90, cards) == EXAMPLE_DIGEST
    assert v.sales_digest_of("E-1", 75, []) == EMPTY_75_DIGEST


GOOD_JSON = {"format": "bingo-sales/v1", "game": "G", "max_ball": 90, "cards": []}


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([], "bad_shape"),
        ({"format": "bingo-sales/v0", "game": "G", "max_ball": 90, "cards": []}, "bad_format"),
        ({"format": "bingo-sales/v1", "game": 7, "max_ball": 90, "cards": []}, "bad_game"),
        ({"format": "bingo-sales/v1", "game": "G", "max_ball": "90", "cards": []}, "bad_max_ball"),
        ({"format": "bingo-sales/v1", "game": "G", "max_ball": 90, "cards": {}}, "bad_shape"),
        ({**GOOD_JSON, "cards": [{"numbers": [1]}]}, "bad_serial"),
        ({**GOOD_JSON, "cards": [{"serial": "A", "numbers": 1}]}, "bad_numbers"),
        ({**GOOD_JSON, "cards": [{"serial": "A", "numbers": [1.0]}]}, "bad_numbers"),
    ],
)
def test_sales_json_of_another_shape_is_refused_with_the_reason(data: object, reason: str) -> None:
    with pytest.raises(v.SalesError) as caught:
        v.sales_from_json(data)
    assert caught.value.reason == reason


@pytest.mark.parametrize("seed", [b"", bytes(31), bytes(33), "00" * 32])
def test_a_seed_is_32_bytes(seed: object) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        v.commit(seed)  # type: ignore[arg-type]


def test_hex_inputs_are_64_hex_digits() -> None:
    assert v.seed_from_hex(" " + "AB" * 32 + "\n") == bytes([0xAB]) * 32
    for bad in ("ab" * 31, "zz" * 32, "ab" * 33):
        with pytest.raises(ValueError, match="64 hex digits"):
            v.seed_from_hex(bad)
        with pytest.raises(ValueError, match="64 hex digits"):
            v.digest_from_hex(bad)


def test_new_seeds_are_32_fresh_bytes() -> None:
    made = {v.new_seed() for _ in range(100)}
    assert len(made) == 100
    assert all(len(seed) == 32 for seed in made)


# -- uniformity ---------------------------------------------------------------------------------------------


def chi_square_sf(statistic: float, df: int) -> float:
    """P(X >= statistic) for X chi-square with df degrees of freedom: the regularized upper incomplete
    gamma Q(df/2, statistic/2), by its series below a + 1 and its continued fraction above (Numerical
    Recipes 6.2)."""
    a, x = df / 2, statistic / 2
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1 / a
        n = a
        while abs(term) > abs(total) * 1e-15:
            n += 1
            term *= x / n
            total += term
        return 1 - total * math.exp(log_front)
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(log_front) * h


def test_the_chi_square_tail_is_right() -> None:
    for x in (0.5, 2.0, 9.0, 30.0):  # two degrees of freedom: exp(-x/2) exactly
        assert chi_square_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-9)
    assert chi_square_sf(112.022, 89) == pytest.approx(0.05, abs=5e-4)  # tables: the 95th percentile, df 89
    assert chi_square_sf(95.081, 74) == pytest.approx(0.05, abs=5e-4)  # df 74
    assert chi_square_sf(89.0, 89) == pytest.approx(0.48, abs=0.01)


def fixed_seed(i: int) -> bytes:
    return hashlib.sha256(b"chi-square seed %d" % i).digest()


def pearson(counts: list[int], expected: float) -> float:
    return sum((count - expected) ** 2 / expected for count in counts)


@pytest.mark.parametrize("max_ball", v.MAX_BALLS)
def test_the_first_ball_is_uniform_over_100000_draws(max_ball: int) -> None:
    draws = 100_000
    digest = v.sales_digest(v.Sales("CHI", max_ball, ()))
    counts = [0] * max_ball
    for i in range(draws):
        counts[v.balls(fixed_seed(i), digest, max_ball, 1)[0] - 1] += 1
    p = chi_square_sf(pearson(counts, draws / max_ball), max_ball - 1)
    assert p > CHI_SQUARE_P_MIN, (p, counts)


@pytest.mark.parametrize("max_ball", v.MAX_BALLS)
def test_every_position_takes_every_ball_alike(max_ball: int) -> None:
    """Position against ball over 4,000 whole draws. The draws' rows and columns both sum to the draw count,
    so Pearson's statistic is n/(n-1) times a chi-square with (n-1)^2 degrees of freedom (its mean is
    n(n-1)): it is scaled back before the tail is read."""
    draws = 4_000
    digest = v.sales_digest(v.Sales("CHI-POS", max_ball, ()))
    counts = [[0] * max_ball for _ in range(max_ball)]
    for i in range(draws):
        for position, ball in enumerate(v.balls(fixed_seed(i), digest, max_ball)):
            counts[position][ball - 1] += 1
    statistic = pearson([c for row in counts for c in row], draws / max_ball) * (max_ball - 1) / max_ball
    p = chi_square_sf(statistic, (max_ball - 1) ** 2)
    assert p > CHI_SQUARE_P_MIN, p
    # and the last ball, on its own (the Fisher-Yates step with the smallest ranges)
    last = chi_square_sf(pearson(counts[-1], draws / max_ball), max_ball - 1)
    assert last > CHI_SQUARE_P_MIN, last


def test_a_biased_first_ball_would_fail_the_test() -> None:
    """The test's power: ball 1 drawn 1 % of the time more than its share, over 100,000 draws."""
    draws, max_ball = 100_000, 90
    share = draws / max_ball
    counts = [round(share)] * max_ball
    counts[0] += 1_000  # about 1 % of all draws moved to ball 1
    counts[1] -= 1_000
    assert chi_square_sf(pearson(counts, share), max_ball - 1) < CHI_SQUARE_P_MIN


# -- the standalone verifier --------------------------------------------------------------------------------


def run_in_process(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = verify_draw.main(list(argv))
    return code, capsys.readouterr().out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seeds, sales_of(), st.integers(1, 90))
def test_the_verifier_recomputes_every_ball_from_the_seed_and_the_sales(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: bytes, sales: v.Sales, count: int
) -> None:
    digest = v.sales_digest(sales)
    drawn = v.balls(seed, digest, sales.max_ball, count)
    sales_file = tmp_path / "sales.json"
    sales_file.write_text(json.dumps(v.sales_to_json(sales)))
    common = ["--seed", seed.hex(), "--commitment", v.commit(seed)]
    balls = ",".join(map(str, drawn))
    code, out = run_in_process(*common, "--sales", str(sales_file), "--balls", balls, capsys=capsys)
    assert (code, out.split(":")[0]) == (0, "verified")
    code, out = run_in_process(
        *common,
        "--sales-digest",
        digest,
        "--max-ball",
        str(sales.max_ball),
        "--balls",
        balls,
        "--json",
        capsys=capsys,
    )
    assert code == 0
    assert json.loads(out) == {"verified": True, "reason": "verified", "count": len(drawn)}
    # One ball changed: named where it differs.
    position = len(drawn)
    changed = [*drawn[:-1], drawn[-1] % sales.max_ball + 1]
    code, out = run_in_process(
        *common, "--sales", str(sales_file), "--balls", " ".join(map(str, changed)), "--json", capsys=capsys
    )
    assert code == 1
    assert json.loads(out) == {
        "verified": False, "reason": "ball_differs", "position": position, "drawn": changed[-1],
        "expected": drawn[-1],
    }  # fmt: skip


def test_the_verifier_names_a_sales_digest_that_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sales_file = tmp_path / "sales.json"
    sales_file.write_text(json.dumps(v.sales_to_json(EXAMPLE)))
    code, out = run_in_process(
        "--seed",
        EXAMPLE_SEED.hex(),
        "--commitment",
        EXAMPLE_COMMITMENT,
        "--sales",
        str(sales_file),
        "--sales-digest",
        EMPTY_75_DIGEST,
        "--balls",
        "30,2",
        capsys=capsys,
    )
    assert code == 1
    assert out.strip() == f"the sales digest differs: the sales give {EXAMPLE_DIGEST}, not {EMPTY_75_DIGEST}"


def test_the_verifier_says_what_input_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sales_file = tmp_path / "sales.json"
    twice = [{"serial": "A"}, {"serial": "A"}]
    sales_file.write_text(
        json.dumps({"format": "bingo-sales/v1", "game": "G", "max_ball": 90, "cards": twice})
    )
    code = verify_draw.main(
        [
            "--seed",
            "00" * 32,
            "--commitment",
            ZERO_SEED_COMMITMENT,
            "--sales",
            str(sales_file),
            "--balls",
            "1",
        ]
    )
    assert code == 2
    assert capsys.readouterr().err.strip() == "cannot read the input: serial A is sold twice"
    by_digest = ["--sales-digest", EMPTY_75_DIGEST, "--max-ball", "75", "--balls", "1", "--json"]
    code = verify_draw.main(["--seed", "00" * 31, "--commitment", ZERO_SEED_COMMITMENT, *by_digest])
    assert code == 2
    assert json.loads(capsys.readouterr().out)["reason"] == "unreadable"
    with pytest.raises(SystemExit) as caught:  # neither sales nor a digest with its range
        verify_draw.main(["--seed", "00" * 32, "--commitment", ZERO_SEED_COMMITMENT, "--balls", "1"])
    assert caught.value.code == 2


def test_the_script_runs_alone_without_django(tmp_path: Path) -> None:
    """A clean environment (no DJANGO_SETTINGS_MODULE, no PYTHONPATH), another working folder: the script
    verifies from a balls file, and Python's import log shows no Django module was loaded."""
    balls_file = tmp_path / "balls.txt"
    balls_file.write_text("\n".join(map(str, EMPTY_75_BALLS[:40])) + "\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    args = [sys.executable, "-X", "importtime", str(SCRIPT), "--seed", "00" * 32, "--commitment",
            ZERO_SEED_COMMITMENT, "--sales-digest", EMPTY_75_DIGEST, "--max-ball", "75"]  # fmt: skip
    done = subprocess.run(
        [*args, "--balls-file", str(balls_file)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("verified: the seed matches its commitment and all 40 balls drawn")
    imported = [
        line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")
    ]
    assert "bingo.verifiable" in imported
    assert "cryptography" in imported
    assert not [name for name in imported if name.split(".")[0] in {"django", "rest_framework", "config"}]
    # A ball changed (read from standard input): exit status 1, the place named.
    wrong = " ".join(map(str, [EMPTY_75_BALLS[0], EMPTY_75_BALLS[2]]))
    done = subprocess.run(
        [*args, "--balls-file", "-"],
        input=wrong,
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert (
        done.stdout.strip()
        == f"ball 2 differs: {EMPTY_75_BALLS[2]} was drawn, the seed gives {EMPTY_75_BALLS[1]}"
    )


def test_the_three_files_copied_elsewhere_verify_alone(tmp_path: Path) -> None:
    """What a third party takes: the script, bingo/__init__.py and bingo/verifiable.py, in their layout and
    nothing else of the project."""
    copy = tmp_path / "copy"
    for name in ("scripts/verify_draw.py", "bingo/__init__.py", "bingo/verifiable.py"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes((ROOT / name).read_bytes())
    sales_file = tmp_path / "sales.json"
    sales_file.write_text(json.dumps(v.sales_to_json(EXAMPLE)))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    done = subprocess.run(
        [
            sys.executable, str(copy / "scripts" / "verify_draw.py"), "--seed", EXAMPLE_SEED.hex(),
            "--commitment", EXAMPLE_COMMITMENT, "--sales", str(sales_file), "--sales-digest", EXAMPLE_DIGEST,
            "--balls", ",".join(map(str, EXAMPLE_BALLS)), "--json",
        ],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {"verified": True, "reason": "verified", "count": 90}


def test_the_verifier_refuses_a_seed_that_is_not_the_one_committed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    replaced = hashlib.sha256(b"another seed").digest()
    drawn = ",".join(map(str, v.balls(replaced, EXAMPLE_DIGEST, 90, 30)))
    code, out = run_in_process(
        "--seed", replaced.hex(), "--commitment", EXAMPLE_COMMITMENT, "--sales-digest", EXAMPLE_DIGEST,
        "--max-ball", "90", "--balls", drawn, capsys=capsys,
    )  # fmt: skip
    assert code == 1
    assert out.strip() == (
        f"the seed does not match the commitment: its SHA-256 is {v.commit(replaced)}, "
        f"the commitment published was {EXAMPLE_COMMITMENT}"
    )


# -- the golden ball ----------------------------------------------------------------------------------------


def documented_golden(seed: bytes, digest: str, max_ball: int) -> int:
    """The golden ball as the module's docstring specifies it, with the standard library's HKDF."""
    key = hkdf_sha256(seed, bytes.fromhex(digest), f"bingo-draw/v1 golden 1-{max_ball}".encode(), 32)
    stream = Cipher(algorithms.ChaCha20(key, bytes(16)), mode=None).encryptor().update(bytes(64))
    for i in range(0, len(stream), 4):
        word = int.from_bytes(stream[i : i + 4], "little")
        if word < 2**32 - (2**32 % max_ball):
            return 1 + word % max_ball
    raise AssertionError("16 words rejected in a row")


def test_the_golden_ball_known_answers() -> None:
    assert v.golden_ball(EXAMPLE_SEED, EXAMPLE_DIGEST, 90) == documented_golden(
        EXAMPLE_SEED, EXAMPLE_DIGEST, 90
    )
    assert v.golden_ball(bytes(32), EMPTY_75_DIGEST, 75) == documented_golden(bytes(32), EMPTY_75_DIGEST, 75)
    # Its own key: not the balls' key, so the golden ball tells nothing of the order.
    assert v.draw_key(EXAMPLE_SEED, EXAMPLE_DIGEST, 90, "golden") != v.draw_key(
        EXAMPLE_SEED, EXAMPLE_DIGEST, 90
    )
    with pytest.raises(ValueError, match="balls or golden"):
        v.draw_key(EXAMPLE_SEED, EXAMPLE_DIGEST, 90, "bonus")


@settings(max_examples=40, deadline=None)
@given(seeds, sales_of())
def test_the_golden_ball_follows_the_documented_algorithm_and_is_verified(
    seed: bytes, sales: v.Sales
) -> None:
    digest = v.sales_digest(sales)
    golden = v.golden_ball(seed, digest, sales.max_ball)
    assert 1 <= golden <= sales.max_ball
    assert golden == documented_golden(seed, digest, sales.max_ball)
    drawn = v.balls(seed, digest, sales.max_ball, 20)
    found = v.verify(seed, v.commit(seed), digest, drawn, sales.max_ball, golden=golden)
    assert found.verified and found.facts == {"count": 20, "golden": golden}
    assert str(found).endswith(f"and so does the golden ball {golden}")
    other = golden % sales.max_ball + 1
    refused = v.verify(seed, v.commit(seed), digest, drawn, sales.max_ball, golden=other)
    assert (refused.reason, dict(refused.facts)) == ("golden_differs", {"drawn": other, "expected": golden})
    assert str(refused) == f"the golden ball differs: {other} was drawn, the seed gives {golden}"


@pytest.mark.parametrize("max_ball", v.MAX_BALLS)
def test_the_golden_ball_is_uniform_over_100000_draws(max_ball: int) -> None:
    draws = 100_000
    digest = v.sales_digest(v.Sales("CHI-GOLD", max_ball, ()))
    counts = [0] * max_ball
    for i in range(draws):
        counts[v.golden_ball(fixed_seed(i), digest, max_ball) - 1] += 1
    p = chi_square_sf(pearson(counts, draws / max_ball), max_ball - 1)
    assert p > CHI_SQUARE_P_MIN, (p, counts)


def test_the_verifier_checks_the_golden_ball(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    digest = v.sales_digest(EXAMPLE)
    golden = v.golden_ball(EXAMPLE_SEED, digest, 90)
    common = ["--seed", EXAMPLE_SEED.hex(), "--commitment", EXAMPLE_COMMITMENT, "--sales-digest", digest]
    balls = ",".join(map(str, EXAMPLE_BALLS[:30]))
    args = [*common, "--max-ball", "90", "--balls", balls, "--json"]
    code, out = run_in_process(*args, "--golden", str(golden), capsys=capsys)
    assert code == 0
    assert json.loads(out) == {"verified": True, "reason": "verified", "count": 30, "golden": golden}
    wrong = golden % 90 + 1
    code, out = run_in_process(*args, "--golden", str(wrong), capsys=capsys)
    assert code == 1
    assert json.loads(out) == {
        "verified": False,
        "reason": "golden_differs",
        "drawn": wrong,
        "expected": golden,
    }
