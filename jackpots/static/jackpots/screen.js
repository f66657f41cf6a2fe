/*
 * The pools section of a hall screen: a ribbon of live meters along the bottom, and the announcement of
 * a hit (table or source, seat, hand, amount paid, new amount) over the board.
 *
 * State is the snapshot's list of the venue's pools (jackpots.services.readmodels.screens.screen_snapshot). Events of the
 * room's stream: `pool.meters` (at most 4 a second, one per tick for all the pools that changed) carries
 * each of them whole; `pool.hit` carries the payments and the pool after the hit. Other events are not ours.
 *
 * Hits are not the room's own game: while the bingo section holds the screen (a claim, the claim band, a
 * winner: halls/screen.js "Priority") they wait in line, and are announced one after the other once it
 * lets go; one being shown when the room's game takes the screen goes back to the head of the line. The
 * meter of a waiting hit still flashes in the ribbon. `#jp-hit[data-waiting]` counts the hits in line.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var $ = function (id) { return doc.getElementById(id); };
  var Meters = global.JackpotMeters;
  var money = global.HallFormat.money;

  var HIT_MS = 15000;       // a hit stays announced this long, then the next in line (if any)
  var MAX_WAITING = 8;      // hits in line at most (the oldest go first: the meters show the rest)
  var PAGE_MS = 8000;       // more meters than fit: they take turns, a page at a time
  var PER_PAGE = 4;
  var AMOUNT_PX = 62;       // a meter's figure in the ribbon, at most (jackpots/screen.css)
  var DIGIT_EM = 0.64;      // about the width of one character of it, in em (bold, tabular digits)

  var book = Meters.book();
  var hit = null;           // the hit announced now: {pool, settlement, winners: [...], ...}
  var hitTimer = null;
  var line = [];            // hits waiting for the screen, oldest first
  var HallScreen = global.HallScreen;
  var page = 0;
  var pageTimer = null;

  function el(tag, className, text) {
    var node = doc.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }

  /* A level of a pool of several is named first: if the label is cut, the pool's name goes. */
  function levelLabel(pool, level) {
    return pool.levels.length > 1 ? level.name + " · " + pool.name : pool.name;
  }

  /* --- the ribbon --------------------------------------------------------------------------------- */

  function meterNodes() {
    return Array.prototype.slice.call($("jp-meters").children);
  }

  /* Build or update one node per level; existing nodes keep rolling from what they show. */
  function render() {
    var list = $("jp-meters");
    var wanted = [];
    book.pools().forEach(function (pool) {
      pool.levels.forEach(function (level) { wanted.push({pool: pool, level: level}); });
    });
    var existing = {};
    meterNodes().forEach(function (node) { existing[node.id] = node; });
    wanted.forEach(function (item, index) {
      var id = "jp-level-" + item.level.id;
      var node = existing[id];
      if (!node) {
        node = el("li", "jp-meter");
        node.id = id;
        node.appendChild(el("div", "jp-meter__label"));
        node.appendChild(el("div", "jp-meter__amount"));
      }
      delete existing[id];
      node.setAttribute("data-pool", String(item.pool.id));
      node.setAttribute("data-level", String(item.level.id));
      node.firstChild.textContent = levelLabel(item.pool, item.level);
      Meters.roll(node.lastChild, item.level.amount, item.pool.currency);
      if (list.children[index] !== node) { list.insertBefore(node, list.children[index] || null); }
    });
    Object.keys(existing).forEach(function (id) { list.removeChild(existing[id]); });
    var count = wanted.length;
    $("jackpots").setAttribute("data-pools", String(book.pools().length));
    doc.querySelector(".screen-body").classList.toggle("has-ribbon", count > 0);
    paginate();
  }

  function paginate() {
    var nodes = meterNodes();
    var pages = Math.max(1, Math.ceil(nodes.length / PER_PAGE));
    var perPage = Math.max(1, Math.ceil(nodes.length / pages));   // 5 meters: 3 + 2, not 4 + 1
    if (page >= pages) { page = 0; }
    nodes.forEach(function (node, index) {
      node.hidden = Math.floor(index / perPage) !== page;
    });
    fit();
    if (pages > 1 && !pageTimer) {
      pageTimer = global.setInterval(function () { page += 1; paginate(); }, PAGE_MS);
    } else if (pages <= 1 && pageTimer) {
      global.clearInterval(pageTimer);
      pageTimer = null;
    }
  }

  /* The biggest figure (up to the CSS size) that fits its meter's width, from its longest text. */
  function fit() {
    meterNodes().forEach(function (node) {
      if (node.hidden) { return; }
      var amount = node.lastChild;
      var pool = book.get(Number(node.getAttribute("data-pool")));
      var text = money(amount.getAttribute("data-amount"), pool ? pool.currency : "EUR");
      var room = node.clientWidth - 44;
      var size = Math.min(AMOUNT_PX, Math.floor(room / (text.length * DIGIT_EM)));
      amount.style.fontSize = room > 0 ? size + "px" : "";
    });
  }

  /* --- the hit announcement ----------------------------------------------------------------------- */

  /* Where the hit was: "Mesa 1 · Asiento 4 · Mano 41", or "Máquina 1001" (a machine's hand is its game id,
     which says nothing to players). */
  function whereText(data, winner) {
    var parts = [];
    if (data.source) { parts.push(data.source); }
    if (data.source_kind === "machine") { return parts.join(" · "); }
    if (winner && winner.seat) { parts.push(interpolate(gettext("Seat %(seat)s"), {seat: winner.seat}, true)); }
    if (data.hand) { parts.push(interpolate(gettext("Hand %(hand)s"), {hand: data.hand}, true)); }
    return parts.join(" · ");
  }

  function sameHand(a, data) { return a && a.settlement === data.settlement && a.pool === data.pool; }

  /* One event per paid winner: the winners of one hand (one settlement) are announced together. */
  function takeHit(data) {
    var winner = {seat: data.seat, amount: data.amount, category_label: data.category_label};
    var showing = !$("jp-hit").hidden;
    var queued = line.length ? line[line.length - 1] : null;
    if (showing && sameHand(hit, data)) {
      hit.winners.push(winner);
      hit.new_amount = data.new_amount;
      renderHit(hit);
      return;
    }
    if (sameHand(queued, data)) {
      queued.winners.push(winner);
      queued.new_amount = data.new_amount;
      return;
    }
    line.push({
      pool: data.pool, settlement: data.settlement, level: data.level, name: data.name,
      level_name: data.level_name, currency: data.currency, source: data.source, hand: data.hand,
      source_kind: data.source_kind, machine: data.machine, new_amount: data.new_amount, winners: [winner]
    });
    if (line.length > MAX_WAITING) { line.shift(); }
    flashMeter(data.level);
    if (!showing) { next(); }
    markWaiting();
  }

  /* The next hit in line, when the screen is free and none is shown. */
  function next() {
    if (HallScreen.screen.busy() || !$("jp-hit").hidden || !line.length) {
      markWaiting();
      return;
    }
    hit = line.shift();
    renderHit(hit);
    markWaiting();
    global.clearTimeout(hitTimer);
    hitTimer = global.setTimeout(function () { hideHit(); next(); }, HIT_MS);
  }

  function markWaiting() { $("jp-hit").setAttribute("data-waiting", String(line.length)); }

  /* The room's game takes the screen: a hit being shown goes back to the head of the line. */
  function onPriority(busy) {
    if (busy && !$("jp-hit").hidden && hit) {
      line.unshift(hit);
      hideHit();
    }
    next();
  }

  function flashMeter(levelId) {
    var meter = $("jp-level-" + levelId);
    if (meter) {
      meter.classList.remove("is-hit");
      void meter.offsetWidth;
      meter.classList.add("is-hit");
    }
  }

  function renderHit(data) {
    var paid = data.winners;
    var many = paid.length > 1;
    data.paid = Meters.total(paid);
    var overlay = $("jp-hit");
    overlay.setAttribute("data-pool", String(data.pool));
    overlay.setAttribute("data-winners", many ? "many" : "one");
    overlay.setAttribute("data-machine", data.machine || "");
    $("jp-hit-pool").textContent = data.name || "";
    var title = $("jp-hit-title");
    title.textContent = interpolate(gettext("%(name)s!"), {name: data.level_name || gettext("Jackpot")}, true);
    title.style.animation = "none";
    void title.offsetWidth;   // restart the entrance animation
    title.style.animation = "";
    var list = $("jp-hit-winners");
    clear(list);
    if (many) {
      $("jp-hit-amount").textContent = interpolate(gettext("Total %(amount)s"),
        {amount: money(data.paid, data.currency)}, true);
      paid.forEach(function (w) {
        var item = el("li", "jp-hit__winner");
        item.appendChild(el("span", "jp-hit__winner-seat", interpolate(gettext("Seat %(seat)s"), {seat: w.seat}, true)));
        if (w.category_label) { item.appendChild(el("span", "jp-hit__winner-hand", w.category_label)); }
        item.appendChild(el("span", "jp-hit__winner-amount", money(w.amount, data.currency)));
        list.appendChild(item);
      });
      $("jp-hit-hand").textContent = "";
      $("jp-hit-where").textContent = whereText(data, null);
    } else {
      var one = paid[0] || {};
      $("jp-hit-amount").textContent = money(one.amount || data.paid, data.currency);
      $("jp-hit-hand").textContent = one.category_label || "";
      $("jp-hit-where").textContent = whereText(data, one);
    }
    var next = $("jp-hit-next");
    clear(next);
    if (data.new_amount !== undefined && data.new_amount !== null) {
      next.appendChild(doc.createTextNode(gettext("New jackpot:") + " "));
      next.appendChild(el("strong", null, money(data.new_amount, data.currency)));
    }
    overlay.hidden = false;
    flashMeter(data.level);
  }

  function hideHit() {
    global.clearTimeout(hitTimer);
    $("jp-hit").hidden = true;
  }

  /* --- snapshot and events ------------------------------------------------------------------------ */

  function onSnapshot(data) {
    book.reset((data || {}).pools || []);
    render();
  }

  function onEvent(event) {
    var data = event.data || {};
    if (event.type === "pool.meters") {
      var changed = false;
      (data.pools || []).forEach(function (pool) {
        var shown = pool.active === false ? book.remove(pool.id) : book.put(pool);
        changed = changed || shown;
      });
      if (changed) { render(); }
    } else if (event.type === "pool.hit") {
      if (data.meter) { book.put(data.meter); }
      render();
      takeHit(data);
    }
  }

  HallScreen.screen.onPriority(onPriority);
  HallScreen.register("jackpots", {snapshot: onSnapshot, event: onEvent});
})(window);
