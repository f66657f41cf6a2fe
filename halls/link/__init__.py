"""The link between a venue installation and the central: the same codebase in both roles.

What a venue owes the central (contributions to network prizes, results, claims) is written to its
**outbox** in the same transaction as the local fact (`services.outbox.enqueue`), numbered 1, 2, 3… in
the order of commit, sent in that order and retried until acknowledged. The central **accepts** each
message exactly once, in order (`services.inbox.accept`): (venue, sequence) already applied is a no-op
answered "duplicate"; a sequence past the next one expected is refused (``out_of_order``, with the one
expected) and nothing is written; the expected one runs its handler and is recorded in the same
transaction.

What the central decides (network draws, meters, decisions) is appended to numbered **streams**
(`services.streams.append`): one sequence per stream, kept for replay. A venue applies entries in order
(`services.streams.apply`), skips what it already applied, and on a gap catches up from the central's log.

Handlers are registered per message kind by the apps that own the facts (`registry`), so this package
never imports bingo or jackpots; the kinds are one list (`kinds.LinkKind`).
"""
