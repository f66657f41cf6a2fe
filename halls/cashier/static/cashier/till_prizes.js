/*
 * The till's Prizes panel: the prizes waiting at the cashier (Line, Bingo, accumulated prizes, table and
 * machine hand pays), kept fresh while the page is open; pay one in cash, onto a player card or as a
 * ticket, once whatever the clicks or retries; its receipt. A prize at or above the anti-money-laundering
 * threshold (identification_required) waits for the winner's identification: its pay form asks for the
 * document, full name, date of birth, nationality and the scan's reference (cage/identify.js), identifies
 * the winner at the cage and pays naming that identification. Below the threshold the cashier may identify
 * the winner all the same ("Identify the winner"): the payout then counts towards the person's window.
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

  // /api/cashier/venues/<venue>/payables/...
  function venuePayables() { return till.base + "venues/" + till.state.venue.id + "/payables/"; }
  var paths = {
    waiting: function () { return venuePayables() + "?state=waiting"; },
    pay: function (id) { return venuePayables() + id + "/pay/"; },
    receipt: function (id) { return venuePayables() + id + "/receipt/"; }
  };
  var identified = {};     // payable id -> the identification made for its winner (kept across retries)
  var KINDS = {
    line: function () { return gettext("Line"); },
    bingo: function () { return gettext("Bingo"); },
    accumulated: function () { return gettext("Accumulated prize"); },
    table: function () { return gettext("Table jackpot"); },
    machine: function () { return gettext("Machine hand pay"); }
  };
  var intents = {};        // payable id -> KeyedIntent
  var waiting = null;
  var paid = [];           // paid from this page: {payable, method, receipt_url, at}
  var open = null;         // the payable whose pay form is open
  var loading = false;

  function kindOf(p) { return p.kind_label || (KINDS[p.kind] ? KINDS[p.kind]() : p.kind); }

  /* Print a paid prize's receipt at the till (its printer, or a PDF in a tab). */
  function printReceipt(id, button) {
    var shift = till.state.shift;
    return till.printDocument(paths.receipt(id), button, $("receipt-msg"), shift ? {till: shift.till} : {})
      .catch(function () {});
  }

  function load() {
    if (loading || !till.state.venue) { return Promise.resolve(); }
    loading = true;
    return api.get(paths.waiting()).then(function (list) {
      loading = false;
      waiting = list.results || list;
      render();
    }, function (err) {
      loading = false;
      ui.report($("payables-msg"), err);
    });
  }

  function count() {
    var badge = $("prizes-count");
    var n = waiting ? waiting.length : 0;
    badge.hidden = !n;
    badge.textContent = String(n);
    $("payables-count").textContent = waiting
      ? interpolate(ngettext("%(count)s prize waiting", "%(count)s prizes waiting", n), {count: n}, true) : "";
  }

  /* The winner's identification made for a prize at or above the AML threshold (kept across retries). */
  function identification(p, form) {
    if (identified[p.id]) { return Promise.resolve(identified[p.id]); }
    return global.HallIdentify.identify(till.state.venue.id, form.querySelector("[data-identify]"))
      .then(function (id) {
        identified[p.id] = id;
        return id;
      });
  }

  /* Below the threshold: a switch that shows the identification's fields (their inputs required once shown). */
  function optionalIdentification(p) {
    var set = null;
    var toggle = el("input", {type: "checkbox", "data-identify-optional": p.id});
    var holder = el("div", {class: "till-identify-optional"},
      el("label", {class: "check"}, toggle, " " + gettext("Identify the winner")));
    toggle.addEventListener("change", function () {
      if (toggle.checked) {
        set = global.HallIdentify.fields(p.id);
        holder.appendChild(set);
      } else if (set) {
        holder.removeChild(set);
        set = null;
        delete identified[p.id];
      }
    });
    return holder;
  }

  function payForm(p) {
    var box = el("div", {class: "msg", hidden: true, id: "pay-msg-" + p.id});
    var card = el("input", {type: "text", class: "scan card-no", id: "pay-card-" + p.id, autocomplete: "off",
      placeholder: gettext("Player card number")});
    card.hidden = true;
    var radios = ["cash", "player_card", "ticket"].map(function (m, i) {
      return el("label", null, el("input", {type: "radio", name: "pay-method-" + p.id, value: m, checked: i === 0}),
        " " + till.means(m));
    });
    var form = el("form", {class: "till-pay", "data-pay": p.id, autocomplete: "off"},
      p.identification_required ? global.HallIdentify.fields(p.id) : optionalIdentification(p),
      el("div", {class: "segmented", role: "radiogroup"}, radios), card,
      el("button", {type: "submit", class: "btn-go", text: interpolate(gettext("Pay %(amount)s"),
        {amount: till.money(p.amount)}, true)}),
      el("button", {type: "button", class: "btn-ghost", text: gettext("Cancel"),
        onclick: function () { open = null; render(); }}));
    form.addEventListener("input", function (event) {
      // Another person typed: the identification made for the previous one is not theirs.
      if (event.target.closest && event.target.closest("[data-identify]")) { delete identified[p.id]; }
    });
    form.addEventListener("change", function () {
      card.hidden = form.querySelector("input[type=radio]:checked").value !== "player_card";
      if (!card.hidden) { card.focus(); }
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      pay(p, form, card, box);
    });
    return el("div", {"data-pay-box": p.id}, form, box);
  }

  /*
   * The rows and the counts (the tab's badge, the table's head) come from one answer, `waiting`, and are
   * drawn together: the list is redrawn on every load, even while a pay form is open (that form, with what
   * was chosen and typed in it, moves into the new row), so the count never runs ahead of the rows.
   */
  function render() {
    var body = $("payables-table").querySelector("tbody");
    if (!waiting) { return; }
    if (open !== null && !waiting.some(function (p) { return p.id === open; })) { open = null; }
    count();
    var openForm = open === null ? null : body.querySelector("[data-pay-box='" + open + "']");
    if (!waiting.length) {
      fill(body, el("tr", null, el("td", {colspan: 5, class: "empty", text: gettext("No prize is waiting.")})));
    } else {
      fill(body, waiting.map(function (p) {
        return el("tr", {"data-payable": p.id, class: p.id === open ? "is-open" : null},
          el("td", {text: till.when(p.awarded_at)}),
          el("td", null, el("span", {class: "badge badge--prize", text: kindOf(p)}),
            p.identification_required ? el("span", {class: "badge badge--identify", "data-needs-id": p.id,
              text: gettext("Waits for the winner's identification")}) : null),
          el("td", {text: p.description}),
          el("td", {class: "num till-prize", text: till.money(p.amount)}),
          el("td", {class: "till-pay-cell"}, !canWrite ? null : p.id === open ? openForm || payForm(p)
            : el("button", {type: "button", class: "btn-go", "data-open-pay": p.id, text: gettext("Pay"),
              onclick: function () { open = p.id; render(); }})));
      }));
    }
    var paidBody = $("paid-table").querySelector("tbody");
    fill(paidBody, paid.length ? paid.map(function (r) {
      return el("tr", {"data-paid": r.payable.id}, el("td", {text: till.when(r.at)}),
        el("td", {text: r.payable.description}), el("td", {text: till.means(r.method)}),
        el("td", {class: "num", text: till.money(r.payable.amount)}),
        el("td", null, !canWrite ? el("span", {class: "muted", "data-receipt": r.receipt, text: r.receipt})
          : el("button", {type: "button", class: "btn-ghost btn-small receipt-print", "data-receipt": r.receipt,
            text: interpolate(gettext("Receipt %(number)s"), {number: r.receipt}, true),
            onclick: function (event) { printReceipt(r.payable.id, event.currentTarget); }})));
    }) : el("tr", null, el("td", {colspan: 5, class: "empty", text: gettext("Nothing paid yet.")})));
  }

  function pay(p, form, cardInput, box) {
    var method = form.querySelector("input[type=radio]:checked").value;
    var body = {method: method};
    if (method === "player_card") { body.card = till.scanned(cardInput.value).replace(/[\s-]/g, ""); }
    intents[p.id] = intents[p.id] || new ui.KeyedIntent("pay");
    body.idempotency_key = intents[p.id].keyFor(body);
    function send() {
      if (!form.querySelector("[data-identify]")) { return api.post(paths.pay(p.id), body); }
      return identification(p, form).then(function (id) {
        body.identification = id;
        return api.post(paths.pay(p.id), body);
      });
    }
    ui.busy(form.querySelector("button[type=submit]"), send, gettext("Paying…"))
      .then(function (response) {
        delete intents[p.id];
        delete identified[p.id];
        var payable = response.data;
        paid.unshift({payable: {id: p.id, description: p.description, amount: p.amount}, method: payable.method,
          receipt: payable.receipt, at: payable.paid_at});
        open = null;
        waiting = waiting.filter(function (w) { return w.id !== p.id; });
        var values = {amount: till.money(p.amount), what: p.description, ticket: payable.ticket, card: body.card};
        var text = interpolate(method === "cash" ? gettext("Paid %(amount)s in cash: %(what)s.")
          : method === "ticket" ? gettext("Paid %(amount)s as ticket %(ticket)s: %(what)s.")
            : gettext("Paid %(amount)s onto card %(card)s: %(what)s."), values, true);
        if (response.status === 200) {
          text = interpolate(gettext("Already recorded (a repeat of the same operation): %(what)s"), {what: text}, true);
        }
        ui.report($("payables-msg"), text, "ok");
        render();
        till.changed();
        load();
        printReceipt(p.id, null);   // the winner's receipt, at once
      }, function (err) {
        if (err.status >= 400 && err.status < 500) { delete intents[p.id]; }
        ui.report(box, err);
      });
  }

  till.panel("prizes", {
    show: load,
    poll: load,
    background: load,
    // A prize awarded or paid (at this till or another): the list reloads.
    event: function (event) { if (event.type.indexOf("payable.") === 0) { load(); } }
  });
})(window);
