"""The RNG self-tests (bingo.electronic.rngtests, pure): they pass on the draw's generator and on a sound
seeded one, and fail on biased sources; their p-values are NIST's (checked at known points)."""

from __future__ import annotations

import math
import random
import secrets
from collections.abc import Sequence

from bingo.electronic import rngtests


def test_the_draw_generator_passes_every_test_on_both_ranges() -> None:
    for max_number in (90, 75):
        results = rngtests.run_all(max_number)
        assert [r.test for r in results] == [
            "monobit",
            "block_frequency",
            "runs",
            "draw_numbers",
            "draw_positions",
            "permutation",
        ]
        assert all(r.ok for r in results), results
        assert all(r.statistic <= r.threshold for r in results)


def test_a_sound_seeded_generator_passes() -> None:
    source = random.Random(20261126)
    results = rngtests.run_all(90, random_bytes=source.randbytes, choice=source.choice)
    assert all(r.ok for r in results), results


def test_bits_biased_towards_one_fail_the_frequency_tests() -> None:
    source = random.Random(1)
    # Each byte's low bit forced to 1 one time in ten: 51.25 % ones.
    data = bytes(source.getrandbits(8) | (source.random() < 0.1) for _ in range(rngtests.BITS // 8))
    assert not rngtests.monobit(data).ok
    assert not rngtests.runs(data).ok  # its frequency pre-test


def test_bits_that_alternate_too_regularly_fail_the_runs_test_only() -> None:
    data = bytes([0b01010101]) * (rngtests.BITS // 8)
    assert rngtests.monobit(data).ok  # exactly half ones
    failed = rngtests.runs(data)
    assert not failed.ok and failed.statistic > failed.threshold


def test_blocks_alternately_heavy_and_light_fail_the_block_test_only() -> None:
    heavy, light = bytes([0xFF]) * 10 + bytes(6), bytes([0xFF]) * 6 + bytes(10)  # 80 and 48 ones of 128
    data = (heavy + light) * (rngtests.BITS // 8 // 32)
    assert rngtests.monobit(data).ok
    assert not rngtests.block_frequency(data).ok


def test_a_draw_that_favours_low_numbers_fails_the_draw_tests() -> None:
    source = random.Random(3)

    def low(drum: Sequence[int]) -> int:  # 3 % of the time the lowest number left
        return min(drum) if source.random() < 0.03 else source.choice(drum)

    numbers = range(1, 91)
    assert not rngtests.draw_numbers(numbers, 540, low).ok
    assert not rngtests.draw_positions(numbers, 540, low).ok
    assert rngtests.permutation(numbers, low).ok  # still every ball once


def test_a_draw_that_repeats_a_ball_is_not_a_permutation() -> None:
    source = random.Random(5)

    def sticky(drum: Sequence[int]) -> int:  # one time in ten ball 7, drawn or not
        return 7 if source.random() < 0.1 else source.choice(drum)

    result = rngtests.permutation(range(1, 91), sticky)
    assert not result.ok and result.statistic > 0 and "repeated [7]" in result.detail


def test_the_p_values_match_nist_and_the_chi_square_tables() -> None:
    # SP 800-22 §2.1.8: the example's s_obs = 0.632455532 gives p = 0.527089.
    assert math.isclose(math.erfc(0.632455532 / math.sqrt(2)), 0.527089, abs_tol=1e-6)
    # §2.1.4 example input "1011010101": S = 2, p = 0.527089.
    ten = int("1011010101", 2)
    assert bin(ten).count("1") * 2 - 10 == 2
    # chi-square upper tails: chi2(1) at 3.841 = 0.05, chi2(10) at 23.209 = 0.01, chi2(100) at 135.807 = 0.01.
    assert math.isclose(rngtests.igamc(0.5, 3.841459 / 2), 0.05, rel_tol=1e-5)
    assert math.isclose(rngtests.igamc(5, 23.209251 / 2), 0.01, rel_tol=1e-5)
    assert math.isclose(rngtests.igamc(50, 135.806723 / 2), 0.01, rel_tol=1e-5)
    # §2.2.8's example: N = 10 blocks, chi2 = 7.2, p = 0.706438.
    assert math.isclose(rngtests.igamc(5, 7.2 / 2), 0.706438, abs_tol=1e-6)
    # §2.3.8: the example 1001101011 (n = 10, pi = 0.6, V = 7 runs) gives p = 0.147232.
    pi, n, v = 0.6, 10, 7
    p = math.erfc(abs(v - 2 * n * pi * (1 - pi)) / (2 * math.sqrt(2 * n) * pi * (1 - pi)))
    assert math.isclose(p, 0.147232, abs_tol=1e-6)


def test_each_result_is_recorded_as_json() -> None:
    result = rngtests.monobit(secrets.token_bytes(1024))
    assert set(result.as_json()) == {"test", "statistic", "threshold", "p_value", "alpha", "ok", "detail"}
