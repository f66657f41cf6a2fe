"""The ticket limits' pure core (halls.cashier.ticketrules): at most the maximum is issued, above the cage
figure only the cage redeems, the venue's own figure wins over the default, and a pair is refused exactly
when it could not be a venue's limits."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from halls.cashier.ticketrules import Problem, TicketLimits, problem, resolve

amounts = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("99999.99"), places=2)
figures = st.decimals(min_value=Decimal("-10.00"), max_value=Decimal("99999.99"), places=2)


@given(maximum=amounts, cage=amounts, amount=amounts)
def test_issue_and_device_redemption_follow_the_figures_with_equality_allowed(
    maximum: Decimal, cage: Decimal, amount: Decimal
) -> None:
    limits = TicketLimits(maximum=maximum, cage_above=cage)
    assert limits.may_issue(amount) == (amount <= maximum)
    assert limits.cage_only(amount) == (amount > cage)
    assert limits.may_redeem_at_device(amount) != limits.cage_only(amount)
    assert limits.may_issue(maximum) and limits.may_redeem_at_device(cage)


@given(own_max=st.none() | amounts, own_cage=st.none() | amounts, default_max=amounts, default_cage=amounts)
def test_the_venues_own_figure_wins_and_a_blank_follows_the_default(
    own_max: Decimal | None, own_cage: Decimal | None, default_max: Decimal, default_cage: Decimal
) -> None:
    limits = resolve(own_max, own_cage, default_max, default_cage)
    assert limits.maximum == (default_max if own_max is None else own_max)
    assert limits.cage_above == (default_cage if own_cage is None else own_cage)


@given(maximum=figures, cage=figures)
def test_a_pair_is_refused_exactly_when_it_cannot_be_a_venues_limits(maximum: Decimal, cage: Decimal) -> None:
    found = problem(maximum, cage)
    if maximum <= 0 or cage <= 0:
        assert found is Problem.NOT_POSITIVE
    elif cage > maximum:
        assert found is Problem.CAGE_ABOVE_MAXIMUM
    else:
        assert found is None
        # a pair accepted leaves some ticket that a terminal may take
        assert TicketLimits(maximum, cage).may_redeem_at_device(Decimal("0.01"))
