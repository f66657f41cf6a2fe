"""Hooks that let the apps above halls plug in without halls importing them (DESIGN §2): screen sections,
session-close guards and listeners, between-games guards (a venue's money-deciding settings change only
with no game in play), tamper-evident chains.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from halls.chains import Anchor, ChainHead, ChainReport
from halls.models import GameSession, Room, Venue

# verifier(venue_ids or None for all, latest anchors by (kind, id)) -> one report per chain it verified.
ChainVerifier = Callable[[list[int] | None, Mapping[tuple[str, int], Anchor]], list[ChainReport]]


@dataclass(frozen=True)
class ScreenSection:
    name: str
    snapshot: Callable[[Room], dict[str, Any]]
    template: str
    script: str


_sections: dict[str, ScreenSection] = {}
_close_guards: list[Callable[[GameSession], str | None]] = []
_closed_listeners: list[Callable[[GameSession, Any], None]] = []
_between_games_guards: list[Callable[[Venue], str | None]] = []
_chain_heads: list[Callable[[], list[ChainHead]]] = []
_chain_verifiers: list[ChainVerifier] = []
_chain_links: dict[str, Callable[[int, int], str | None]] = {}


def register_screen_section(section: ScreenSection) -> None:
    """What a hall screen shows for a room (bingo registers its game, jackpots its pools)."""
    _sections[section.name] = section


def screen_sections() -> list[ScreenSection]:
    return list(_sections.values())


def register_session_close_guard(guard: Callable[[GameSession], str | None]) -> None:
    """``guard`` returns why the session cannot close yet, or None."""
    if guard not in _close_guards:
        _close_guards.append(guard)


def session_close_problems(session: GameSession) -> list[str]:
    return [problem for guard in _close_guards if (problem := guard(session))]


def register_session_closed(listener: Callable[[GameSession, Any], None]) -> None:
    """``listener(session, actor)`` runs inside the transaction that closes the session (bingo's prize
    programs learn which game was the session's last)."""
    if listener not in _closed_listeners:
        _closed_listeners.append(listener)


def session_closed(session: GameSession, actor: Any) -> None:
    for listener in _closed_listeners:
        listener(session, actor)


def register_between_games_guard(guard: Callable[[Venue], str | None]) -> None:
    """``guard`` returns why the venue is not between games (a game on sale, drawing...), or None."""
    if guard not in _between_games_guards:
        _between_games_guards.append(guard)


def between_games_problems(venue: Venue) -> list[str]:
    return [problem for guard in _between_games_guards if (problem := guard(venue))]


def register_chain(heads: Callable[[], list[ChainHead]], verifier: ChainVerifier) -> None:
    """A kind of tamper-evident chain: ``heads()`` lists every chain's head (for the anchors),
    ``verifier`` checks the chains of some venues inside the caller's snapshot (jackpots registers every
    pool's chain of ledger seals)."""
    if heads not in _chain_heads:
        _chain_heads.append(heads)
    if verifier not in _chain_verifiers:
        _chain_verifiers.append(verifier)


def chain_heads() -> list[ChainHead]:
    return [head for source in _chain_heads for head in source()]


def chain_verifiers() -> list[ChainVerifier]:
    return list(_chain_verifiers)


def register_chain_links(kind: str, link: Callable[[int, int], str | None]) -> None:
    """``link(chain id, seq)``: the hash of that chain's link at position ``seq`` (from 1), or None (for the
    export of chain heads: whether a chain that grew still reaches its anchor)."""
    _chain_links[kind] = link


def chain_link(kind: str, chain_id: int, seq: int) -> str | None:
    link = _chain_links.get(kind)
    return None if link is None else link(chain_id, seq)
