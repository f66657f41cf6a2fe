"""Per-jurisdiction rules for linking machines to a progressive pool. Pure: no Django.

The link rule: must every machine of a link group share its type (B or C) and its denomination?

The regulations in the spec's seeds define the machine types and their modalities (spec §7, MQ-03/MQ-04:
individual, two-player, interconnected, multi-position) but give no rule on which machines an
interconnection may join, nor on machine-side progressive percentages (spec §7, "Interpretation"). A linked
progressive grows by a percentage of each bet, so machines of different denominations or types would feed
and win one prize on unequal terms; the industry's practice, and what an authorisation usually states, is
one type and one denomination per link. So the rule is on everywhere by default. A group may be created
with the rule off (`create_link_group(same_type_and_denomination=False)`) where the venue's authorisation
allows mixing; that choice is audited with the group.
"""

from __future__ import annotations

from typing import Final

# Jurisdiction code (halls.models.Jurisdiction) -> linked machines must share type and denomination.
SAME_TYPE_AND_DENOMINATION: Final[dict[str, bool]] = {
    "ML": True,  # Melilla 2014: no rule in the seeds; the conservative default
    "AN96": True,  # Andalucía 1996: idem
    "AN10": True,  # Andalucía 2010: idem (the carrusel is modelled on type C links, MQ-07)
    "CT": True,  # Catalonia 2000: idem
    "EU": True,  # Euskadi 2010: idem
}

# A jurisdiction added later without an entry gets the conservative rule.
DEFAULT_SAME_TYPE_AND_DENOMINATION: Final = True


def link_requires_same_type_and_denomination(jurisdiction: str) -> bool:
    """The default of a new link group's rule in `jurisdiction`."""
    return SAME_TYPE_AND_DENOMINATION.get(jurisdiction, DEFAULT_SAME_TYPE_AND_DENOMINATION)


def link_mismatch(
    rule_applies: bool,
    joining: tuple[str, str],
    members: frozenset[tuple[str, str]],
) -> str | None:
    """Why a machine of (type, denomination) `joining` may not join a group whose active members have the
    (type, denomination) pairs `members`; None when it may. Denominations as normalised strings ("0.20")."""
    if not rule_applies or not members:
        return None
    machine_type, denomination = joining
    types = {t for t, _ in members}
    denominations = {d for _, d in members}
    if machine_type not in types:
        return f"the group's machines are type {', '.join(sorted(types))}, this one is type {machine_type}"
    if denomination not in denominations:
        return (
            f"the group's machines play {', '.join(sorted(denominations))} a credit, this one {denomination}"
        )
    return None
