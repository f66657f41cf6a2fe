"""Simultaneous bingo (SB-01, Melilla art. 157; open point OP-19): one network game played at once in every
member hall of a network, from one central draw.

Roles. The central (HALL_ROLE "central") owns the network game (`NetworkGame`); each member hall (a venue
installation) plays it through a local traditional game. They talk only through halls.link: what a hall
owes the central goes through its outbox in the transaction of the local fact; what the central decides goes
on the stream "network.<network code>" in the transaction of the decision. One database may play both
roles (halls.link.services.loopback: the tests, the embedded demo).

The game, step by step:

1. Set up (central, operator API). The operator creates the game for a `halls.Network`: card price, prizes,
   sales deadline, and a unique operation id (a repeated create answers the first). The prizes are
   percentages of the network's total sales: a network Line, a network Bingo, and a prize in every hall
   (the Hall Bingo) — a network game whose prize only ever fell in one hall was suspended in Madrid in 1996.
2. Allocation (central). One network series of cards is generated (bingo.cardgen, seed kept: the central's
   master cards) and cut into contiguous runs of whole strips, one run per member hall (`rules.allocate`).
   The series never repeats a face, the runs never overlap: no two cards of the network game have the same
   numbers. Each run is an entry of the network stream naming its hall by licence number. Halls of
   different regions share a game only where each pair of regions has its operator agreement and
   administration protocol (halls.services.regions.check_network_span; IB-02…IB-04, R-14).
3. Placing (hall). The hall's operator places the game in a room: the hall makes ONLY its own run of the
   network series from the seed and the central's re-derived strips (a local `CardSeries` "SB-<code>" of
   the network's size holding the run's cards: 300 halls × 10 strips would be 18,000 strips for each hall
   to make otherwise), checks the run's faces against the central's digest of the same run (the
   allocation carries it; `master_cards_differ` and nothing written if they differ), and creates a local
   `bingo.Game` drawn "by hand" (its balls come only from the central).
4. Sales (hall). When the central opens the sales, the hall's game goes on sale. The cashier sells and takes
   back cards of the hall's run only, through the traditional sale path (bingo.traditional.services.sales:
   the drawer,
   the ledger); each operation is reported to the central through the outbox in its transaction.
5. Close (network-wide, before the first ball). The central closes the sales at the deadline (beat) or on
   the operator's order: the reports it has counted ARE the game; the prizes are fixed from their total and
   streamed to every hall with the sale operations counted for each. A report arriving after the close is
   refused (recorded at the central, nothing counted). A hall stops selling at the deadline whether or not it
   has heard from the central. **Interpretation (the rule for a hall that could not confirm):** cards a hall
   sold whose sale the central's close does not count are not in the network game; the hall's game waits
   ("refunding unconfirmed sales") until its cashier refunds them through the normal return path, then
   plays with the cards counted (or is void if none is left). A network game in which no hall sold anything
   is voided at the central (the deadline beat right after its close, or the operator: `void_game`, API
   `.../void/`), audited in every member hall and told on the stream; nothing is drawn or paid.
   **Reconciliation:** as it starts to play (or is void), every hall reports its own count of the cards it has
   in play, their amount and the cards it refunded (sales the central never counted) through its outbox; the
   central records it once per hall against its own count for that hall (`Reconciliation`: both counts, the
   refunds, whether they agree, audited). A difference (e.g. a hall's return reported after the close: the
   central's count, on which the prizes were fixed, keeps the card) is recorded as such, never absorbed
   silently.
6. Draw (central). One CSPRNG draw (`secrets`), a thin Celery task per ball (acks_late, a step names its
   ordinal: a retry is a no-op); balls are rows unique per (game, ordinal) and (game, number), each streamed
   to the halls, which append it to their local game (bingo.traditional.services.draw.append_relayed_ball):
   the hall's
   screens, consoles and winner detection see it as any ball.
7. Claims (hall, then central). A claim is verified in the hall against the master card (recomputed from the
   series' seed) with the traditional rules (bingo.claims), recorded as a `bingo.Claim` and shown
   on the
   monitors; a valid one is reported through the outbox. The central checks it again against its own master
   card and balls, refuses a card never allocated to that hall or whose sale it did not count (a clear
   reason, nothing written), counts a replayed claim once, and keeps it; no ball is drawn while a claim
   waits. **Interpretation (claim window, OP-13/OP-19, TB-44, §2.7 S14):** in a traditional game, after a
   claim the staff ask "¿Alguna línea más? ... ¿Algún bingo más?" and the window ends when that question has
   been answered (a "reasonable time", not quantified); SB-01 makes the announcement steps of §2.7 in every
   hall. So the network's window closes by the rule, not only by time: once every hall with cards in play
   has answered "no more" for the last ball drawn (its caller's `no_more_claims`, through its outbox), the
   central decides at once; a hall that does not answer (its line down, its caller away) is waited for at
   most HALL_SIMULTANEOUS_CLAIM_SECONDS after the first claim, then the central decides: each prize
   still open goes to the claims at the lowest extraction order — network-wide for the network Line and
   Bingo, within the hall for each Hall Bingo — shared equally to the cent per winning card, the remainder
   recorded (TB-11, OP-10). A claim reaching the central after its prize was decided is refused.
8. Payment (hall). Each decision is streamed; the hall makes a payable for each of its winners' shares
   (halls.cashier, idempotent by source), as traditional prizes are. **Interpretation:** a network prize is
   paid by the winner's hall from its sales account; settling the network prizes between the halls'
   operators (each funded its share of sales) is a report of the central's figures, not a payment here.
9. End. **Interpretation:** the draw goes on after the network Bingo until every hall with cards in play has
   its Hall Bingo (a hall's first Bingo: a card winning the network Bingo in its hall takes both); then the
   central closes the game and every hall's game closes (no claim after, TB-12). **Interpretation (the last
   ball):** after ball 90 a prize still open keeps the game open for claims (halls run balls behind the
   central) until every hall with something left to win has answered "no more" for ball 90, or the claim
   window (HALL_SIMULTANEOUS_CLAIM_SECONDS from ball 90 or the last claim received) is over; a claim
   arriving meanwhile is decided as any other, then the game closes. **Interpretation (the
   room):** a hall's game closes as soon as its own Hall Bingo is decided (the network Bingo is decided then
   or before: nothing is left to win there, as a traditional game ends with its Bingo, S13c), freeing its
   room for its next game while the draw goes on for the other halls.
10. The hall's page (`/simultaneous/<hall game id>/`, any role in the hall; the caller console links to
   it): its allocated run, what it sold and took back, the central's count for it and the network's
   figures, the central's balls, its claims with their verdicts and the prizes the central decided.

Where the link is applied. The link applies a batch of stream entries in one transaction; a hall's game,
cashier and screens each take their locks and write their audit entries in that order (halls.locks), so the
stream's handler only keeps each entry for the halls it concerns (`HallEntry`) and a task applies them hall
by hall, one entry per transaction, in order (`services.venue.apply_entries`).
"""
