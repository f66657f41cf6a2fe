/*
 * The table-side meter page: one pool's meters, big and live, and its hits.
 *
 * The page is a hall screen (halls/screen.js + halls/stream.js) whose snapshot is the pool's
 * (/screens/<token>/pools/<id>/snapshot/, body data-snapshot-url) and whose stream is the screen's room
 * stream, which carries `pool.meters` and `pool.hit` of every pool of the venue: only this pool's are used.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var $ = function (id) { return doc.getElementById(id); };
  var Meters = global.JackpotMeters;
  var money = global.HallFormat.money;
  var POOL = Number(doc.body.getAttribute("data-pool"));
  var HIT_MS = 20000;
  var WIDTH = 1740;          // usable width of the stage for a figure, in px
  var DIGIT_EM = 0.62;       // about the width of a tabular digit of the display font, in em

  var book = Meters.book();
  var hit = null;            // the last hit: {settlement, winners: [...], ...}
  var hitTimer = null;

  function el(tag, className, text) {
    var node = doc.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }

  /* The biggest font size (px) at which the figure still fits the stage's width. */
  function fit(amount, currency, largest) {
    var chars = money(amount, currency).length;
    return Math.floor(Math.min(largest, WIDTH / (chars * DIGIT_EM)));
  }

  function render() {
    var pool = book.get(POOL);
    var section = $("pool-meter");
    var list = $("pm-levels");
    if (!pool) {
      section.setAttribute("data-levels", "0");
      clear(list);
      return;
    }
    $("pm-name").textContent = pool.name;
    section.setAttribute("data-levels", String(pool.levels.length));
    var existing = {};
    Array.prototype.slice.call(list.children).forEach(function (node) { existing[node.id] = node; });
    pool.levels.forEach(function (level, index) {
      var id = "pm-level-" + level.id;
      var node = existing[id];
      if (!node) {
        node = el("li", "pm-level");
        node.id = id;
        node.appendChild(el("div", "pm-level__name"));
        node.appendChild(el("div", "pm-level__amount"));
      }
      delete existing[id];
      node.setAttribute("data-level", String(level.id));
      node.firstChild.textContent = level.name;
      var largest = pool.levels.length === 1 ? 250 : (index === 0 ? 190 : 110);
      node.lastChild.style.setProperty("--pm-size", fit(level.amount, pool.currency, largest) + "px");
      Meters.roll(node.lastChild, level.amount, pool.currency);
      if (list.children[index] !== node) { list.insertBefore(node, list.children[index] || null); }
    });
    Object.keys(existing).forEach(function (id) { list.removeChild(existing[id]); });
  }

  function whereText(hit, winner) {
    var parts = [];
    if (winner && winner.category_label) { parts.push(winner.category_label); }
    if (hit.source) { parts.push(hit.source); }
    if (hit.source_kind === "machine") { return parts.join(" · "); }  // its hand is a game id
    if (winner && winner.seat) { parts.push(interpolate(gettext("Seat %(seat)s"), {seat: winner.seat}, true)); }
    if (hit.hand) { parts.push(interpolate(gettext("Hand %(hand)s"), {hand: hit.hand}, true)); }
    return parts.join(" · ");
  }

  /* The last hit, under the meters: one line. */
  function renderLast(last) {
    var node = $("pm-last");
    clear(node);
    if (!last) { return; }
    node.appendChild(doc.createTextNode(gettext("Last prize:") + " "));
    node.appendChild(el("strong", null, money(Meters.total(last.winners), last.currency)));
    var where = whereText(last, last.winners.length === 1 ? last.winners[0] : null);
    if (where) { node.appendChild(doc.createTextNode(" · " + where)); }
  }

  /* One event per paid winner: the winners of one hand (one settlement) are announced together. */
  function collect(data) {
    var winner = {seat: data.seat, amount: data.amount, category_label: data.category_label};
    if (hit && hit.settlement === data.settlement && data.settlement !== null && data.settlement !== undefined) {
      hit.winners.push(winner);
      hit.new_amount = data.new_amount;
    } else {
      hit = {
        settlement: data.settlement, level: data.level, level_name: data.level_name, currency: data.currency,
        source: data.source, source_kind: data.source_kind, hand: data.hand, new_amount: data.new_amount,
        winners: [winner]
      };
    }
    return hit;
  }

  function showHit(data) {
    global.clearTimeout(hitTimer);
    var winners = data.winners;
    $("pm-hit-title").textContent = interpolate(gettext("%(name)s!"), {name: data.level_name || gettext("Jackpot")}, true);
    $("pm-hit-amount").textContent = money(Meters.total(winners), data.currency);
    $("pm-hit-where").textContent = winners.length > 1
      ? whereText(data, null) + " · " + winners.map(function (w) {
        return interpolate(gettext("Seat %(seat)s: %(amount)s"), {seat: w.seat, amount: money(w.amount, data.currency)}, true);
      }).join(" · ")
      : whereText(data, winners[0]);
    var next = $("pm-hit-next");
    clear(next);
    if (data.new_amount !== undefined && data.new_amount !== null) {
      next.appendChild(doc.createTextNode(gettext("New jackpot:") + " "));
      next.appendChild(el("strong", null, money(data.new_amount, data.currency)));
    }
    $("pm-hit").hidden = false;
    var level = $("pm-level-" + data.level);
    if (level) {
      level.classList.remove("is-hit");
      void level.offsetWidth;
      level.classList.add("is-hit");
    }
    hitTimer = global.setTimeout(function () { $("pm-hit").hidden = true; }, HIT_MS);
  }

  function onSnapshot(data) {
    data = data || {};
    book.reset(data.pool ? [data.pool] : []);
    render();
    hit = null;
    (data.last_hits || []).forEach(collect);
    renderLast(hit);
  }

  function onEvent(event) {
    var data = event.data || {};
    if (event.type === "pool.meters") {
      (data.pools || []).forEach(function (pool) {
        if (pool.id === POOL && pool.active !== false && book.put(pool)) { render(); }
      });
    } else if (event.type === "pool.hit" && data.pool === POOL) {
      if (data.meter) { book.put(data.meter); }
      render();
      var shown = collect(data);
      renderLast(shown);
      showHit(shown);
    }
  }

  global.HallScreen.register("meter", {snapshot: onSnapshot, event: onEvent});
})(window);
