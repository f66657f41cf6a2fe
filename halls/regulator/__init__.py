"""The regulator's node (issue 29): the same codebase run with HALL_ROLE=regulator, for one gaming authority.

It registers the installations of its region with their public keys (`Installation`), receives their feed
(halls.feed: signed, numbered, schema-checked messages), keeps every message it accepted once and in order,
append-only (`FeedMessage`), records every message it refused and why (`FeedRefusal`), raises alarms
(`Alarm`: a silent installation, a sequence gap, a bad signature, a game without its commitment, a prize above
its pool) and serves the authority's portal. An installation only ever writes its own messages here; it
reads nothing.
"""
