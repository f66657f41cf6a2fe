/*
 * The till's Player cards panel: find a card (its QR code scanned, or its number typed), its balance and
 * history; cash-in (cash or bank card), cash-out, block a lost card; issue a new card, anonymous or to the
 * person showing their document (found by it at the door's API, /api/venues/<venue>/players/cards/: where the
 * venue's cards need it, only a player admitted today gets one; the number is cleared once sent).
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var $ = global.HallUi.byId;  // a write control left out for a read-only user: a detached stand-in
  var ui = global.HallUi;
  var api = global.HallApi;
  var till = global.HallTill;
  var el = ui.el;
  var fill = ui.fill;

  // /api/cashier/venues/<venue>/cards/<number or "TJ:<number>">/...
  function venueCards() { return till.base + "venues/" + till.state.venue.id + "/cards/"; }
  function cardPath(number, tail) { return venueCards() + encodeURIComponent(number) + "/" + (tail || ""); }
  var paths = {
    cards: venueCards,
    history: function (number) { return cardPath(number, "history/"); },
    cashIn: function (number) { return cardPath(number, "cash-in/"); },
    cashOut: function (number) { return cardPath(number, "cash-out/"); },
    block: function (number) { return cardPath(number, "block/"); },
    print: function (number) { return cardPath(number, "print/"); }
  };
  var intents = {cashin: new ui.KeyedIntent("cashin"), cashout: new ui.KeyedIntent("cashout")};
  var card = null;

  function show(data) {
    card = data;
    $("card-view").hidden = !card;
    if (!card) { return; }
    $("card-title").textContent = interpolate(gettext("Card %(number)s"), {number: card.printed || card.number}, true);
    var badge = $("card-state");
    var blocked = card.state === "blocked";
    badge.textContent = blocked ? gettext("Blocked") : gettext("Active");
    badge.className = "badge " + (blocked ? "badge--bad" : "badge--ok");
    $("card-balance").textContent = till.money(card.balance);
    $("card-balance").setAttribute("data-balance", card.balance);
    ["cashin-form", "cashout-form", "block-form"].forEach(function (id) {
      Array.prototype.forEach.call($(id).elements, function (field) { field.disabled = blocked; });
    });
    var history = card.entries || [];
    fill($("card-history").querySelector("tbody"), history.length ? history.map(function (h) {
      return el("tr", {"data-kind": h.kind}, el("td", {text: till.when(h.at)}),
        el("td", {text: h.kind_label + (h.memo ? " · " + h.memo : "")}),
        el("td", {class: "num" + (String(h.amount).charAt(0) === "-" ? " is-off" : ""), text: till.money(h.amount)}),
        el("td", {class: "num", text: till.money(h.balance)}),
        el("td", {text: h.by + (h.device ? " · " + h.device : "")}));
    }) : el("tr", null, el("td", {colspan: 5, class: "empty", text: gettext("No movement yet.")})));
  }

  /* The card and its moves, newest first (GET .../history/ answers both). */
  function load(number, box) {
    if (!number) { return Promise.resolve(); }
    return api.get(paths.history(number)).then(function (data) {
      var found = data.card;
      found.entries = data.entries;
      show(found);
    }, function (err) {
      show(null);
      ui.report(box || $("card-msg"), err);
    });
  }

  function lookUp(form) {
    var box = $("card-msg");
    var input = $("card-number");
    var number = till.scanned(input.value).replace(/[\s-]/g, "");
    input.value = number;
    ui.report(box, null);
    ui.report($("card-op-msg"), null);
    ui.busy(form.querySelector("button[type=submit]"), function () { return load(number, box); });
  }

  function personCards() { return "/api/venues/" + till.state.venue.id + "/players/cards/"; }

  function issue(button, shown) {
    var box = $("card-msg");
    var body = shown || {};
    var url = shown ? personCards() : paths.cards();
    ui.busy(button, function () { return api.post(url, body); }).then(function (response) {
      $("card-number").value = response.data.number;
      ui.report(box, interpolate(gettext("New card %(number)s: hand it over, then cash in."),
        {number: response.data.printed || response.data.number}, true), "ok");
      show(response.data);
      $("cashin-amount").focus();
    }, function (err) {
      ui.report(box, err);
    });
  }

  function operate(form, kind, identification) {
    if (!card) { return; }
    var box = $("card-op-msg");
    var body = {};
    var url;
    if (kind === "cashin") {
      body.amount = till.amount($("cashin-amount"), box);
      if (body.amount === null) { return; }
      body.means = form.querySelector("input[name=cashin-means]:checked").value;
      url = paths.cashIn(card.number);
    } else if (kind === "cashout") {
      body.amount = till.amount($("cashout-amount"), box, true);
      if (body.amount === null) { return; }
      if (body.amount === "") { body.amount = null; }   // the whole balance
      if (identification) { body.identification = identification; }  // the bearer's, at the cage (AML)
      url = paths.cashOut(card.number);
    } else {
      body.reason = $("block-reason").value.trim();
      url = paths.block(card.number);
    }
    if (intents[kind]) { body.idempotency_key = intents[kind].keyFor([card.number, body]); }
    var number = card.number;
    var label = {cashin: gettext("Cashing in…"), cashout: gettext("Paying…")}[kind];
    ui.busy(form.querySelector("button[type=submit]"), function () { return api.post(url, body); }, label)
      .then(function (response) {
        if (intents[kind]) { intents[kind].done(); }
        global.HallIdentify.clear(box);
        var amount = till.money(response.data && response.data.amount ? response.data.amount : body.amount);
        var text = kind === "cashin"
          ? interpolate(gettext("%(amount)s in on card %(number)s (%(means)s)."),
            {amount: amount, number: number, means: till.means(body.means)}, true)
          : kind === "cashout"
            ? interpolate(gettext("Pay %(amount)s in cash: card %(number)s paid out."), {amount: amount, number: number}, true)
            : interpolate(gettext("Card %(number)s is blocked."), {number: number}, true);
        if (response.status === 200 && kind !== "block") {
          text = interpolate(gettext("Already recorded (a repeat of the same operation): %(what)s"), {what: text}, true);
        }
        ui.report(box, text, "ok");
        form.reset();
        load(number, box);
        till.changed();
      }, function (err) {
        if (intents[kind] && err.status >= 400 && err.status < 500) { intents[kind].done(); }
        ui.report(box, err);
        if (kind === "cashout") {  // at or above the AML threshold: identify the bearer, then pay naming them
          global.HallIdentify.offer(box, err, till.state.venue.id, function (id) { operate(form, kind, id); });
        }
      });
  }

  function wire() {
    $("card-lookup-form").addEventListener("submit", function (event) {
      event.preventDefault();
      lookUp(event.currentTarget);
    });
    $("card-new").addEventListener("click", function (event) { issue(event.currentTarget); });
    $("card-person-form").addEventListener("submit", function (event) {
      event.preventDefault();
      var number = $("person-number");
      var shown = {kind: $("person-kind").value, number: number.value, country: $("person-country").value};
      number.value = "";  // the document number stays on no screen
      issue(event.currentTarget.querySelector("button[type=submit]"), shown);
    });
    $("card-print").addEventListener("click", function (event) {
      if (!card) { return; }
      var shift = till.state.shift;
      till.printDocument(paths.print(card.number), event.currentTarget, $("card-op-msg"),
        shift ? {till: shift.till} : {}).catch(function () {});
    });
    $("cashin-form").addEventListener("submit", function (event) {
      event.preventDefault();
      operate(event.currentTarget, "cashin");
    });
    $("cashout-form").addEventListener("submit", function (event) {
      event.preventDefault();
      operate(event.currentTarget, "cashout");
    });
    $("block-form").addEventListener("submit", function (event) {
      event.preventDefault();
      operate(event.currentTarget, "block");
    });
  }

  wire();
  till.panel("cards", {
    show: function () { if (!card) { $("card-number").focus(); } },
    poll: function () { if (card) { load(card.number, $("card-op-msg")); } }
  });
})(window);
