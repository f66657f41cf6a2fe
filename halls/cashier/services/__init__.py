"""The cashier's services: the ledger, shifts, player cards, tickets, payables and payouts, reports."""
