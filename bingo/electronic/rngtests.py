"""RNG self-tests of the verification system (EB-05.e, AB-03, R-07), run before each session on the output of
the generator the draw uses (the operating system's CSPRNG through `secrets`).

What is implemented, after NIST SP 800-22 rev. 1a ("A Statistical Test Suite for Random and Pseudorandom
Number Generators for Cryptographic Applications"):
- `monobit`: §2.1 Frequency (Monobit) Test. S = sum of ±1 over n bits, s_obs = |S| / sqrt(n),
  p = erfc(s_obs / sqrt 2).
- `block_frequency`: §2.2 Frequency Test within a Block. N blocks of M bits, chi² = 4M · sum (pi_i - 1/2)²,
  p = igamc(N/2, chi²/2).
- `runs`: §2.3 Runs Test. With pi the proportion of ones (pre-test |pi - 1/2| < 2/sqrt(n)), V = the number
  of runs, p = erfc(|V - 2n·pi(1-pi)| / (2·sqrt(2n)·pi(1-pi))).
And on whole simulated draws of the speciality's number range (the draw's own use of the generator):
- `draw_numbers`: a chi-square of how often each number falls among the first m balls of D draws. A draw is
  sampling without replacement, so the counts are not multinomial: their covariance is
  D·p(1-p)·k/(k-1)·(I - J/k) (p = m/k), and sum (c - Dp)² / (D·p(1-p)) · (k-1)/k is chi² with k-1 degrees.
- `draw_positions`: a chi-square of the number x ordinal table of D full draws (every number as likely at
  every ordinal). Both margins are fixed at D; a uniform permutation matrix has covariance (I - J/k)⊗(I - J/k)
  / (k-1), so Pearson's X² · (k-1)/k is chi² with (k-1)² degrees.
- `permutation`: a full simulated draw of the range holds every number exactly once (statistic: the numbers
  missing, repeated or out of range; threshold 0).

Every test answers a `RngResult`: its statistic, the threshold the statistic is held against (the critical
value at `alpha`), the p-value and ok (p >= alpha). NIST's own level is 0.01; a verification gates a session,
so the default here is 0.0001: a sound generator fails a run of these tests about once in 1,700, while a
biased one (a few percent off) fails by orders of magnitude.

Pure: no Django. The sources are arguments (bytes, a `choice` function), so a test can feed a biased one.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

ALPHA = 0.0001
BITS = 1 << 20  # bits of generator output the bit tests read (NIST recommends n >= 10^6 for its level)
BLOCK_BITS = (
    128  # M of the block frequency test (NIST: M >= 20, M > 0.01 n, N < 100 ... M = 128 is its example)
)
FIRST_BALLS_DIVISOR = 3  # draw_numbers counts the first third of each draw's balls
DRAWS_PER_NUMBER = 6  # draw_positions: 6k full draws, an expected 6 per cell of the k x k table

Choice = Callable[[Sequence[int]], int]


@dataclass(frozen=True)
class RngResult:
    """One test's answer: `ok` iff `p_value >= alpha`, that is iff `statistic` does not exceed `threshold`
    (every statistic here grows with the departure from randomness)."""

    test: str
    statistic: float
    threshold: float
    p_value: float
    alpha: float
    ok: bool
    detail: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


# --- special functions (Numerical Recipes §6.1-6.2; NIST's igamc) -----------------------------------------


def igamc(a: float, x: float) -> float:
    """The regularised upper incomplete gamma function Q(a, x) = Γ(a, x) / Γ(a), as NIST's p-values use."""
    if x <= 0:
        return 1.0
    if x < a + 1:
        return max(0.0, 1.0 - _gamma_series(a, x))
    return _gamma_fraction(a, x)


def _gamma_series(a: float, x: float) -> float:
    """P(a, x) by its series (converges fast for x < a + 1)."""
    term = total = 1.0 / a
    n = a
    for _ in range(100_000):
        n += 1
        term *= x / n
        total += term
        if abs(term) < abs(total) * 1e-15:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_fraction(a: float, x: float) -> float:
    """Q(a, x) by its continued fraction (modified Lentz; for x >= a + 1)."""
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 100_000):
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
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def _critical(p_of: Callable[[float], float], alpha: float, high: float) -> float:
    """The statistic at which the p-value (decreasing in it) falls to `alpha`, by bisection."""
    low = 0.0
    while p_of(high) > alpha:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        if p_of(middle) > alpha:
            low = middle
        else:
            high = middle
    return high


def _chi_square(test: str, statistic: float, degrees: int, alpha: float, detail: str) -> RngResult:
    def p_of(value: float) -> float:
        return igamc(degrees / 2, value / 2)

    p = p_of(statistic)
    threshold = _critical(p_of, alpha, float(degrees) * 2)
    return RngResult(test, statistic, threshold, p, alpha, p >= alpha, detail)


# --- bit tests (SP 800-22 §2.1-2.3) -----------------------------------------------------------------------


def _ones(data: bytes) -> int:
    return int.from_bytes(data, "big").bit_count()


def monobit(data: bytes, alpha: float = ALPHA) -> RngResult:
    """§2.1: are ones and zeros about as many?"""
    n = len(data) * 8
    total = 2 * _ones(data) - n
    s_obs = abs(total) / math.sqrt(n)

    def p_of(value: float) -> float:
        return math.erfc(value / math.sqrt(2))

    p = p_of(s_obs)
    return RngResult(
        "monobit", s_obs, _critical(p_of, alpha, 4.0), p, alpha, p >= alpha, f"n={n} bits, S={total}"
    )


