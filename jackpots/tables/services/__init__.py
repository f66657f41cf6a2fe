"""Casino-table services: tables and their pool, hands, bets, cards, settlement (spec §6).

- tables: create_table, join_pool, leave_pool, set_table_state, set_table_minimum
- hands: open_hand, register_bets, register_cards, settle_hand, void_hand
- readmodels: table_view, hand_view (what the API and the console show)
- locks: lock_table, lock_hand, lock_hands (halls.locks has the order)
- proposal_kinds: the four-eyes kinds (halls.foureyes) of a table joining or leaving a pool, a carrusel
  formed: the doors propose, and the change applies when a second operator approves

Every write runs in one transaction (its locks through locks.py and jackpots.services.locks),
appends an audit entry and emits its event on the table's stream ``table.<id>`` on commit.
"""

from __future__ import annotations


def register_hooks() -> None:
    """Plug the tables into the engine: pool parameters cannot change while a member table has a hand open."""
    from jackpots.services.guards import register_open_play_guard
    from jackpots.tables.services.hands import open_hand_guard

    register_open_play_guard(open_hand_guard)

    from jackpots.services.sources import by_pk, register_source_resolver
    from jackpots.tables.models import CasinoTable

    tables = CasinoTable.objects.all()
    register_source_resolver(
        "table", by_pk(lambda pk: tables.filter(pk=pk).values_list("venue_id", flat=True).first())
    )

    from jackpots.services.sources import MemberDoor, register_member_door
    from jackpots.tables.services import tables as table_services

    register_member_door(
        "table", MemberDoor(join=table_services.join_pool_member, leave=table_services.leave_pool_member)
    )

    # Four eyes: a table joins or leaves a pool only through an approved proposal.
    from jackpots.tables.services import proposal_kinds

    proposal_kinds.register()
