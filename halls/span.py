"""Which region pairs a set of venues spans (pure: no Django).

A network prize spans two regions only under an agreement for that pair (spec §5 IB-02…IB-04, R-14). A
venue's own region with itself needs none; a venue not yet placed in a region (``None``) spans nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import combinations
from typing import Any, TypeVar

K = TypeVar("K")


def region_pairs(regions: Iterable[K | None], *, key: Callable[[K], Any] = lambda r: r) -> list[tuple[K, K]]:
    """Every pair of distinct regions among ``regions`` (``None`` left out), each pair ordered by ``key``,
    the pairs in order: the first pair is the one a refusal names."""
    distinct = sorted({r for r in regions if r is not None}, key=key)
    return list(combinations(distinct, 2))


def first_uncovered(
    regions: Iterable[K | None], covered: Callable[[K, K], bool], *, key: Callable[[K], Any] = lambda r: r
) -> tuple[K, K] | None:
    """The first pair of distinct regions for which ``covered`` is false, or None when every pair is."""
    for a, b in region_pairs(regions, key=key):
        if not covered(a, b):
            return a, b
    return None
