"""Services of traditional bingo: every write in one transaction, with its audit record and events."""
