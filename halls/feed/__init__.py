"""The feed to the gaming authority (issue 29): what an installation (a venue, or a network's central) tells
its regulator's node in real time, and how the node checks it.

- `envelope` (pure): a message's envelope (installation, sequence, kind, time, payload), its canonical bytes
  and its Ed25519 signature with the installation's key (the anchors' key, halls.services.anchor_key).
- `kinds` (pure): the one list of message kinds (FeedKind).
- `schema` (pure): the versioned JSON Schemas in ``schemas/v1/`` (the envelope's and one per kind),
  validated on both ends: by the installation before a message is written, by the node when it arrives.

The node's side (the `regulator` role: registry, acceptance, storage, alarms, portal) is halls.regulator.
"""
