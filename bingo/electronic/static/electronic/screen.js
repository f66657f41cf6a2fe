/*
 * The electronic room's section of a hall screen (bingo.electronic.services.screens): the game drawing or
 * the last one played (the current ball, the last ones, the board of the speciality's numbers), its
 * prizes as announced at the close of sales and as the server decided them (won, with their winners and
 * shares, or not won), the accumulated prizes' meters with their max balls and information (R-16), and
 * the next game's sales along the foot.
 *
 * State is the snapshot's; the room stream's EGAME_* events move it on (halls/eventtypes.py):
 *   egame.sales_opened   the next game sells                    -> next
 *   egame.sales_closed   a game's terms: it draws, or waits      -> current (or next, closed)
 *   egame.ball           one ball, in order                      -> current.balls
 *   egame.prize          a prize decided                         -> current.decided (+ the winner band)
 *   egame.closed         the game is over                        -> current.state
 *   egame.meters         the accumulated prizes                  -> meters
 * Anything that does not fit (another game's ball, a ball out of order) reloads the snapshot, as a gap in
 * the stream does. In a room that is not electronic the section stays hidden and ignores every event.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var $ = function (id) { return doc.getElementById(id); };
  function say(text, values) { return interpolate(text, values, true); }

  var WON_MS = 8000;          // the winner band stays up this long (the next ball does not take it down)
  var STATE_LABELS = {
    selling: pgettext("screen", "Cards on sale"),
    drawing: pgettext("screen", "In play"),
    closed: pgettext("screen", "Finished"),
    void: pgettext("screen", "Void")
  };

  var speciality = null;      // {id, code, name, family, running, max_number}, or null: not our room
  var current = null;         // readmodels.drawing_view: {game, number, state, cards, sales, balls, prizes, decided}
  var next = null;            // readmodels.selling_view + {sales_closed, cards}
  var meters = [];            // [{code, name, amount, max_ball, info}]
  var wonTimer = null;
  var lastRendered = "";

  function el(tag, className, text) {
    var node = doc.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }

  /* --- the board ---------------------------------------------------------------------------------- */

  var boardSize = 0;

  function buildBoard(max) {
    if (boardSize === max) { return; }
    var board = $("es-board");
    clear(board);
    board.setAttribute("data-max", String(max));
    for (var n = 1; n <= max; n += 1) {
      var cell = el("div", "board__cell", n);
      cell.id = "es-board-" + n;
      board.appendChild(cell);
    }
    boardSize = max;
  }

  /* --- rendering ---------------------------------------------------------------------------------- */

  function render(screen) {
    var section = $("electronic");
    var ours = !!speciality;
    section.hidden = !ours;
    doc.body.setAttribute("data-room-kind", ours ? "electronic" : "");
    if (!ours) { return; }
    buildBoard(speciality.max_number || 90);
    section.setAttribute("data-state", current ? current.state : "none");
    renderHead();
    renderBalls();
    renderSide(screen);
    renderMeters(screen);
    renderFoot(screen);
  }

  function renderHead() {
    var slot = $("screen-head-slot");
    clear(slot);
    slot.appendChild(el("span", "head-game egame-head__name", speciality.name));
    if (!current) { return; }
    slot.appendChild(el("span", "head-game", say(pgettext("screen", "Game %(number)s"), {number: current.number})));
    var pill = el("span", "head-state head-state--" + current.state, STATE_LABELS[current.state] || current.state);
    pill.id = "es-state";
    slot.appendChild(pill);
  }

  function renderBalls() {
    var balls = current ? current.balls : [];
    var last = balls.length ? balls[balls.length - 1] : null;
    var big = $("es-ball");
    var number = last === null ? "" : String(last);
    big.setAttribute("data-ball", number);
    $("es-ball-number").textContent = number;
    var mark = (current ? current.game : "") + ":" + balls.length;
    if (last !== null && lastRendered && mark !== lastRendered) {
      big.classList.remove("is-new");
      void big.offsetWidth;   // restart the arrival animation
      big.classList.add("is-new");
    }
    lastRendered = mark;
    var of = current && current.last_ordinal ? current.last_ordinal : speciality.max_number;
    $("es-ordinal").textContent = last === null ? "\u00a0"
      : say(pgettext("screen", "Ball %(ordinal)s of %(total)s"), {ordinal: balls.length, total: of});
    var list = $("es-last-balls");
    clear(list);
    balls.slice(Math.max(0, balls.length - 6), Math.max(0, balls.length - 1)).reverse().forEach(function (n) {
      var item = el("li", "ball ball--sm");
      item.setAttribute("data-ball", String(n));
      var face = el("span", "ball__face");
      face.appendChild(el("span", "ball__num", n));
      item.appendChild(face);
      list.appendChild(item);
    });
    var drawn = {};
    balls.forEach(function (n) { drawn[n] = true; });
    for (var n = 1; n <= boardSize; n += 1) {
      var cell = $("es-board-" + n);
      cell.classList.toggle("is-drawn", !!drawn[n]);
      cell.classList.toggle("is-last", n === last);
    }
  }

  function decidedOf(code) {
    var found = null;
    (current ? current.decided : []).forEach(function (d) { if (d.code === code) { found = d; } });
    return found;
  }

  function maxBallText(maxBall) {
    return maxBall ? say(pgettext("screen", "Max. ball %(ball)s"), {ball: maxBall}) : "";
  }

  function resultText(d, screen) {
    if (!d.won) { return say(pgettext("screen", "Not won · ball %(ordinal)s"), {ordinal: d.ordinal}); }
    if (d.winners > 1) {
      return say(pgettext("screen", "%(count)s cards · %(amount)s each · ball %(ordinal)s"),
        {count: d.winners, amount: screen.money(d.share), ordinal: d.ordinal});
    }
    return say(pgettext("screen", "Won at ball %(ordinal)s"), {ordinal: d.ordinal});
  }

  function renderSide(screen) {
    $("es-cards").textContent = current ? String(current.cards) : "0";
    $("es-sales").textContent = current ? screen.money(current.sales) : "—";
    var list = $("es-prizes");
    clear(list);
    (current ? current.prizes : []).forEach(function (p) {
      if (!p.in_play) { return; }
      var d = decidedOf(p.code);
      var item = el("li", "egame-prize");
      item.setAttribute("data-code", p.code);
      item.setAttribute("data-type", p.type);
      item.setAttribute("data-won", d ? (d.won ? "true" : "false") : "");
      var head = el("div", "egame-prize__head");
      head.appendChild(el("span", "egame-prize__name", p.name));
      var amount = d && d.won ? d.amount : p.amount;
      head.appendChild(el("span", "egame-prize__amount", amount === null || amount === undefined ? "" : screen.money(amount)));
      item.appendChild(head);
      var foot = el("div", "egame-prize__foot");
      var terms = maxBallText(p.max_ball);
      if (p.golden_ball) { terms = say(pgettext("screen", "Golden ball %(ball)s"), {ball: p.golden_ball}); }
      if (terms) { foot.appendChild(el("span", "egame-prize__terms", terms)); }
      if (d) { foot.appendChild(el("span", "egame-prize__result", resultText(d, screen))); }
      item.appendChild(foot);
      list.appendChild(item);
    });
  }

  function renderMeters(screen) {
    var list = $("es-meters");
    clear(list);
    meters.forEach(function (m) {
      var item = el("li", "egame-meter");
      item.setAttribute("data-code", m.code);
      var head = el("div", "egame-meter__head");
      head.appendChild(el("span", "egame-meter__name", m.name));
      var amount = el("span", "egame-meter__amount", screen.money(m.amount));
      amount.setAttribute("data-amount", String(m.amount));
      head.appendChild(amount);
      item.appendChild(head);
      var terms = [maxBallText(m.max_ball), m.info || ""].filter(function (t) { return t; }).join(" · ");
      if (terms) { item.appendChild(el("div", "egame-meter__info", terms)); }
      list.appendChild(item);
    });
    $("es-meters-box").hidden = !meters.length;
  }

  function clock(iso) { return global.HallFormat.time(iso); }

  function renderFoot(screen) {
    var tag = "";
    var text = "";
    if (next && !next.sales_closed) {
      tag = pgettext("screen", "Sales open");
      text = say(pgettext("screen", "Game %(number)s · %(price)s a card · sales close at %(time)s"),
        {number: next.number, price: screen.money(next.card_price), time: clock(next.sales_close_at)});
    } else if (next) {
      tag = say(pgettext("screen", "Game %(number)s"), {number: next.number});
      text = pgettext("screen", "Sales closed · it starts when this game ends");
    } else if (current && current.state === "closed") {
      tag = pgettext("screen", "Finished");
      text = speciality.running ? pgettext("screen", "Next game shortly") : pgettext("screen", "Game finished");
    } else if (current) {
      tag = pgettext("screen", "In play");
      text = say(pgettext("screen", "%(cards)s cards in play"), {cards: current.cards});
    } else {
      tag = speciality.name;
      text = pgettext("screen", "Waiting for the next game");
    }
    $("es-foot-tag").textContent = tag;
    $("es-foot-text").textContent = text;
    renderDraw();
  }

  function shortDigest(hex) { return hex.slice(0, 16).replace(/(.{4})(?!$)/g, "$1 ") + "…"; }

  function renderDraw() {
    // The commitment of the game on sale (else of the game in play): the SHA-256 of its draw's seed.
    var game = next && next.draw ? next : (current && current.draw ? current : null);
    var node = $("es-draw");
    node.textContent = game ? say(pgettext("screen", "Game %(number)s draw: %(digest)s"),
      {number: game.number, digest: shortDigest(game.draw.commitment)}) : "";
  }

  /* --- the winner band ---------------------------------------------------------------------------- */

  function showWon(d, screen) {
    global.clearTimeout(wonTimer);
    $("es-won-title").textContent = say(pgettext("screen", "%(prize)s!"), {prize: d.name});
    $("es-won-amount").textContent = d.winners > 1
      ? say(pgettext("screen", "%(amount)s per card"), {amount: screen.money(d.share)})
      : screen.money(d.share);
    $("es-won-note").textContent = d.winners > 1
      ? say(pgettext("screen", "Prize of %(amount)s shared by %(count)s cards"),
        {amount: screen.money(d.amount), count: d.winners})
      : say(pgettext("screen", "Won at ball %(ordinal)s"), {ordinal: d.ordinal});
    var band = $("es-won");
    band.setAttribute("data-code", d.code);
    band.hidden = false;
    screen.hold("electronic", true);
    wonTimer = global.setTimeout(function () { hideWon(screen); }, WON_MS);
  }

  function hideWon(screen) {
    global.clearTimeout(wonTimer);
    $("es-won").hidden = true;
    screen.hold("electronic", false);
  }

  /* --- snapshot and events ------------------------------------------------------------------------ */

  function onSnapshot(data, screen) {
    data = data || {};
    var before = current ? current.game : null;
    speciality = data.speciality || null;
    current = data.current || null;
    next = data.next || null;
    meters = data.meters || [];
    if (!current || current.game !== before) { hideWon(screen); }
    render(screen);
  }

  function mergeMeters(fresh) {
    var info = {};
    meters.forEach(function (m) { info[m.code] = m.info; });
    meters = (fresh || []).map(function (m) {
      return {code: m.code, name: m.name, amount: m.amount, max_ball: m.max_ball, info: m.info || info[m.code] || ""};
    });
  }

  function onEvent(event, screen) {
    if (!speciality || event.type.indexOf("egame.") !== 0) { return; }
    var data = event.data || {};
    if (data.speciality !== undefined && data.speciality !== speciality.id) { return; }
    switch (event.type) {
      case "egame.meters":
        mergeMeters(data.meters);
        break;
      case "egame.sales_opened":
        next = {game: data.game, number: data.number, state: data.state, sales_close_at: data.sales_close_at,
          card_price: data.card_price, sales_closed: false, cards: null,
          draw: data.commitment ? {commitment: data.commitment, status: "committed"} : null};
        break;
      case "egame.sales_closed":
        if (data.state === "drawing") {
          current = {game: data.game, number: data.number, state: data.state, cards: data.cards, sales: data.sales,
            balls: [], last_ordinal: current ? current.last_ordinal : null, prizes: data.prizes.map(function (p) {
              return Object.assign({golden_ball: null}, p);
            }), decided: [], draw: next && next.game === data.game ? next.draw : null};
          if (current.draw && data.sales_digest) {
            current.draw = Object.assign({}, current.draw, {sales_digest: data.sales_digest, status: "sales_closed"});
          }
          if (data.golden_ball) {
            current.prizes.forEach(function (p) { if (p.type === "golden_ball") { p.golden_ball = data.golden_ball; } });
          }
          if (next && next.game === data.game) { next = null; }
          hideWon(screen);
        } else if (data.state === "closed") {
          if (next && next.game === data.game) { next = null; }   // nobody bought: over at once
        } else if (next && next.game === data.game) {
          next.sales_closed = true;
          next.cards = data.cards;
        } else {
          screen.resync();
          return;
        }
        break;
      case "egame.ball":
        if (!current || current.game !== data.game || data.ordinal !== current.balls.length + 1) {
          screen.resync();   // a game we do not hold, or a ball missed: the snapshot knows
          return;
        }
        current.balls.push(data.ball);
        current.state = data.state;
        sayBall(data.ball, screen);
        break;
      case "egame.prize":
        if (!current || current.game !== data.game) { screen.resync(); return; }
        current.decided = current.decided.filter(function (d) { return d.code !== data.code; });
        current.decided.push({code: data.code, name: data.name, type: data.type, ordinal: data.ordinal,
          won: data.won, winners: data.winners, amount: data.amount, share: data.share});
        if (data.won) { showWon(data, screen); }
        break;
      case "egame.closed":
        if (current && current.game === data.game) {
          current.state = data.state;
          if (data.balls !== current.balls.length) { screen.resync(); return; }
        } else if (!(next && next.game === data.game)) {
          screen.resync();
          return;
        }
        break;
      default:
        return;
    }
    render(screen);
  }

  /* The caller's voice (halls/voice.js, the room's audio screen only): each ball, 90- or 75-ball alike, from
     the clips bingo's section names (data-voice-url). */
  function sayBall(ball, screen) {
    var holder = doc.querySelector("[data-voice-url]");
    if (!screen.voice || !holder) { return; }
    screen.voice.say([holder.getAttribute("data-voice-url").replace("KEY", "ball-" + ball)]);
  }

  global.HallScreen.register("electronic", {snapshot: onSnapshot, event: onEvent});
})(window);
