/*
 * The interconnected prize on a member room's screen (bingo.network): its meter as the central last sent
 * it and the max ball common to every hall. State: the snapshot's `prizes`; events: `network.prize_meter`
 * on the room's stream carries one prize whole. Several prizes of the room take turns, one shown.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var prizes = {};   // code -> {prize, name, amount, max_ball}

  function render(screen) {
    var codes = Object.keys(prizes).sort();
    var block = doc.getElementById("ib-prize");
    if (!codes.length) { block.hidden = true; return; }
    var shown = prizes[codes[0]];
    doc.getElementById("ib-prize-amount").textContent = screen.money(shown.amount);
    doc.getElementById("ib-prize-ball").textContent = interpolate(
      gettext("Bingo up to ball %(ball)s"), {ball: shown.max_ball}, true);
    block.setAttribute("data-prize", shown.prize);
    block.hidden = false;
  }

  global.HallScreen.register("network", {
    snapshot: function (data, screen) {
      prizes = {};
      ((data || {}).prizes || []).forEach(function (p) { prizes[p.prize] = p; });
      render(screen);
    },
    event: function (event, screen) {
      if (event.type !== "network.prize_meter") { return; }
      prizes[event.data.prize] = event.data;
      render(screen);
    }
  });
})(window);
