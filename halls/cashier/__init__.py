"""The cashier: tills and shifts, player cards, tickets, prize payouts, on one double-entry money ledger."""
