/*
 * A member room's network prizes on its screen (bingo.network.interconnected): each one's meter as the central last sent
 * it, labelled by its kind — an interconnected prize ("Premio interconexionado") with the max ball common
 * to every hall, or automatic bingo's Gran Línea / Gran Bingo with the max ball of the speciality's own
 * Gran prize if its table sets one (else the first in the whole network wins). State: the snapshot's
 * `prizes`; events: `network.prize_meter` on the room's stream carries one prize whole.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var prizes = {};   // code -> {prize, kind, name, amount, max_ball}

  function tag(kind) {
    if (kind === "gran_linea") { return gettext("Gran Línea"); }
    if (kind === "gran_bingo") { return gettext("Gran Bingo"); }
    return gettext("Interconnected prize");
  }

  function ball(shown) {
    if (shown.kind === "gran_linea") {
      return shown.max_ball
        ? interpolate(gettext("Line up to ball %(ball)s"), {ball: shown.max_ball}, true)
        : gettext("The first Line in the whole network");
    }
    if (shown.kind === "gran_bingo") {
      return shown.max_ball
        ? interpolate(gettext("Bingo up to ball %(ball)s"), {ball: shown.max_ball}, true)
        : gettext("The first Bingo in the whole network");
    }
    return interpolate(gettext("Bingo up to ball %(ball)s"), {ball: shown.max_ball}, true);
  }

  function div(cls, text) {
    var node = doc.createElement("div");
    node.className = cls;
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function render(screen) {
    var codes = Object.keys(prizes).sort();
    var block = doc.getElementById("ib-prize");
    while (block.firstChild) { block.removeChild(block.firstChild); }
    if (!codes.length) { block.hidden = true; return; }
    codes.forEach(function (code) {
      var shown = prizes[code];
      var item = div("ib-prize__item");
      item.setAttribute("data-prize", shown.prize);
      item.setAttribute("data-kind", shown.kind || "interconnected");
      item.appendChild(div("ib-prize__tag", tag(shown.kind)));
      item.appendChild(div("ib-prize__amount", screen.money(shown.amount)));
      item.appendChild(div("ib-prize__ball", ball(shown)));
      block.appendChild(item);
    });
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
