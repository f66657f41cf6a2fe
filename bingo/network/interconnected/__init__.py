"""Interconnected bingo (spec §5.1 IB-01…IB-04) over the network link (halls.link).

IB-01: an additional prize to the Bingo obtained at or before a max ball (by extraction order) common to
every hall joined to the system. Halls' games are not in lockstep, so the prize is played in ROUNDS.

At the central (HALL_ROLE "central"):
- `NetworkPrize`: a prize of a `halls.Network`: the percent of each member hall's game sales that funds it
  (and an optional percent to the hidden reserve that re-seeds it), the max ball, the member halls, a
  round's bounded wait. Its money is ONE network-scoped pool of the engine (jackpots): the contributions
  are the pool's ledger rows (source "venue:<id>/game:<id>", key per round and hall), the award is the
  engine's `award_level`, the reset to the seed is the engine's (reserve first, then an operator seed),
  so the meter, the balancing report and the award's record are the engine's.
- A round (`PrizeRound`) is opened by the operator: one game per member hall. Each hall's game in the
  prize's room joins the oldest open round it has no game in, at its close of sales; its contribution and
  then its result come through the hall's outbox. The round is decided when every hall expected at its
  opening has reported, or when its wait (`closes_at`) expires: then by the written rule
  "wait_expired": decided among the results received; a hall with none is recorded as missing; its late
  result is recorded (`RoundResult.late`) and never reopens the decision; its contribution stays in the
  pool. A decision is final.
- The decision (`decide`, pure): the winners are the Bingo(s) at the LOWEST extraction ordinal at or
  below the max ball across the halls; every card at that ordinal (in one hall or several) shares the
  pool's meter equally to the cent; what cannot be shared stays in the pool and is recorded
  (`PrizeRound.remainder`). No winner: the pool carries over.
- Every contribution is tagged with venue, operator, region and game (`RoundContribution`: the operator
  and region as they stood when it was counted). Regions (IB-02…IB-04, R-14): the prize's pool is a
  network pool, created only where the network's regions have their agreements
  (halls.services.regions.check_network_span, in the engine); each round is opened only under agreements
  valid then, and a round already open when one is revoked plays out under the one it opened with.
- The central appends to "network.<code>": a round opened, a round decided (every winning card's share,
  keyed by its `RoundShare` id), and the meter (at most once per HALL_NETWORK_METER_SECONDS per prize,
  and after every opening and decision; a beat task sends the meter a throttle held back).
- Refused (a DomainError: recorded as the message's answer, nothing counted): an unknown prize or round,
  a hall that is not a member, a contribution for a decided round or past its wait, a second
  contribution or result of a hall, a contribution that is not the prize's percent of the sales, a result
  of a hall with no game in the round, a result naming a card the game did not sell. A replayed message
  is the link's duplicate (counted once).

At a venue:
- `RoomMembership`: the room that plays the prize (one per venue and prize). traditional bingo's game
  listener (`bingo.traditional.hooks`: it never imports this package) writes the contribution at the close
  of sales and the result at the game's end, each to the outbox in the game's own transaction.
- The central's entries: `KnownRound` (which rounds are open), each winning card's share a cashier
  payable (kind accumulated, source "network.share:<central share id>", unique per venue), the meter on
  every member room's screen ("Premio interconexionado", amount and max ball).

Interpretations (the regulation is silent): the prize is the whole meter at the decision; one room per
venue plays a prize; the round's wait runs from its opening; a void game reports "no Bingo" and its
contribution stays in the pool (as the prize programs keep a voided game's funding); a contribution that
arrives after the round's wait is refused (the game can no longer count), so the hall's game is played
without the prize; a Bingo's co-winners at the hall's Bingo ball are the hall's cards at that ordinal.

Gran Línea / Gran Bingo of automatic bingo (AB-05, AB-08) are the same round mechanism over electronic
specialities (`NetworkPrize.kind` gran_linea / gran_bingo: no max ball, the first completion in the
network wins; `decide` unchanged). Venue side (bingo.network.interconnected.services.gran, plugged in through
bingo.electronic.network_hooks): `SpecialityMembership` joins a speciality's Gran prize to the network's;
its game joins a round at its close of sales (`EGameRound`; the Gran prize is in play only then),
contributes through the outbox, keeps its first Line / Bingo (ordinal, cards "E-<card id>") and reports it
at its end; the decision's shares are credited to the winning cards' player cards through the ledger
(pool funding -> the card, once per share: `GranCredit`), the terminal told; the meter goes to the
speciality's room stream (its terminals and screens). The venue never decides a Gran prize.
"""
