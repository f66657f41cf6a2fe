/*
 * The till's Shift panel: open a shift on a till with a counted float; close it with the cash-up (counted
 * per means, the difference against what the ledger expects, a witness who signs a difference, a note);
 * the shift report, to read and to print.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var $ = global.HallUi.byId;  // a write control left out for a read-only user: a detached stand-in
  var ui = global.HallUi;
  var fmt = global.HallFormat;
  var api = global.HallApi;
  var till = global.HallTill;
  var el = ui.el;
  var fill = ui.fill;

  var MEANS = ["cash", "bank_card"];
  var tills = null;
  var closed = null;      // the cashier's last closed shift (its cash-up and report), from the server
  var lastAsked = null;   // the venue whose last closed shift was asked for

  function loadTills() {
    var venue = till.state.venue;
    if (!venue) { return Promise.resolve(); }
    return api.get(till.paths.tills(venue.id)).then(function (list) {
      tills = (list.results || list).filter(function (t) { return t.active !== false; });
      renderTills();
    }, function (err) { ui.report($("open-msg"), err); });
  }

  function renderTills() {
    var select = $("open-till");
    var keep = select.value;
    if (!tills || !tills.length) {
      fill(select, el("option", {value: "", text: tills ? gettext("No till in service") : gettext("Loading…")}));
      return;
    }
    fill(select, tills.map(function (t) {
      var busy = t.open_shift;
      return el("option", {value: t.id, selected: String(t.id) === keep, disabled: !!busy && !keep,
        text: t.name + (busy ? " · " + interpolate(gettext("in use by %(cashier)s"),
          {cashier: t.open_shift_cashier}, true) : "")});
    }));
  }

  function facts(box, rows) {
    fill(box, rows.filter(function (r) { return r && r[1] !== undefined && r[1] !== null && r[1] !== ""; })
      .map(function (r) {
        return [el("dt", {text: r[0]}), el("dd", {text: r[1], "data-fact": r[2] || null})];
      }).reduce(function (all, pair) { return all.concat(pair); }, []));
  }

  /* --- the open shift ------------------------------------------------------------------------------- */

  function onShift(shift) {
    $("open-card").hidden = !!shift;
    $("shift-card").hidden = !shift;
    $("close-card").hidden = !shift;
    $("closed-card").hidden = !closed;
    if (!shift) {
      if (tills === null) { loadTills(); }
      loadLastClosed();
      return;
    }
    $("shift-title").textContent = interpolate(gettext("Shift at %(till)s"), {till: shift.till_name || shift.till}, true);
    $("shift-state").textContent = gettext("Open");
    facts($("shift-facts"), [
      [gettext("Opened at"), till.when(shift.opened_at), "opened"],
      [gettext("Float"), till.money(shift.float), "float"],
      [gettext("Cashier"), shift.cashier, "cashier"]
    ]);
    fill($("shift-expected").querySelector("tbody"), MEANS.map(function (code) {
      return el("tr", {"data-means": code}, el("td", {text: till.means(code)}),
        el("td", {class: "num", text: till.money(till.expectedOf(shift, code))}));
    }));
    $("shift-report-link").href = shift.report_url || till.paths.report(shift.id);
    preview();
  }

  /* counted − expected per means, as typed so far. */
  function differences() {
    var shift = till.state.shift;
    var out = {total: 0, complete: true, per: {}};
    [["cash", "close-cash"], ["bank_card", "close-bank"]].forEach(function (pair) {
      var typed = fmt.parseAmount($(pair[1]).value);
      if (typed === null) { out.complete = false; return; }
      var diff = fmt.cents(typed) - fmt.cents(till.expectedOf(shift, pair[0]) || "0");
      out.per[pair[0]] = diff;
      out.total += diff;
    });
    return out;
  }

  function preview() {
    var box = $("close-diff");
    if (!till.state.shift) { fill(box); return; }
    var d = differences();
    if (!d.complete) {
      fill(box, el("span", {class: "muted", text: gettext("Count each means: the difference shows here.")}));
      $("close-witness-box").classList.remove("is-needed");
      return;
    }
    var sign = d.total > 0 ? "+" : "";
    var text = d.total === 0 ? gettext("The count matches what the till expects.")
      : interpolate(d.total > 0 ? gettext("Over by %(amount)s: a witness signs the difference.")
        : gettext("Short by %(amount)s: a witness signs the difference."),
      {amount: till.money(fmt.decimal(Math.abs(d.total)))}, true);
    fill(box, el("strong", {class: d.total === 0 ? "is-even" : "is-off", "data-difference": sign + fmt.decimal(d.total),
      text: text}));
    $("close-witness-box").classList.toggle("is-needed", d.total !== 0);
  }

  function openShift(form) {
    var box = $("open-msg");
    var float = till.amount($("open-float"), box);
    if (float === null) { return; }
    // A retry of the same opening (same till, same float) answers 200 with the shift: no key needed.
    var body = {till: Number($("open-till").value), float: float};
    ui.busy(form.querySelector("button[type=submit]"), function () { return api.post(till.paths.shifts(), body); })
      .then(function (response) {
        closed = null;
        $("open-float").value = "";
        ui.report(box, null);
        ui.report($("page-msg"), interpolate(gettext("Shift open at %(till)s with a float of %(amount)s."),
          {till: response.data.till_name || response.data.till, amount: till.money(float)}, true), "ok");
        till.changed();
      }, function (err) {
        ui.report(box, err);
        loadTills();
      });
  }

  function closeShift(form) {
    var shift = till.state.shift;
    if (!shift) { return; }
    var box = $("close-msg");
    var cash = till.amount($("close-cash"), box);
    if (cash === null) { return; }
    var bank = till.amount($("close-bank"), box);
    if (bank === null) { return; }
    var body = {counted: {cash: cash, bank_card: bank}, note: $("close-note").value.trim()};
    var witness = $("close-witness").value.trim();
    if (witness) { body.witness = {username: witness, password: $("close-witness-password").value}; }
    // Closing is once by nature: a retry of a closed shift answers shift_closed.
    ui.busy(form.querySelector("button[type=submit]"), function () { return api.post(till.paths.close(shift.id), body); })
      .then(function (response) {
        closed = response.data;
        ui.report($("page-msg"), null);
        ["close-cash", "close-bank", "close-witness", "close-witness-password", "close-note"].forEach(function (id) {
          $(id).value = "";
        });
        ui.report(box, null);
        renderClosed();
        till.changed();
      }, function (err) {
        ui.report(box, err);
        if (err.code === "witness_required" || err.code === "bad_witness") { $("close-witness").focus(); }
      });
  }

  /* --- the shift just closed ------------------------------------------------------------------------ */

  /* No open shift: the cashier's last closed shift, its cash-up and its report (asked once per venue, so
     a reload of the page after closing still offers the report to print). */
  function loadLastClosed() {
    var venue = till.state.venue;
    if (closed && venue && closed.venue !== venue.id) { closed = null; renderClosed(); }
    if (!venue || closed || lastAsked === venue.id) { return; }
    lastAsked = venue.id;
    api.get(till.paths.lastClosed(venue.id)).then(function (shift) {
      if (till.state.shift || !till.state.venue || till.state.venue.id !== venue.id) { return; }
      closed = shift;
      renderClosed();
    }, function (err) {
      if (err.status !== 404) { ui.report($("page-msg"), err); }   // the closed card stays hidden
    });
  }

  function renderClosed() {
    var shift = closed;
    $("closed-card").hidden = !shift;
    if (!shift) { return; }
    var diff = shift.difference;
    $("closed-state").textContent = gettext("Cash-up done");
    facts($("closed-facts"), [
      [gettext("Till"), shift.till_name || shift.till, "till"],
      [gettext("Opened at"), till.when(shift.opened_at), "opened"],
      [gettext("Closed at"), till.when(shift.closed_at), "closed"],
      [gettext("Difference"), till.money(diff), "difference"],
      [gettext("Witness"), shift.witness, "witness"],
      [gettext("Note"), shift.note, "note"]
    ]);
    var expected = shift.expected || {};
    var counted = shift.counted || {};
    var differences = shift.differences || {};
    fill($("closed-table").querySelector("tbody"), MEANS.map(function (code) {
      var d = fmt.cents(differences[code] || "0");
      return el("tr", {"data-means": code}, el("td", {text: till.means(code)}),
        el("td", {class: "num", text: till.money(expected[code])}),
        el("td", {class: "num", text: till.money(counted[code])}),
        el("td", {class: "num" + (d ? " is-off" : ""), text: till.money(fmt.decimal(d))}));
    }));
    $("closed-report-link").href = shift.report_url || till.paths.report(shift.id);
  }

  function printReport(shift, button, box) {
    if (!shift) { return; }
    till.printDocument(till.paths.printReport(shift.id), button, box, {}, gettext("Printing…")).catch(function () {});
  }

  function wire() {
    $("open-form").addEventListener("submit", function (event) {
      event.preventDefault();
      openShift(event.currentTarget);
    });
    $("close-form").addEventListener("submit", function (event) {
      event.preventDefault();
      closeShift(event.currentTarget);
    });
    $("close-form").addEventListener("input", preview);
    $("closed-print").addEventListener("click", function (event) {
      printReport(closed, event.currentTarget, $("closed-msg"));
    });
    $("shift-print").addEventListener("click", function (event) {
      printReport(till.state.shift, event.currentTarget, $("shift-msg"));
    });
  }

  wire();
  till.panel("shift", {
    shift: onShift,
    show: function () { if (!till.state.shift) { loadTills(); } }
  });
})(window);
