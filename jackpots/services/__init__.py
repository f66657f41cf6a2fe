"""The pool engine's services: every write in one transaction, its locks through locks.py (in the order of
halls.locks), audit rows via halls.services.audit and events on commit via halls.events (``pool.<id>``).

- pools: create_pool, add_member, remove_member, change_parameters, correct_meter
- contributions: contribute, contribute_many (the hot path: append-only inserts)
- folding: fold (fold the unfolded contributions into the level rows; mystery hits)
- awards: award_hand (table hands, engine.settle_hand), award_level (machines, bingo programs)
- readmodels: meters (pool_meter, changed_pools_since), screens (what a hall screen shows of a pool)
- screen_events: hit announcements and the meter publisher (the hall screens' pool events)
- reports: balance (the balancing report), ledger (pool recall)
- seals: seal, verify (hash-chained seals over the ledger)
- guards: register_open_play_guard (parameters change only while nothing is in play)
- proposal_kinds: the four-eyes kinds (halls.foureyes) of a level's parameters and a pool's members: the
  doors propose, and the change applies when a second operator approves
"""
