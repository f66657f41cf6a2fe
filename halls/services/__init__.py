"""Services of the halls app: every write, in a transaction, with its audit record."""
