/*
 * The player terminal's touch page (EB-05.f). It decides nothing: balls, prizes, amounts and balances are the
 * server's; the page marks the cards with the balls the server drew and sorts them by how close they are
 * ("falta 1"), for the player's eyes only.
 *
 * The device id and token come from the URL fragment (#<device id>:<token>), are kept in localStorage and
 * taken out of the address bar. Every call goes to the terminal API (/api/electronic/terminal/...) with
 * "Authorization: CashDevice <id>:<token>", but a purchase, which goes over the terminal's socket as a
 * purchase frame when it is open; the live part comes over that socket (terminal_stream.js):
 * its room's stream (sales opened and closed, balls, prizes, meters) and its own (its cards, prizes, balance,
 * state). The inserted player card's number is kept for the session (sessionStorage) so a reload keeps it in.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var body = doc.body;
  var $ = function (id) { return doc.getElementById(id); };
  var ui = global.HallUi;
  var fmt = global.HallFormat;
  var el = ui.el;
  var fill = ui.fill;
  var ApiError = global.HallApi.ApiError;

  var API = body.getAttribute("data-api");
  var SOCKET = body.getAttribute("data-socket");
  var SOFTWARE = body.getAttribute("data-software");
  var HELLO_EVERY_MS = 60000;
  var DEVICE_KEY = "hall.terminal.device";
  var CARD_KEY = "hall.terminal.card";
  var RECENT_BALLS = 8;
  var BUY_ANSWER_MS = 15000;  // a purchase frame unanswered this long: tapped again, it is resent
  var ALERT_MS = 6000;

  var S = {
    creds: null,
    terminal: null,
    spec: null,
    selling: null,
    drawing: null,
    meters: [],
    network: {},             // network prize code -> its meter as the central last sent it (Gran Línea / Bingo)
    lastGames: [],
    player: null,            // {number, state, balance}
    cards: {},               // game id -> [{card, cells, wins: [{code, name, amount}]}]
    reality: null,           // the inserted card's play session: {due, next_at, ...} (reality checks)
    limits: null,            // the inserted card's limits, as the server last listed them (the Limits tab)
    size: null,              // the purchase size chosen
    clockOffset: 0,          // server clock minus this one (ms), from the snapshot
    streams: {room: "", terminal: ""}
  };
  var buyIntent = new ui.KeyedIntent("tbuy");
  var cashoutSeq = null;     // the cash-out message's seq, kept until the server answers it
  var alerts = [];
  var alertTimer = null;
  var stream = null;

  // --- the device's credentials -------------------------------------------------------------------------

  function readCredentials() {
    var hash = global.location.hash.replace(/^#/, "");
    var found = /^(\d{1,18}):(.+)$/.exec(decodeURIComponent(hash));
    if (found) {
      global.localStorage.setItem(DEVICE_KEY, JSON.stringify({device: found[1], token: found[2]}));
      // Out of the address bar and the history: the token is the terminal's key.
      global.history.replaceState(null, "", global.location.pathname + global.location.search);
    }
    try {
      var kept = JSON.parse(global.localStorage.getItem(DEVICE_KEY) || "null");
      return kept && kept.device && kept.token ? kept : null;
    } catch (err) {
      return null;
    }
  }

  // --- the terminal API ---------------------------------------------------------------------------------

  function call(method, path, payload) {
    var headers = {
      "Accept": "application/json",
      // The server's answers (a refusal's reason) in the page's language, not the browser's.
      "Accept-Language": document.documentElement.lang || "es",
      "Authorization": "CashDevice " + S.creds.device + ":" + S.creds.token
    };
    var options = {method: method, headers: headers, cache: "no-store", credentials: "omit"};
    if (payload !== undefined) {
      headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(payload);
    }
    return global.fetch(API + path, options).then(function (response) {
      return response.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (err) { data = null; }
        if (response.ok) { return data || {}; }
        var error = data && data.error ? data.error : {};
        throw new ApiError(response.status, error.code || "http_" + response.status,
          error.message || interpolate(gettext("The server answered %(status)s."), {status: response.status}, true));
      });
    }, function () {
      throw new ApiError(0, "network", gettext("The server cannot be reached: try again in a moment."));
    });
  }

  /* The snapshot (POST: the card number stays out of URLs and logs), with the inserted card's part. */
  function loadSnapshot() {
    return call("POST", "snapshot/", S.player ? {card: S.player.number} : {});
  }

  /* "I am alive": the software this page is and its clock (the verification checks both). */
  function hello() {
    call("POST", "hello/", {seq: Date.now(), software_version: SOFTWARE, clock: new Date().toISOString()})
      .then(function () { if (!$("setup-why").textContent) { return; } admitted(); })
      .catch(function (err) {
        // The socket's refusal reaches a browser without its code (a failed handshake): the API's says it.
        if (err.status === 401 || err.status === 403) { refused(); } else { console.warn("terminal hello", err.code); }
      });
  }

  // --- small helpers --------------------------------------------------------------------------------------

  function money(amount) { return fmt.money(amount, "EUR"); }
  function now() { return Date.now() + S.clockOffset; }
  function show(node, on) { node.hidden = !on; }

  function message(box, text, kind) {
    global.clearTimeout(box._timer);
    if (!text) { box.hidden = true; return; }
    box.textContent = text;
    box.className = "t-msg t-msg--" + (kind || "info");
    box.hidden = false;
    if (kind !== "error") { box._timer = global.setTimeout(function () { box.hidden = true; }, 8000); }
  }

  function prizeSpec(code) {
    var prizes = S.spec ? S.spec.prizes : [];
    for (var i = 0; i < prizes.length; i += 1) { if (prizes[i].code === code) { return prizes[i]; } }
    return null;
  }

  function masksOf(pattern) {
    var prizes = S.spec ? S.spec.prizes : [];
    for (var i = 0; i < prizes.length; i += 1) { if (prizes[i].pattern === pattern) { return prizes[i].masks; } }
    return [];
  }

  function drawnSet() {
    var set = {};
    (S.drawing && S.drawing.balls || []).forEach(function (n) { set[n] = true; });
    return set;
  }

  // --- applying the snapshot and the events ----------------------------------------------------------------

  function networkMeter(d) {
    S.network[d.prize] = {code: "network:" + d.prize, name: d.name, amount: d.amount,
                          max_ball: d.max_ball || null, info: ""};
  }

  /* A snapshot: the whole one (the terminal API's), the speciality's part only ("part": "speciality", the
     socket's first frame: the terminal's own part keeps what it showed until its POST answers), or the
     terminal's own part only ("part": "terminal": the POST's room part older than what is shown). */
  function applySnapshot(snap) {
    var shared = snap.part !== "terminal";
    var own = snap.part !== "speciality";
    if (snap.server_time) { S.clockOffset = new Date(snap.server_time).getTime() - Date.now(); }
    if (shared) {
      S.spec = snap.speciality;
      S.selling = snap.selling;
      S.drawing = snap.drawing;
      S.meters = snap.meters || [];
      S.network = {};  // the network prizes' meters as last heard: there at once after a reconnect
      (snap.network || []).forEach(networkMeter);
      S.lastGames = snap.last_games || [];
    }
    S.streams = snap.streams || S.streams;
    if (own) {
      S.terminal = snap.terminal;
      if (S.player && snap.reality !== undefined) { setReality(snap.reality); }
      if (snap.player && S.player) {
        S.player.state = snap.player.state;
        S.player.balance = snap.player.balance;
        S.cards = {};
        Object.keys(snap.player.cards || {}).forEach(function (game) { S.cards[game] = snap.player.cards[game]; });
      } else if (!S.player) {
        S.cards = {};
      }
    }
    if (S.spec && (S.size === null || S.spec.purchase_sizes.indexOf(S.size) < 0)) {
      S.size = S.spec.purchase_sizes[0] || null;
    }
    render();
  }

  var handlers = {
    "egame.sales_opened": function (d) {
      S.selling = {game: d.game, number: d.number, state: d.state, sales_close_at: d.sales_close_at,
        card_price: d.card_price, draw: d.commitment ? {commitment: d.commitment, status: "committed"} : null};
    },
    "egame.sales_closed": function (d) {
      if (S.selling && S.selling.game === d.game) { S.selling = null; }
      if (d.state === "drawing") {
        S.drawing = {game: d.game, number: d.number, state: d.state, cards: d.cards, sales: d.sales, balls: [],
          prizes: (d.prizes || []).map(function (p) {
            return {code: p.code, name: p.name, type: p.type, pattern: p.pattern, in_play: p.in_play,
              amount: p.amount, max_ball: p.max_ball};
          }), decided: [], last_ordinal: null};
      } else if (d.state !== "closed") {
        stream.resync();  // sold, waiting for the game before it to end: the snapshot says what is on
      }
    },
    "egame.ball": function (d) {
      if (!S.drawing || S.drawing.game !== d.game) { stream.resync(); return; }
      if (d.ordinal <= S.drawing.balls.length) { return; }
      if (d.ordinal !== S.drawing.balls.length + 1) { stream.resync(); return; }
      S.drawing.balls.push(d.ball);
      S.drawing.state = d.state;
    },
    "egame.prize": function (d) {
      if (!S.drawing || S.drawing.game !== d.game) { return; }
      if (S.drawing.decided.some(function (p) { return p.code === d.code; })) { return; }
      S.drawing.decided.push({code: d.code, name: d.name, type: d.type, ordinal: d.ordinal, won: d.won,
        winners: d.winners, amount: d.amount, share: d.share});
    },
    "egame.closed": function (d) {
      if (S.drawing && S.drawing.game === d.game) { S.drawing.state = d.state; }
      S.lastGames = [{game: d.game, number: d.number, balls: d.balls,
        prizes: (d.prizes || []).filter(function (p) { return p.won; })}]
        .concat(S.lastGames.filter(function (g) { return g.game !== d.game; })).slice(0, 5);
    },
    "egame.meters": function (d) {
      var info = {};
      S.meters.forEach(function (m) { info[m.code] = m.info; });
      S.meters = (d.meters || []).map(function (m) {
        return {code: m.code, name: m.name, amount: m.amount, max_ball: m.max_ball, info: info[m.code] || ""};
      });
    },
    "terminal.cards": function (d) {
      if (!S.player) { return; }
      addCards(d.game, d.cards);
      S.player.balance = d.balance;
    },
    "terminal.prize": function (d) {
      if (S.player) { S.player.balance = d.balance; }
      (S.cards[d.game] || []).forEach(function (card) {
        if (card.card === d.card && !card.wins.some(function (w) { return w.code === d.code; })) {
          card.wins.push({code: d.code, name: d.name, amount: d.amount});
        }
      });
      alerts.push(d);
      nextAlert();
    },
    "network.prize_meter": networkMeter,
    "terminal.balance": function (d) { if (S.player) { S.player.balance = d.balance; } },
    "terminal.state": function (d) { if (S.terminal) { S.terminal.state = d.state; S.terminal.reason = d.reason; } }
  };

  function onEvent(event) {
    var handler = handlers[event.type];
    if (!handler) { return; }
    handler(event.data || {});
    render();
  }

  function addCards(game, cards) {
    var held = S.cards[game] = S.cards[game] || [];
    var known = {};
    held.forEach(function (c) { known[c.card] = true; });
    (cards || []).forEach(function (c) {
      if (!known[c.card]) { held.push({card: c.card, cells: c.cells, wins: c.wins || []}); }
    });
  }

  // --- what the page shows ---------------------------------------------------------------------------------

  function render() {
    renderHead();
    renderMeters();
    renderDraw();
    renderCards();
    renderPlayer();
    renderBuy();
    renderPrizeTable();
    renderLastGames();
  }

  function familyName(family) {
    return family === "automatic" ? gettext("Automatic bingo") : gettext("Electronic bingo");
  }

  function renderHead() {
    $("spec-name").textContent = S.spec ? S.spec.name : gettext("Electronic bingo");
    $("spec-family").textContent = S.spec ? familyName(S.spec.family) : "";
    $("terminal-name").textContent = S.terminal ? S.terminal.name : "";
    var line = "";
    if (S.drawing) {
      var drawn = S.drawing.balls.length;
      if (S.drawing.state === "drawing") {
        line = interpolate(gettext("Game %(number)s · ball %(ball)s"), {number: S.drawing.number, ball: drawn}, true);
      } else {
        line = interpolate(gettext("Game %(number)s over · %(balls)s balls"),
          {number: S.drawing.number, balls: drawn}, true);
      }
    }
    $("game-line").textContent = line;
    tickSales();
    var banner = $("banner");
    var state = S.terminal ? S.terminal.state : "in_service";
    var active = !S.terminal || S.terminal.active !== false;
    if (state !== "in_service" || !active) {
      banner.textContent = state === "failed" ? gettext("This terminal failed its verification: it cannot play.")
        : gettext("This terminal is out of service.");
      banner.hidden = false;
    } else {
      banner.hidden = true;
    }
  }

  function shortDigest(hex) { return hex.slice(0, 16).replace(/(.{4})(?!$)/g, "$1 ") + "…"; }

  function renderDraw() {
    // The draw of the game on sale is committed before its first card: its commitment, shortened.
    var draw = S.selling && S.selling.draw;
    var node = $("draw-line");
    node.textContent = draw ? interpolate(gettext("Draw committed: %(digest)s"),
      {digest: shortDigest(draw.commitment)}, true) : "";
    node.title = draw ? draw.commitment : "";
  }

  function tickSales() {
    var node = $("sales-line");
    renderDraw();
    if (!S.selling) {
      node.textContent = S.spec ? gettext("Next game: sales not open yet") : "";
      node.className = "t-head__sales";
      return;
    }
    var left = Math.max(0, Math.round((new Date(S.selling.sales_close_at).getTime() - now()) / 1000));
    var clock = Math.floor(left / 60) + ":" + ("0" + (left % 60)).slice(-2);
    node.textContent = left > 0
      ? interpolate(gettext("Game %(number)s on sale · closes in %(clock)s"), {number: S.selling.number, clock: clock}, true)
      : interpolate(gettext("Game %(number)s: sales closing"), {number: S.selling.number}, true);
    node.className = "t-head__sales" + (left > 0 && left <= 10 ? " is-closing" : "");
    enableBuy();  // the button goes off when the window closes
  }

  function renderMeters() {
    var box = $("meters");
    var shown = S.meters.concat(Object.keys(S.network).sort().map(function (k) { return S.network[k]; }));
    show(box, shown.length > 0);
    fill(box, shown.map(function (m) {
      return el("div", {class: "t-meter", "data-code": m.code},
        el("span", {class: "t-meter__name", text: m.name}),
        el("span", {class: "t-meter__amount", "data-amount": m.amount, text: money(m.amount)}),
        m.max_ball ? el("span", {class: "t-meter__ball",
          text: interpolate(gettext("up to ball %(ball)s"), {ball: m.max_ball}, true)}) : null,
        m.info ? el("span", {class: "t-meter__info", text: m.info}) : null);
    }));
  }

  function renderDraw() {
    var balls = S.drawing ? S.drawing.balls : [];
    var last = balls.length ? balls[balls.length - 1] : null;
    var big = $("last-ball");
    big.textContent = last === null ? "–" : String(last);
    big.setAttribute("data-ball", last === null ? "" : String(last));
    $("ball-count").textContent = balls.length
      ? interpolate(ngettext("%(count)s ball", "%(count)s balls", balls.length), {count: balls.length}, true) : "";
    fill($("recent-balls"), balls.slice(-RECENT_BALLS - 1, -1).reverse().map(function (n) {
      return el("span", {class: "t-ball", text: String(n)});
    }));
    var max = S.spec ? S.spec.layout.max_number : 90;
    var drawn = drawnSet();
    var board = $("board");
    if (board.childNodes.length !== max) {
      var cells = [];
      for (var n = 1; n <= max; n += 1) { cells.push(el("span", {class: "t-board__n", "data-n": String(n), text: String(n)})); }
      fill(board, cells);
      board.style.setProperty("--per-row", String(Math.ceil(max / 3)));
    }
    Array.prototype.forEach.call(board.childNodes, function (node) {
      var n = Number(node.getAttribute("data-n"));
      node.className = "t-board__n" + (drawn[n] ? " is-drawn" : "") + (n === last ? " is-last" : "");
    });
    renderPrizesNow();
  }

  function decidedOf(code) {
    var decided = S.drawing ? S.drawing.decided : [];
    for (var i = 0; i < decided.length; i += 1) { if (decided[i].code === code) { return decided[i]; } }
    return null;
  }

  function meterOf(code) {
    for (var i = 0; i < S.meters.length; i += 1) { if (S.meters[i].code === code) { return S.meters[i]; } }
    return null;
  }

  function renderPrizesNow() {
    var prizes = S.drawing ? S.drawing.prizes.filter(function (p) { return p.in_play; }) : [];
    fill($("prizes-now"), prizes.map(function (p) {
      var decided = decidedOf(p.code);
      var amount = p.amount;
      if (amount === null || amount === undefined) { var m = meterOf(p.code); amount = m ? m.amount : null; }
      var state = "";
      var cls = "t-chip";
      if (decided && decided.won) {
        cls += " is-won";
        state = interpolate(ngettext("ball %(ball)s · %(count)s winner", "ball %(ball)s · %(count)s winners",
          decided.winners), {ball: decided.ordinal, count: decided.winners}, true);
        amount = decided.amount;
      } else if (decided) {
        cls += " is-lost";
        state = gettext("not won");
      } else if (p.max_ball) {
        state = interpolate(gettext("up to ball %(ball)s"), {ball: p.max_ball}, true);
      }
      return el("div", {class: cls, "data-code": p.code},
        el("span", {class: "t-chip__name", text: p.name}),
        el("span", {class: "t-chip__amount", text: amount === null || amount === undefined ? "" : money(amount)}),
        state ? el("span", {class: "t-chip__state", text: state}) : null);
    }));
  }

  /* The open prizes of the game drawing, in the table's order: what "falta N" counts towards. */
  function openTargets() {
    if (!S.drawing || S.drawing.state !== "drawing") { return []; }
    return S.drawing.prizes.filter(function (p) { return p.in_play && !decidedOf(p.code); });
  }

  function missing(cells, masks, drawn) {
    var best = null;
    masks.forEach(function (mask) {
      var left = 0;
      mask.forEach(function (p) { if (cells[p] !== 0 && !drawn[cells[p]]) { left += 1; } });
      if (best === null || left < best) { best = left; }
    });
    return best;
  }

  function cardGrid(cells, drawn, layout) {
    var rows = [];
    if (layout.code === "90") {
      for (var r = 0; r < 3; r += 1) {
        var row = [null, null, null, null, null, null, null, null, null];
        for (var p = r * 5; p < r * 5 + 5; p += 1) {
          var n = cells[p];
          row[Math.min(Math.floor(n / 10), 8)] = n;
        }
        rows.push(row);
      }
    } else {
      for (var rr = 0; rr < layout.rows; rr += 1) { rows.push(cells.slice(rr * layout.columns, rr * layout.columns + layout.columns)); }
    }
    return el("div", {class: "t-card__grid t-card__grid--" + layout.code},
      rows.map(function (row) {
        return row.map(function (n) {
          if (n === null) { return el("span", {class: "t-cell is-blank"}); }
          if (n === 0) { return el("span", {class: "t-cell is-free is-marked", text: "★"}); }
          return el("span", {class: "t-cell" + (drawn[n] ? " is-marked" : ""), "data-n": String(n), text: String(n)});
        });
      }).reduce(function (all, row) { return all.concat(row); }, []));
  }

  function renderCards() {
    var layout = S.spec ? S.spec.layout : {code: "90", rows: 3, columns: 5};
    var playing = S.drawing ? (S.cards[S.drawing.game] || []) : [];
    var next = S.selling ? (S.cards[S.selling.game] || []) : [];
    var shownGame = playing.length ? S.drawing : (next.length ? S.selling : null);
    var cards = playing.length ? playing : next;
    var drawn = playing.length ? drawnSet() : {};
    var targets = playing.length ? openTargets() : [];
    var target = targets.length ? targets[0] : null;
    var masks = target ? masksOf(target.pattern) : [];
    var rows = cards.map(function (card) {
      return {card: card, left: target ? missing(card.cells, masks, drawn) : null};
    });
    rows.sort(function (a, b) {
      if (a.left !== null && b.left !== null && a.left !== b.left) { return a.left - b.left; }
      return a.card.card - b.card.card;
    });
    var title = gettext("My cards");
    if (shownGame) {
      title = interpolate(playing.length ? gettext("My cards · game %(number)s") : gettext("My cards for game %(number)s"),
        {number: shownGame.number}, true);
    }
    $("cards-title").textContent = title;
    var note = "";
    if (playing.length && next.length) {
      note = interpolate(ngettext("%(count)s card bought for game %(number)s", "%(count)s cards bought for game %(number)s",
        next.length), {count: next.length, number: S.selling.number}, true);
    } else if (target) {
      note = interpolate(gettext("Playing for: %(prize)s"), {prize: target.name}, true);
    }
    $("cards-note").textContent = note;
    show($("no-cards"), cards.length === 0);
    show($("cards"), cards.length > 0);
    $("no-cards").textContent = S.player ? gettext("No cards in play: buy cards for the next game.")
      : gettext("Insert your player card and buy cards for the next game.");
    fill($("cards"), rows.map(function (row) {
      var card = row.card;
      var won = card.wins && card.wins.length;
      var badge = null;
      if (row.left !== null) {
        badge = el("span", {class: "t-card__badge" + (row.left <= 1 ? " is-hot" : ""),
          text: interpolate(ngettext("%(left)s to go", "%(left)s to go", row.left), {left: row.left}, true)});
      }
      return el("div", {class: "t-card" + (won ? " is-won" : "") + (row.left === 1 ? " is-hot" : ""),
        "data-card": String(card.card), "data-left": row.left === null ? "" : String(row.left)},
        el("div", {class: "t-card__head"}, el("span", {class: "t-card__id", text: "#" + card.card}), badge),
        cardGrid(card.cells, drawn, layout),
        won ? el("div", {class: "t-card__wins"}, card.wins.map(function (w) {
          return el("span", {class: "t-card__win", "data-code": w.code, text: w.name + " " + money(w.amount)});
        })) : null);
    }));
  }

  function renderPlayer() {
    var inserted = !!S.player;
    body.setAttribute("data-player", inserted ? "in" : "out");
    show($("card-form"), !inserted);
    show($("player-view"), inserted);
    if (!inserted) { return; }
    $("player-number").textContent = S.player.number;
    var balance = $("balance");
    balance.textContent = money(S.player.balance);
    balance.setAttribute("data-balance", S.player.balance === null ? "" : String(S.player.balance));
    $("cashout").disabled = !(fmt.cents(S.player.balance || "0") > 0);
  }

  function renderBuy() {
    var sizes = S.spec ? S.spec.purchase_sizes : [];
    var price = S.selling ? S.selling.card_price : (S.spec ? S.spec.card_price : null);
    $("sizes").className = "t-sizes" + (S.selling ? "" : " is-idle");
    fill($("sizes"), sizes.map(function (size) {
      return el("button", {type: "button", class: "t-size" + (size === S.size ? " is-on" : ""),
        "data-size": String(size), "aria-pressed": size === S.size ? "true" : "false", text: String(size),
        onclick: function () { S.size = size; renderBuy(); }});
    }));
    var what;
    if (!S.selling) { what = gettext("No game on sale right now: the next one opens shortly."); }
    else {
      what = interpolate(gettext("Game %(number)s · %(price)s a card"),
        {number: S.selling.number, price: money(price)}, true);
    }
    $("buy-what").textContent = what;
    var total = S.size && price ? fmt.decimal(fmt.cents(price) * S.size) : null;
    $("buy-total").textContent = total ? interpolate(gettext("Total %(amount)s"), {amount: money(total)}, true) : "";
    var button = $("buy");
    button.textContent = S.size ? interpolate(ngettext("Buy %(count)s card", "Buy %(count)s cards", S.size),
      {count: S.size}, true) : gettext("Buy");
    enableBuy();
  }

  function enableBuy() {
    var button = $("buy");
    var playable = !S.terminal || (S.terminal.state === "in_service" && S.terminal.active !== false);
    var open = S.selling && new Date(S.selling.sales_close_at).getTime() > now();
    var checking = S.reality && S.reality.due !== null && S.reality.due !== undefined;
    button.disabled = !(S.player && open && S.size && playable) || checking || button.getAttribute("data-busy") === "1";
  }

  function describePrize(p) {
    if (p.accumulated) {
      var meter = meterOf(p.code);
      return meter ? interpolate(gettext("Accumulated: %(amount)s"), {amount: money(meter.amount)}, true)
        : gettext("Accumulated");
    }
    if (p.percent !== null && p.percent !== undefined) {
      return interpolate(gettext("%(percent)s per cent of the game's sales"), {percent: fmt.number(Number(p.percent))}, true);
    }
    if (p.fixed !== null && p.fixed !== undefined) { return money(p.fixed); }
    return "";
  }

  function figure(p) {
    var layout = S.spec.layout;
    var mask = {};
    (p.masks[0] || []).forEach(function (c) { mask[c] = true; });
    var cells = [];
    for (var c = 0; c < layout.rows * layout.columns; c += 1) {
      cells.push(el("span", {class: "t-fig__c" + (mask[c] ? " is-on" : "")}));
    }
    var node = el("div", {class: "t-fig", "aria-hidden": "true"}, cells);
    node.style.setProperty("--cols", String(layout.columns));
    return node;
  }

  function renderPrizeTable() {
    if (!S.spec) { fill($("prize-table")); return; }
    fill($("prize-table"), S.spec.prizes.filter(function (p) { return !p.network; }).map(function (p) {
      var lines = [];
      var maxBall = p.max_ball;
      if (S.drawing) {
        S.drawing.prizes.forEach(function (q) { if (q.code === p.code && q.max_ball) { maxBall = q.max_ball; } });
      }
      if (maxBall) { lines.push(interpolate(gettext("Won up to ball %(ball)s"), {ball: maxBall}, true)); }
      if (p.info) { lines.push(p.info); }
      return el("div", {class: "t-prize", "data-code": p.code}, figure(p),
        el("div", {class: "t-prize__text"},
          el("div", {class: "t-prize__name", text: p.name}),
          el("div", {class: "t-prize__amount", text: describePrize(p)}),
          lines.map(function (line) { return el("div", {class: "t-prize__info", text: line}); })));
    }));
  }

  function ballCount(game) { return Array.isArray(game.balls) ? game.balls.length : game.balls; }

  function renderLastGames() {
    var games = S.lastGames;
    fill($("last-games"), games.length ? games.map(function (g) {
      return el("div", {class: "t-game", "data-game": String(g.game)},
        el("div", {class: "t-game__head"},
          el("strong", {text: interpolate(gettext("Game %(number)s"), {number: g.number}, true)}),
          el("span", {text: interpolate(ngettext("%(count)s ball", "%(count)s balls", ballCount(g)), {count: ballCount(g)}, true)})),
        el("div", {class: "t-game__prizes"}, (g.prizes || []).map(function (p) {
          return el("span", {class: "t-game__prize", text: interpolate(
            ngettext("%(name)s %(amount)s at ball %(ball)s (%(count)s winner)",
              "%(name)s %(amount)s at ball %(ball)s (%(count)s winners)", p.winners),
            {name: p.name, amount: money(p.amount), ball: p.ordinal, count: p.winners}, true)});
        })));
    }) : el("p", {class: "t-empty", text: gettext("No game played yet.")}));
  }

  // --- the prize alert ---------------------------------------------------------------------------------------

  function nextAlert() {
    if (alertTimer || !alerts.length) { return; }
    var prize = alerts.shift();
    $("alert-title").textContent = interpolate(gettext("%(prize)s!"), {prize: prize.name}, true);
    $("alert-amount").textContent = "+" + money(prize.amount);
    $("alert-detail").textContent = interpolate(gettext("Card #%(card)s · ball %(ball)s · new balance %(balance)s"),
      {card: prize.card, ball: prize.ordinal, balance: money(prize.balance)}, true);
    $("alert").hidden = false;
    alertTimer = global.setTimeout(closeAlert, ALERT_MS);
  }

  function closeAlert() {
    global.clearTimeout(alertTimer);
    alertTimer = null;
    $("alert").hidden = true;
    nextAlert();
  }

  // --- what the player does --------------------------------------------------------------------------------

  function insertCard(event) {
    event.preventDefault();
    var typed = $("card-input").value.trim();
    if (!typed) { return; }
    var button = $("card-insert");
    button.disabled = true;
    call("POST", "card/", {card: typed}).then(function (data) {
      var card = data.card && typeof data.card === "object" ? data.card : data;
      S.player = {number: card.number || data.number || typed, state: card.state || "active",
        balance: data.balance !== undefined ? data.balance : card.balance};
      global.sessionStorage.setItem(CARD_KEY, S.player.number);
      setReality(data.reality || null);
      if (!$("pane-limits").hidden) { loadLimits(); }
      $("card-input").value = "";
      message($("player-msg"), "");
      render();
      stream.resync();  // the snapshot with the card: its cards in play
    }).catch(function (err) {
      message($("player-msg"), err.message, "error");
    }).then(function () { button.disabled = false; });
  }

  function ejectCard() {
    if (S.player) {
      // The card's play session here ends (the next insertion begins another); a lost answer changes nothing.
      call("POST", "card/out/", {card: S.player.number}).catch(function (err) { console.warn("card out", err.code); });
    }
    setReality(null);
    S.limits = null;
    renderLimits();
    S.player = null;
    S.cards = {};
    global.sessionStorage.removeItem(CARD_KEY);
    buyIntent.done();
    message($("buy-msg"), "");
    render();
    $("card-input").focus();
  }

  function buy() {
    if (!S.player || !S.selling || !S.size) { return; }
    var button = $("buy");
    var order = {card: S.player.number, cards: S.size, game: S.selling.game};
    // The same purchase tapped again after an unanswered try keeps its key (a retry is a no-op on the server).
    order.key = buyIntent.keyFor(order);
    button.setAttribute("data-busy", "1");
    button.disabled = true;
    var number = S.selling.number;
    viaSocket(order).then(function (data) {
      buyIntent.done();
      if (data.cards) { addCards(data.game || order.game, data.cards); }
      if (data.balance !== undefined && S.player) { S.player.balance = data.balance; }
      var count = data.cards ? data.cards.length : order.cards;
      message($("buy-msg"), interpolate(ngettext("%(count)s card bought for game %(number)s.",
        "%(count)s cards bought for game %(number)s.", count), {count: count, number: number}, true), "ok");
    }).catch(function (err) {
      if (err.status !== 0) { buyIntent.done(); }
      message($("buy-msg"), err.message, "error");
      if (err.code === "reality_check_due") { loadReality(); }
    }).then(function () {
      button.removeAttribute("data-busy");
      render();
    });
  }

  /* A purchase over the terminal's socket (answered by a frame with its key: the HTTP door's body or error),
     or over the HTTP door when the socket is not open. An unanswered frame is a network error: the same
     tap sends it again under the same key (a retry writes nothing). */
  function viaSocket(order) {
    var frame = {type: "purchase", key: order.key, card: order.card, cards: order.cards, game: order.game,
      lang: document.documentElement.lang || "es"};
    return stream.request(frame, BUY_ANSWER_MS).then(function (answer) {
      if (answer.status < 300) { return answer.result || {}; }
      var error = answer.error || {};
      throw new ApiError(answer.status, error.code || "http_" + answer.status, error.message ||
        interpolate(gettext("The server answered %(status)s."), {status: answer.status}, true));
    }, function (err) {
      if (err && err.message === "socket not open") { return call("POST", "purchase/", order); }
      throw new ApiError(0, "network", gettext("The server cannot be reached: try again in a moment."));
    });
  }

  function cashOut() {
    if (!S.player) { return; }
    var button = $("cashout");
    button.disabled = true;
    // One message, one seq: a retry of an unanswered cash-out sends the same seq (the same ticket).
    cashoutSeq = cashoutSeq || Date.now();
    call("POST", "cashout/", {card: S.player.number, seq: cashoutSeq}).then(function (data) {
      cashoutSeq = null;
      $("ticket-amount").textContent = money(data.amount);
      $("ticket-number").textContent = typeof data.ticket === "string" ? data.ticket : (data.ticket || {}).number || "";
      $("ticket").hidden = false;
      if (data.balance !== undefined) { S.player.balance = data.balance; } else { S.player.balance = "0.00"; }
      render();
    }).catch(function (err) {
      if (err.status !== 0) { cashoutSeq = null; }
      message($("player-msg"), err.message, "error");
      render();
    });
  }

  // --- the reality check ----------------------------------------------------------------------------------
  // Every N minutes of a card's session (the server's setting) the page shows the time played and the money
  // staked, won and net since the card went in; the player acknowledges it before buying again (the server
  // refuses a purchase while it waits: reality_check_due).

  function setReality(reality) {
    S.reality = reality;
    showReality();
  }

  function realityDueNow() {
    var r = S.reality;
    if (!r) { return false; }
    if (r.due !== null && r.due !== undefined) { return true; }
    return !!r.next_at && new Date(r.next_at).getTime() <= now();
  }

  function playedText(seconds) {
    var minutes = Math.floor(Math.max(0, seconds) / 60);
    return interpolate(gettext("%(hours)s h %(minutes)s min"),
      {hours: Math.floor(minutes / 60), minutes: ("0" + (minutes % 60)).slice(-2)}, true);
  }

  function showReality() {
    var r = S.reality;
    var on = !!(S.player && r && r.due !== null && r.due !== undefined);
    $("reality").hidden = !on;
    if (on) {
      $("reality-lead").textContent = interpolate(
        gettext("You have been playing for %(played)s since you put your card in."),
        {played: playedText(r.played_seconds)}, true);
      $("reality-played").textContent = playedText(r.played_seconds);
      $("reality-staked").textContent = money(r.staked);
      $("reality-won").textContent = money(r.won);
      $("reality-net").textContent = money(r.net);
      $("reality").setAttribute("data-check", String(r.due));
    }
    enableBuy();
  }

  var realityBusy = false;

  /* The session's figures and the check due, read from the server (a check shows the server's numbers). */
  function loadReality() {
    if (!S.player || realityBusy) { return; }
    realityBusy = true;
    call("POST", "reality/", {card: S.player.number}).then(setReality, function (err) {
      if (err.code === "no_play_session") { setReality(null); }
    }).then(function () { realityBusy = false; });
  }

  function tickReality() {
    var r = S.reality;
    if (S.player && r && (r.due === null || r.due === undefined) && realityDueNow()) { loadReality(); }
  }

  function acknowledgeReality() {
    var r = S.reality;
    if (!S.player || !r || r.due === null || r.due === undefined) { return; }
    var button = $("reality-ok");
    button.disabled = true;
    call("POST", "reality/ack/", {card: S.player.number, check: r.due}).then(function (data) {
      message($("reality-msg"), "");
      setReality(data);
    }).catch(function (err) {
      message($("reality-msg"), err.message, "error");
    }).then(function () { button.disabled = false; render(); });
  }

  // --- the player's limits ---------------------------------------------------------------------------------
  // The inserted card's loss and spend limits (its player's): lowered at once, raised or removed after the
  // cooling-off (the server decides; a second raise while one waits is refused with its reason).

  function loadLimits() {
    if (!S.player) { S.limits = null; renderLimits(); return; }
    call("POST", "limits/", {card: S.player.number}).then(function (data) {
      S.limits = data.limits || [];
      renderLimits();
    }).catch(function (err) { message($("limit-msg"), err.message, "error"); });
  }

  function when(iso) { return fmt.date(iso) + " " + fmt.clock(iso); }

  function capital(text) { return text ? text.charAt(0).toUpperCase() + text.slice(1) : ""; }

  function limitLine(limit) {
    var lines = [];
    if (limit.amount !== null) {
      lines.push(el("span", {class: "t-limit__left", text: interpolate(gettext("%(left)s left until %(resets)s"),
        {left: money(limit.left), resets: when(limit.resets_at)}, true)}));
    }
    if (limit.pending) {
      lines.push(el("span", {class: "t-limit__pending", text: limit.pending_amount === null
        ? interpolate(gettext("No limit from %(when)s"), {when: when(limit.pending_from)}, true)
        : interpolate(gettext("%(amount)s from %(when)s"),
          {amount: money(limit.pending_amount), when: when(limit.pending_from)}, true)}));
    }
    return el("div", {class: "t-limit", "data-limit": limit.kind + ":" + limit.period},
      el("span", {class: "t-limit__name", text: capital(limit.name)}),
      el("span", {class: "t-limit__amount", text: limit.amount === null ? gettext("No limit") : money(limit.amount)}),
      lines);
  }

  function renderLimits() {
    var limits = S.player && S.limits ? S.limits : null;
    $("limits-what").hidden = !!limits;
    $("limit-form").hidden = !limits;
    fill($("limits"), limits ? limits.map(limitLine) : []);
    var select = $("limit-which");
    if (limits && select.options.length !== limits.length) {
      fill(select, limits.map(function (limit) {
        return el("option", {value: limit.kind + ":" + limit.period, text: capital(limit.name)});
      }));
    }
  }

  function setLimit(event) {
    event.preventDefault();
    if (!S.player) { return; }
    var which = $("limit-which").value.split(":");
    var typed = fmt.readAmount($("limit-amount").value, false);
    if (typed.problem) { message($("limit-msg"), typed.problem, "error"); return; }
    var button = $("limit-save");
    button.disabled = true;
    call("POST", "limits/set/", {card: S.player.number, kind: which[0], period: which[1], amount: typed.amount || null})
      .then(function (data) {
        S.limits = data.limits || S.limits;
        renderLimits();
        $("limit-amount").value = "";
        var limit = data.limit;
        message($("limit-msg"), limit.pending && data.outcome !== "at_once"
          ? interpolate(gettext("The change applies from %(when)s."), {when: when(limit.pending_from)}, true)
          : gettext("Limit saved: it applies now."), "ok");
      })
      .catch(function (err) { message($("limit-msg"), err.message, "error"); })
      .then(function () { button.disabled = false; });
  }

  function selectTab(name) {
    Array.prototype.forEach.call(doc.querySelectorAll(".t-tab"), function (tab) {
      var on = tab.getAttribute("data-tab") === name;
      tab.className = "t-tab" + (on ? " is-on" : "");
      tab.setAttribute("aria-selected", on ? "true" : "false");
      $("pane-" + tab.getAttribute("data-tab")).hidden = !on;
    });
    if (name === "limits") { loadLimits(); }
  }

  // --- start ------------------------------------------------------------------------------------------------

  /* The server refused the device token (a wrong or rotated token, a retired device): say so; the stream
     keeps trying slowly, and the page comes back by itself once the terminal is given a valid token. */
  function refused() {
    $("setup-why").textContent = gettext("The server refused this terminal's token.");
    $("setup").hidden = false;
    $("app").hidden = true;
  }

  function admitted() {
    $("setup-why").textContent = "";
    $("setup").hidden = true;
    $("app").hidden = false;
  }

  function start() {
    S.creds = readCredentials();
    if (!S.creds) {
      $("setup").hidden = false;
      $("app").hidden = true;
      return;
    }
    var kept = global.sessionStorage.getItem(CARD_KEY);
    if (kept) { S.player = {number: kept, state: "active", balance: null}; }
    $("card-form").addEventListener("submit", insertCard);
    $("eject").addEventListener("click", ejectCard);
    $("buy").addEventListener("click", buy);
    $("cashout").addEventListener("click", cashOut);
    $("ticket-ok").addEventListener("click", function () { $("ticket").hidden = true; });
    $("reality-ok").addEventListener("click", acknowledgeReality);
    $("limit-form").addEventListener("submit", setLimit);
    $("reality-stop").addEventListener("click", function () { $("reality").hidden = true; ejectCard(); });
    $("alert").addEventListener("click", closeAlert);
    Array.prototype.forEach.call(doc.querySelectorAll(".t-tab"), function (tab) {
      tab.addEventListener("click", function () { selectTab(tab.getAttribute("data-tab")); });
    });
    var scheme = global.location.protocol === "https:" ? "wss://" : "ws://";
    stream = new global.TerminalStream({
      socketUrl: scheme + global.location.host + SOCKET + "?device=" + encodeURIComponent(S.creds.device) +
        "&token=" + encodeURIComponent(S.creds.token) +
        // Its first frame the speciality's snapshot (issue 30), in the page's language (as its API calls').
        "&snapshot=1&lang=" + encodeURIComponent(doc.documentElement.lang || "es"),
      loadSnapshot: loadSnapshot,
      onSnapshot: function (snapshot) { admitted(); applySnapshot(snapshot); },
      onEvent: onEvent,
      onRefused: refused
    });
    global.TerminalPage = {state: S, stream: stream};
    render();
    hello();
    stream.start();
    global.setInterval(tickSales, 1000);
    global.setInterval(tickReality, 1000);
    global.setInterval(hello, HELLO_EVERY_MS);
  }

  start();
})(window);
