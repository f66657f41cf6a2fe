/*
 * The till's Tickets panel: issue a ticket for cash (or a bank card) or from a player card's balance;
 * find one by its validation number (typed, or a barcode scanner's keystrokes ending in Enter) and redeem
 * it once, into cash or a player card; print or reprint it.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var $ = global.HallUi.byId;  // a write control left out for a read-only user: a detached stand-in
  var canWrite = global.HallUi.canWrite("till");
  var ui = global.HallUi;
  var api = global.HallApi;
  var till = global.HallTill;
  var el = ui.el;
  var fill = ui.fill;

  // /api/cashier/venues/<venue>/tickets/<validation number>/...
  function venueTickets() { return till.base + "venues/" + till.state.venue.id + "/tickets/"; }
  function ticketPath(number, tail) { return venueTickets() + encodeURIComponent(number) + "/" + (tail || ""); }
  var paths = {
    tickets: venueTickets,
    ticket: function (number) { return ticketPath(number); },
    redeem: function (number) { return ticketPath(number, "redeem/"); },
    print: function (number) { return ticketPath(number, "print/"); }
  };
  var EVENTS = {
    issued: function () { return gettext("Issued"); },
    printed: function () { return gettext("Printed"); },
    reprinted: function () { return gettext("Reprinted"); },
    redeemed: function () { return gettext("Redeemed"); },
    refused: function () { return gettext("Redemption refused"); },
    expired: function () { return gettext("Expired"); }
  };
  var intents = {issue: new ui.KeyedIntent("ticket"), redeem: new ui.KeyedIntent("redeem")};
  var ticket = null;
  var recent = [];     // the tickets of the open shift, from the server (a reload keeps them): newest first
  var recentShift = null;

  var STATES = {
    issued: function () { return gettext("Valid"); },
    redeemed: function () { return gettext("Redeemed"); },
    expired: function () { return gettext("Expired"); }
  };

  /* What a row of the shift's tickets says: issued (for what) or redeemed (into what). */
  function what(row) {
    if (row.kind === "redeemed") {
      return row.means === "card" ? gettext("Redeemed into a card") : gettext("Redeemed for cash");
    }
    return row.means === "card" ? gettext("Issued from a card")
      : row.means === "prize" ? gettext("Issued for a prize") : gettext("Issued");
  }

  /* The open shift's tickets, issued and redeemed at this till (GET .../shifts/<id>/tickets/). */
  function loadRecent() {
    var shift = till.state.shift;
    recentShift = shift ? shift.id : null;
    if (!shift) {
      recent = [];
      renderRecent();
      return Promise.resolve();
    }
    return api.get(till.paths.shiftTickets(shift.id)).then(function (rows) {
      if (recentShift !== shift.id) { return; }
      recent = rows;
      renderRecent();
    }, function (err) { ui.report($("ticket-msg"), err); });
  }

  function printButton(number) {
    if (!canWrite) { return null; }
    return el("button", {type: "button", class: "btn-ghost btn-small", "data-print": number,
      text: gettext("Print"), onclick: function (event) { print(number, event.currentTarget); }});
  }

  function renderRecent() {
    var body = $("ticket-recent").querySelector("tbody");
    if (!recent.length) {
      fill(body, el("tr", null, el("td", {colspan: 5, class: "empty", text: gettext("No ticket yet.")})));
      return;
    }
    fill(body, recent.map(function (r) {
      return el("tr", {"data-ticket": r.number, "data-kind": r.kind}, el("td", {text: till.when(r.at)}),
        el("td", {class: "mono", text: r.number}), el("td", {text: what(r)}),
        el("td", {class: "num", text: till.money(r.amount)}), el("td", null, printButton(r.number)));
    }));
  }

  /* What an event's detail says to a person: a refusal's message, where the money came from or went. */
  function detail(d) {
    if (!d) { return ""; }
    if (typeof d === "string") { return d; }
    if (d.message) { return d.message; }
    var how = d.into || d.funded_by || "";
    if (how === "drawer" && d.account) { how = String(d.account).split(":").pop(); }   // "drawer:<shift>:cash"
    var means = how === "card" ? till.means("player_card") : how ? till.means(how) : "";
    return [means, d.card].filter(Boolean).join(" ");
  }

  function showTicket(data) {
    ticket = data;
    $("ticket-view").hidden = !ticket;
    if (!ticket) { return; }
    $("ticket-view-number").textContent = ticket.printed || ticket.number;
    $("ticket-view-amount").textContent = till.money(ticket.amount);
    var badge = $("ticket-view-state");
    badge.textContent = STATES[ticket.state] ? STATES[ticket.state]() : ticket.state;
    badge.className = "badge " + (ticket.state === "issued" ? "badge--ok" : "badge--bad");
    var facts = [[gettext("Issued"), till.when(ticket.issued_at)], [gettext("Issued by"), ticket.issued_by],
      [gettext("Expires"), till.when(ticket.expires_at)]];
    if (ticket.closed_at) { facts.push([STATES[ticket.state] ? STATES[ticket.state]() : ticket.state, till.when(ticket.closed_at)]); }
    fill($("ticket-view-facts"), facts.filter(function (f) { return f[1]; }).map(function (f) {
      return [el("dt", {text: f[0]}), el("dd", {text: f[1]})];
    }).reduce(function (all, pair) { return all.concat(pair); }, []));
    // Its life, oldest first: issued, printed, redeemed, a refusal and why...
    fill($("ticket-life"), (ticket.events || []).map(function (e) {
      return el("li", {"data-event": e.kind}, el("span", {class: "muted", text: till.when(e.at)}), " ",
        el("strong", {text: EVENTS[e.kind] ? EVENTS[e.kind]() : e.kind}),
        " · " + [e.actor, e.device, detail(e.detail)].filter(Boolean).join(" · "));
    }));
    $("ticket-redeem-form").hidden = ticket.state !== "issued";
  }

  function lookUp(form) {
    var box = $("ticket-msg");
    var input = $("ticket-number");
    var number = till.scanned(input.value).replace(/[\s-]/g, "");
    input.value = number;
    ui.report(box, null);
    ui.report($("ticket-redeem-msg"), null);
    ui.busy(form.querySelector("button[type=submit]"), function () { return api.get(paths.ticket(number)); })
      .then(function (data) { showTicket(data); }, function (err) {
        showTicket(null);
        ui.report(box, err);
        input.select();
      });
  }

  function toggleCardField(form, name, field) {
    var checked = form.querySelector("input[name=" + name + "]:checked");
    $(field).hidden = !checked || checked.value !== "card";
  }

  function issue(form) {
    var box = $("ticket-issue-msg");
    var source = form.querySelector("input[name=ticket-source]:checked").value;
    // From a card, an empty amount is the card's whole balance.
    var amount = till.amount($("ticket-amount"), box, source === "card");
    if (amount === null) { return; }
    var body = {funded_by: source};
    if (amount !== "") { body.amount = amount; }
    if (source === "card") { body.card = till.scanned($("ticket-card").value).replace(/[\s-]/g, ""); }
    body.idempotency_key = intents.issue.keyFor(body);
    ui.busy(form.querySelector("button[type=submit]"), function () { return api.post(paths.tickets(), body); },
      gettext("Issuing…"))
      .then(function (response) {
        intents.issue.done();
        var t = response.data;
        ui.report(box, interpolate(gettext("Ticket %(number)s issued for %(amount)s."),
          {number: t.printed || t.number, amount: till.money(t.amount)}, true), "ok");
        form.reset();
        toggleCardField(form, "ticket-source", "ticket-card-field");
        loadRecent();
        till.changed();
      }, function (err) {
        if (err.status >= 400 && err.status < 500) { intents.issue.done(); }
        ui.report(box, err);
      });
  }

  function redeem(form, identification) {
    if (!ticket) { return; }
    var box = $("ticket-redeem-msg");
    var to = form.querySelector("input[name=redeem-to]:checked").value;
    var body = {into: to};
    if (identification) { body.identification = identification; }  // the bearer's, at the cage (AML)
    if (to === "card") { body.card = till.scanned($("redeem-card").value).replace(/[\s-]/g, ""); }
    body.idempotency_key = intents.redeem.keyFor([ticket.number, body]);
    var number = ticket.number;
    ui.busy(form.querySelector("button[type=submit]"), function () { return api.post(paths.redeem(number), body); },
      gettext("Redeeming…"))
      .then(function (response) {
        intents.redeem.done();
        global.HallIdentify.clear(box);
        var t = response.data;
        var amount = t.amount;
        ui.report(box, to === "card"
          ? interpolate(gettext("Ticket %(number)s redeemed: %(amount)s onto card %(card)s."),
            {number: t.printed || number, amount: till.money(amount), card: body.card}, true)
          : interpolate(gettext("Ticket %(number)s redeemed: pay %(amount)s in cash."),
            {number: t.printed || number, amount: till.money(amount)}, true), "ok");
        loadRecent();
        showTicket(t);
        till.changed();
      }, function (err) {
        if (err.status >= 400 && err.status < 500) { intents.redeem.done(); }
        ui.report(box, err);
        // In cash at or above the AML threshold: identify the bearer, then redeem again naming them.
        global.HallIdentify.offer(box, err, till.state.venue.id, function (id) { redeem(form, id); });
      });
  }

  function print(number, button) {
    var shift = till.state.shift;
    till.printDocument(paths.print(number), button, $("ticket-issue-msg"), shift ? {till: shift.till} : {})
      .catch(function () {});
  }

  function wire() {
    var issueForm = $("ticket-issue-form");
    issueForm.addEventListener("submit", function (event) {
      event.preventDefault();
      issue(issueForm);
    });
    issueForm.addEventListener("change", function () { toggleCardField(issueForm, "ticket-source", "ticket-card-field"); });
    $("ticket-lookup-form").addEventListener("submit", function (event) {
      event.preventDefault();
      lookUp(event.currentTarget);
    });
    var redeemForm = $("ticket-redeem-form");
    redeemForm.addEventListener("submit", function (event) {
      event.preventDefault();
      redeem(redeemForm);
    });
    redeemForm.addEventListener("change", function () { toggleCardField(redeemForm, "redeem-to", "redeem-card-field"); });
  }

  wire();
  till.panel("tickets", {
    shift: function (shift, changed) { if (changed || (shift ? shift.id : null) !== recentShift) { loadRecent(); } },
    show: function () { loadRecent(); $("ticket-number").focus(); }
  });
})(window);
