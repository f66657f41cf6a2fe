"""Casino tables on the pool engine (spec §6): tables, hands, pool bets, cards, settlement, console."""
