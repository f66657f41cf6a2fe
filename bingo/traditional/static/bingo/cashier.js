/*
 * The till's Sales panel: pick the game on sale in one of your rooms, sell or return "from no. X to no. Y"
 * of a series, and follow the operations and totals. Each operation carries an idempotency key that stays
 * the same until the server has answered, so a double click or a retry after a lost answer never sells
 * twice. The money goes into the drawer of the cashier's open shift (no shift: the API refuses, and the
 * refusal shows next to the form); the till's header (halls/cashier/static/cashier/till.js) then reloads.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var $ = global.HallUi.byId;  // a write control left out for a read-only user: a detached stand-in
  var ui = global.HallUi;
  var fmt = global.HallFormat;
  var api = global.HallApi;
  var el = ui.el;
  var fill = ui.fill;

  var GAMES_MS = 3000;
  var SALES_MS = 2000;

  var rooms = JSON.parse($("cashier-rooms").textContent || "[]");
  var roomsById = {};
  rooms.forEach(function (r) { roomsById[r.id] = r; });

  var games = [];              // games on sale in my rooms
  var gameId = null;           // the selected one
  var seriesByVenue = {};      // venue id -> [series]
  var sales = null;            // GET /api/games/{id}/sales/
  var loadingSales = false;
  var intents = {sell: new ui.KeyedIntent("sell"), return: new ui.KeyedIntent("return"),
    table: new ui.KeyedIntent("table")};

  function selected() {
    for (var i = 0; i < games.length; i += 1) { if (games[i].id === gameId) { return games[i]; } }
    return null;
  }
  function roomOf(game) {
    return roomsById[game.room] || {name: interpolate(gettext("room %(id)s"), {id: game.room}, true), currency: "EUR"};
  }
  function money(amount) {
    var game = selected();
    return fmt.money(amount, game ? roomOf(game).currency : "EUR");
  }
  function gameName(room, game) {
    return interpolate(gettext("%(room)s · game %(number)s"), {room: room.name, number: game.number}, true);
  }
  function cardsText(count) {
    return interpolate(ngettext("%(count)s card", "%(count)s cards", count), {count: count}, true);
  }
  function seriesOf(game) { return game ? seriesByVenue[roomOf(game).venue] || [] : []; }
  function findSeries(code) {
    var list = seriesOf(selected());
    for (var i = 0; i < list.length; i += 1) { if (list[i].code === code) { return list[i]; } }
    return null;
  }

  /* --- games on sale -------------------------------------------------------------------------------- */

  function loadGames() {
    return api.get("/api/games/?state=on_sale").then(function (list) {
      games = list.filter(function (g) { return !!roomsById[g.room]; });
      $("poll-state").className = "console-poll is-ok";
      var previous = gameId;
      if (gameId !== null && !selected()) {
        ui.report($("sales-page-msg"), gettext("The sales of the game you had open are closed."), "info");
        gameId = null;
      }
      if (gameId === null && games.length) { gameId = games[0].id; }
      renderPicker();
      if (gameId !== previous) { onGameChanged(); }
      renderGame();
    }, function (err) {
      $("poll-state").className = "console-poll is-failing";
      ui.report($("sales-page-msg"), {message: interpolate(gettext("Live refresh failed: %(error)s"), {error: err.message}, true),
        code: err.code}, "error");
    });
  }

  function renderPicker() {
    var select = $("game-select");
    if (!games.length) {
      fill(select, el("option", {value: "", text: gettext("No game on sale")}));
      select.disabled = true;
      return;
    }
    select.disabled = false;
    fill(select, games.map(function (g) {
      var r = roomOf(g);
      return el("option", {value: g.id, selected: g.id === gameId,
        text: gameName(r, g) + (rooms.length && hasManyVenues() ? " · " + r.venue_name : "")});
    }));
  }

  function hasManyVenues() {
    var venues = {};
    rooms.forEach(function (r) { venues[r.venue] = true; });
    return Object.keys(venues).length > 1;
  }

  function onGameChanged() {
    sales = null;
    intents.sell.done();
    intents.return.done();
    ["sell", "return"].forEach(function (kind) { ui.report($(kind + "-msg"), null); });
    var game = selected();
    if (!game) { return; }
    var venue = roomOf(game).venue;
    if (!seriesByVenue[venue]) {
      api.get("/api/series/?venue=" + venue).then(function (list) {
        seriesByVenue[venue] = list;
        renderSeries();
      }, function (err) { ui.report($("sales-page-msg"), err); });
    }
    renderSeries();
    loadSales();
  }

  /* --- the selected game ---------------------------------------------------------------------------- */

  function loadSales() {
    var id = gameId;
    if (id === null || loadingSales) { return Promise.resolve(); }
    loadingSales = true;
    return api.get("/api/games/" + id + "/sales/").then(function (data) {
      loadingSales = false;
      if (id !== gameId) { return; }
      sales = data;
      renderGame();
    }, function (err) {
      loadingSales = false;
      if (id === gameId && err.status !== 404) { ui.report($("sales-page-msg"), err); }
    });
  }

  function renderSeries() {
    var list = seriesOf(selected());
    ["sell-series", "return-series", "table-series"].forEach(function (id) {
      var select = $(id);
      var keep = select.value;
      fill(select, list.map(function (s) {
        return el("option", {value: s.code, selected: s.code === keep,
          text: s.code + " · " + money(s.face_value)});
      }));
    });
    fill($("series-sold"), list.map(function (s) {
      return el("div", null, el("strong", {text: interpolate(gettext("Series %(code)s"), {code: s.code}, true)}),
        " · " + interpolate(gettext("%(price)s a card · cards 1–%(count)s"),
          {price: money(s.face_value), count: s.card_count}, true));
    }));
    preview("sell");
    preview("return");
  }

  function renderGame() {
    var game = selected();
    $("no-game").hidden = !!game;
    $("game-area").hidden = !game;
    if (!game) { return; }
    var r = roomOf(game);
    $("game-title").textContent = gameName(r, game);
    var badge = $("game-state");
    badge.textContent = gettext("On sale");
    badge.className = "badge badge--on_sale";
    $("total-cards").textContent = sales ? String(sales.cards_sold) : "…";
    $("total-amount").textContent = sales ? money(sales.sales_total) : "…";
    var body = $("ops-table").querySelector("tbody");
    var ops = sales ? sales.operations.slice().reverse() : [];
    $("ops-count").textContent = sales
      ? interpolate(ngettext("%(count)s operation", "%(count)s operations", ops.length), {count: ops.length}, true) : "";
    if (!ops.length) {
      fill(body, el("tr", null, el("td", {colspan: 8, class: "empty",
        text: sales ? gettext("Nothing sold yet.") : gettext("Loading…")})));
      return;
    }
    fill(body, ops.map(function (op) {
      var isReturn = op.kind === "return";
      return el("tr", {class: isReturn ? "is-return" : null, "data-op": op.id},
        el("td", {text: fmt.time(op.created_at)}),
        el("td", {text: isReturn ? gettext("Return") : gettext("Sale")}),
        el("td", {text: op.series}),
        el("td", {class: "num", text: op.first}),
        el("td", {class: "num", text: op.last}),
        el("td", {class: "num", text: (isReturn ? "−" : "") + op.cards}),
        el("td", {class: "num", text: (isReturn ? "−" : "") + money(op.amount)}),
        el("td", {text: op.cashier}));
    }));
  }

  /* --- sell and return ------------------------------------------------------------------------------ */

  function values(kind) {
    return {
      series: $(kind + "-series").value,
      first: Number($(kind + "-first").value),
      last: Number($(kind + "-last").value)
    };
  }

  function preview(kind) {
    var v = values(kind);
    var box = $(kind + "-preview");
    var series = findSeries(v.series);
    if (!series || !$(kind + "-first").value || !$(kind + "-last").value || v.last < v.first) {
      fill(box, v.last && v.first && v.last < v.first ? gettext("The range runs backwards.") : "");
      return;
    }
    var cards = v.last - v.first + 1;
    // In whole cents: 3 × 0.10 is 0.30, not a float's 0.30000000000000004.
    var total = fmt.decimal(cards * fmt.cents(series.face_value));
    fill(box, el("strong", {text: cardsText(cards)}),
      " × " + money(series.face_value) + " = ", el("strong", {text: money(total)}));
  }

  function submit(kind, form) {
    var game = selected();
    if (!game) { return; }
    var box = $(kind + "-msg");
    var v = values(kind);
    var id = game.id;
    var body = {series: v.series, first: v.first, last: v.last, idempotency_key: intents[kind].keyFor([id, v])};
    var url = "/api/games/" + id + "/" + (kind === "sell" ? "sales" : "returns") + "/";
    // While the server answers, the button says so ("Selling…") and stays disabled; a second submit then
    // (Enter in a field) is told to wait, never dropped silently. A retry after a lost answer keeps the
    // key: the server answers the first sale, it never sells twice.
    ui.busy(form.querySelector("button[type=submit]"), function () { return api.post(url, body); },
      kind === "sell" ? gettext("Selling…") : gettext("Returning…"))
      .then(function (response) {
        intents[kind].done();
        var op = response.data;
        var values = {series: op.series, first: op.first, last: op.last, cards: cardsText(op.cards),
          amount: money(op.amount)};
        var what = interpolate(kind === "sell"
          ? gettext("Sold series %(series)s no. %(first)s to %(last)s: %(cards)s, %(amount)s.")
          : gettext("Returned series %(series)s no. %(first)s to %(last)s: %(cards)s, %(amount)s."), values, true);
        if (response.status === 200) {
          what = interpolate(gettext("Already recorded (a repeat of the same operation): %(what)s"), {what: what}, true);
        }
        ui.report(box, what, "ok");
        $(kind + "-first").value = kind === "sell" ? String(op.last + 1) : "";
        $(kind + "-last").value = "";
        preview(kind);
        $(kind + "-last").focus();
        loadSales();
        global.HallTill.changed();
      }, function (err) {
        if (err.code === "busy") {
          stillWorking(kind);
          return;
        }
        if (err.status >= 400 && err.status < 500) { intents[kind].done(); }
        ui.report(box, err);
        loadSales();
        loadGames();
      });
  }

  /* A submit while the form's last one is still on its way: said next to the form, never dropped silently.
     (Enter in a field reaches no submit handler then: the browser ignores it while the button is
     disabled, so the form's keydown says it.) */
  function stillWorking(kind) {
    var text = kind === "sell" ? gettext("Still selling the previous range: wait for its answer.")
      : kind === "return" ? gettext("Still returning the previous range: wait for its answer.")
        : gettext("Still selling the previous cards: wait for their answer.");
    ui.report($(kind + "-msg"), text, "info");
  }

  function sayWhenBusy(kind, form) {
    form.addEventListener("keydown", function (event) {
      var button = form.querySelector("button[type=submit]");
      if (event.key === "Enter" && button && button.classList.contains("is-busy")) {
        event.preventDefault();
        stillWorking(kind);
      }
    });
  }

  /* --- print at the table: the next unsold cards of a series, sold and printed as one ticket (TB-23) ----- */

  function printAtTable(form) {
    var game = selected();
    if (!game) { return; }
    var v = {series: $("table-series").value, count: Number($("table-count").value)};
    var body = {series: v.series, count: v.count, idempotency_key: intents.table.keyFor([game.id, v])};
    global.HallTill.printDocument("/api/games/" + game.id + "/table-print/",
      form.querySelector("button[type=submit]"), $("table-msg"), body, gettext("Selling…"))
      .then(function () {
        intents.table.done();
        loadSales();
        global.HallTill.changed();
      }, function (err) {
        if (err.code === "busy") {
          stillWorking("table");
          return;
        }
        if (err.status >= 400 && err.status < 500) { intents.table.done(); }
        loadSales();
      });
  }

  function wire() {
    $("table-form").addEventListener("submit", function (event) {
      event.preventDefault();
      printAtTable(event.currentTarget);
    });
    sayWhenBusy("table", $("table-form"));
    $("game-select").addEventListener("change", function (event) {
      gameId = event.currentTarget.value ? Number(event.currentTarget.value) : null;
      onGameChanged();
      renderGame();
    });
    ["sell", "return"].forEach(function (kind) {
      var form = $(kind + "-form");
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        submit(kind, form);
      });
      sayWhenBusy(kind, form);
      form.addEventListener("input", function () { preview(kind); });
      form.addEventListener("change", function () { preview(kind); });
    });
  }

  wire();
  loadGames();
  // While the Sales tab is open: the games on sale and the selected game's sales, each at its own pace.
  var shown = function () { return !doc.hidden && !$("panel-sales").hidden; };
  global.setInterval(function () { if (shown()) { loadGames(); } }, GAMES_MS);
  global.setInterval(function () { if (shown()) { loadSales(); } }, SALES_MS);
  global.HallTill.panel("sales", {show: function () { loadGames(); loadSales(); }});
})(window);
