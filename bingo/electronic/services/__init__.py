"""The services of electronic bingo: every write, in a transaction, audited, its events sent on commit."""