def block_frequency(data: bytes, block_bits: int = BLOCK_BITS, alpha: float = ALPHA) -> RngResult:
    """§2.2: is each block of M bits about half ones? (M a multiple of 8 here: blocks are whole bytes.)"""
    assert block_bits % 8 == 0, "blocks of whole bytes"
    size = block_bits // 8
    blocks = len(data) // size
    chi = (
        4
        * block_bits
        * sum((_ones(data[i * size : (i + 1) * size]) / block_bits - 0.5) ** 2 for i in range(blocks))
    )
    return _chi_square("block_frequency", chi, blocks, alpha, f"N={blocks} blocks of M={block_bits} bits")


def runs(data: bytes, alpha: float = ALPHA) -> RngResult:
    """§2.3: are the runs of equal bits as many as a random sequence has? (Oscillation too fast or slow.)"""
    n = len(data) * 8
    value = int.from_bytes(data, "big")
    pi = value.bit_count() / n
    if abs(pi - 0.5) >= 2 / math.sqrt(n):  # the frequency pre-test: the runs test is not run, and fails
        return RngResult("runs", pi, 0.5 + 2 / math.sqrt(n), 0.0, alpha, False, "frequency pre-test failed")
    # A run ends wherever bit i differs from bit i+1: the changes are the ones of value XOR (value >> 1),
    # over the n-1 neighbouring pairs (the top pair compares bit n-1 with a 0 shifted in: masked off).
    changes = ((value ^ (value >> 1)) & ((1 << (n - 1)) - 1)).bit_count()
    v_obs = changes + 1
    spread = 2 * math.sqrt(2 * n) * pi * (1 - pi)
    statistic = abs(v_obs - 2 * n * pi * (1 - pi)) / spread

    def p_of(value: float) -> float:
        return math.erfc(value)

    p = p_of(statistic)
    return RngResult(
        "runs", statistic, _critical(p_of, alpha, 3.0), p, alpha, p >= alpha, f"n={n} bits, V={v_obs} runs"
    )


# --- draw tests ---------------------------------------------------------------------------------------------


def simulate_draw(numbers: Sequence[int], balls: int, choice: Choice = secrets.choice) -> list[int]:
    """`balls` balls drawn as the draw draws them: each one `choice` of the numbers still in the drum."""
    drum = list(numbers)
    drawn = []
    for _ in range(balls):
        ball = choice(drum)
        if ball in drum:  # a broken generator may answer a number not in the drum: kept, to be caught
            drum.remove(ball)
        drawn.append(ball)
    return drawn


def permutation(numbers: Sequence[int], choice: Choice = secrets.choice) -> RngResult:
    """A full draw of the range is a permutation of it: every number once, none outside."""
    drawn = simulate_draw(numbers, len(numbers), choice)
    wanted = set(numbers)
    seen: set[int] = set()
    repeated = [b for b in drawn if b in seen or seen.add(b)]  # type: ignore[func-returns-value]
    outside = sorted(set(drawn) - wanted)
    missing = sorted(wanted - set(drawn))
    faults = len(repeated) + len(outside) + len(missing)
    detail = f"{len(drawn)} balls of {len(wanted)} numbers"
    if faults:
        detail += f"; repeated {sorted(set(repeated))}, outside {outside}, missing {missing}"
    ok = faults == 0
    return RngResult("permutation", float(faults), 0.0, 1.0 if ok else 0.0, 0.0, ok, detail)


def draw_numbers(
    numbers: Sequence[int], draws: int, choice: Choice = secrets.choice, alpha: float = ALPHA
) -> RngResult:
    """Each number as often among the first third of the balls of `draws` simulated draws (see the module)."""
    k = len(numbers)
    m = max(1, k // FIRST_BALLS_DIVISOR)
    counts = dict.fromkeys(numbers, 0)
    for _ in range(draws):
        for ball in simulate_draw(numbers, m, choice):
            counts[ball] += 1
    p = m / k
    expected = draws * p
    chi = sum((c - expected) ** 2 for c in counts.values()) / (draws * p * (1 - p)) * (k - 1) / k
    return _chi_square(
        "draw_numbers", chi, k - 1, alpha, f"{draws} draws, the first {m} balls of {k} numbers counted"
    )


def draw_positions(
    numbers: Sequence[int], draws: int, choice: Choice = secrets.choice, alpha: float = ALPHA
) -> RngResult:
    """Each number as often at each ordinal over `draws` full simulated draws (see the module)."""
    k = len(numbers)
    index = {number: i for i, number in enumerate(numbers)}
    table = [0] * (k * k)
    for _ in range(draws):
        for ordinal, ball in enumerate(simulate_draw(numbers, k, choice)):
            table[ordinal * k + index[ball]] += 1
    expected = draws / k
    pearson = sum((c - expected) ** 2 for c in table) / expected
    return _chi_square(
        "draw_positions",
        pearson * (k - 1) / k,
        (k - 1) ** 2,
        alpha,
        f"{draws} full draws of {k} numbers, number x ordinal",
    )


def run_all(
    max_number: int,
    *,
    random_bytes: Callable[[int], bytes] = secrets.token_bytes,
    choice: Choice = secrets.choice,
    bits: int = BITS,
    alpha: float = ALPHA,
) -> list[RngResult]:
    """Every test above on one generator: `bits` of its bytes, and draws of the range 1..max_number."""
    data = random_bytes(bits // 8)
    numbers = range(1, max_number + 1)
    k = len(numbers)
    return [
        monobit(data, alpha),
        block_frequency(data, alpha=alpha),
        runs(data, alpha),
        draw_numbers(numbers, DRAWS_PER_NUMBER * k, choice, alpha),
        draw_positions(numbers, DRAWS_PER_NUMBER * k, choice, alpha),
        permutation(numbers, choice),
    ]
