/*
 * The till: the cashier page's frame. The header (the till, the cashier, the shift's state and its running
 * totals), the tabs (Shift, Sales, Player cards, Tickets, Prizes) and what the panels share: the venue, the
 * cashier's open shift (GET /api/cashier/shifts/current/), typed amounts, idempotency keys, the API paths.
 *
 * Each panel (till_shift.js, till_cards.js, till_tickets.js, till_prizes.js, bingo's cashier.js) registers
 * itself:  HallTill.panel("cards", {shift: fn(shift), show: fn(), poll: fn()})
 *   shift(shift)  the open shift changed (null: none)
 *   show()        its tab was opened
 *   poll()        every few seconds while its tab is open (and the page visible)
 * and calls HallTill.changed() after an operation that moves money: the header's totals reload.
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

  var POLL_MS = 3000;          // without the venue's stream
  var LIVE_POLL_MS = 20000;    // with it: only to catch a lost event
  var TABS = ["shift", "sales", "cards", "tickets", "prizes"];
  var BASE = "/api/cashier/";

  var venues = JSON.parse($("till-venues").textContent || "[]");
  var panels = {};
  var state = {
    venue: venues.length ? venues[0] : null,
    shift: null,          // the cashier's open shift (the API's), or null
    loaded: false,        // the first answer about the shift has come
    tab: null
  };

  /* --- the API's paths, in one place ---------------------------------------------------------------- */

  var paths = {
    tills: function (venue) { return BASE + "tills/?venue=" + venue; },
    current: function (venue) { return BASE + "shifts/current/?venue=" + venue; },
    lastClosed: function (venue) { return BASE + "shifts/last-closed/?venue=" + venue; },
    shiftTickets: function (id) { return BASE + "shifts/" + id + "/tickets/"; },
    shifts: function () { return BASE + "shifts/"; },
    shift: function (id) { return BASE + "shifts/" + id + "/"; },
    close: function (id) { return BASE + "shifts/" + id + "/close/"; },
    report: function (id) { return "/cashier/shifts/" + id + "/report/"; },
    printReport: function (id) { return BASE + "shifts/" + id + "/report/print/"; }
  };

  function venueQuery(url) {
    return url + (url.indexOf("?") < 0 ? "?" : "&") + "venue=" + (state.venue ? state.venue.id : "");
  }

  /* --- figures -------------------------------------------------------------------------------------- */

  function money(amount) {
    return fmt.money(amount, state.venue ? state.venue.currency : "EUR");
  }

  /*
   * The amount typed in `input` (a comma or a point) as the API's "12.50", or null after saying what is
   * wrong in `box`. `optional`: an empty field is "" (the form decides), not an error.
   */
  function amount(input, box, optional) {
    var typed = input.value.trim();
    if (!typed && optional) { return ""; }
    var read = fmt.readAmount(typed, true);
    if (!read.amount) {
      ui.report(box, {code: "bad_amount", message: read.problem});
      input.focus();
      input.select();
      return null;
    }
    return read.amount;
  }

  /* The number in what a scanner typed: a card's QR code may carry a URL or "card:<number>". */
  function scanned(text) {
    var value = String(text || "").trim();
    var slash = value.replace(/\/+$/, "").split("/");
    value = slash[slash.length - 1];
    var colon = value.lastIndexOf(":");
    if (colon >= 0) { value = value.slice(colon + 1); }
    var query = value.indexOf("=");
    if (query >= 0) { value = value.slice(query + 1); }
    return value.trim();
  }

  function when(iso) {
    if (!iso) { return ""; }
    var date = new Date(iso);
    if (isNaN(date.getTime())) { return String(iso); }
    var today = new Date();
    var sameDay = date.toDateString() === today.toDateString();
    return sameDay ? fmt.time(iso) : date.toLocaleDateString(fmt.language) + " " + fmt.time(iso);
  }

  function means(code) {
    return {cash: gettext("Cash"), bank_card: gettext("Bank card"), player_card: gettext("Player card"),
      card: gettext("Player card"), ticket: gettext("Ticket")}[code] || code;
  }

  /* --- printing ------------------------------------------------------------------------------------ */

  /*
   * Print a document at the till (POST `url`): a till with an ESC/POS printer answers JSON (sent to the
   * printer); one without answers the PDF, opened in a new tab to print from the browser. `done(text)`
   * gets what to tell the person; refusals go to `box`. `label`: the button's text while it works.
   */
  function printDocument(url, button, box, body, label) {
    var headers = {"Accept": "application/pdf, application/json", "Content-Type": "application/json",
      "X-CSRFToken": (doc.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/) || [])[1] ||
        (doc.querySelector('meta[name="csrf-token"]') || {getAttribute: function () { return ""; }}).getAttribute("content")};
    return ui.busy(button, function () {
      return global.fetch(url, {method: "POST", headers: headers, credentials: "same-origin", cache: "no-store",
        body: JSON.stringify(body || {})}).then(function (response) {
        var type = response.headers.get("Content-Type") || "";
        if (response.ok && type.indexOf("application/pdf") === 0) {
          return response.blob().then(function (blob) {
            var link = global.URL.createObjectURL(blob);
            return {medium: "pdf", link: link, opened: !!global.open(link, "_blank")};
          });
        }
        return response.text().then(function (text) {
          var data = null;
          try { data = text ? JSON.parse(text) : null; } catch (err) { data = null; }
          if (response.ok) { return data || {medium: "printer"}; }
          var error = data && data.error ? data.error : {};
          throw new api.ApiError(response.status, error.code || "http_" + response.status,
            error.message || interpolate(gettext("The server answered %(status)s %(reason)s."),
              {status: response.status, reason: response.statusText}, true));
        });
      }, function () {
        throw new api.ApiError(0, "network", gettext("The server cannot be reached: check the connection and try again."));
      });
    }, label).then(function (result) {
      ui.report(box, result.medium === "pdf" ? gettext("Opened as a PDF in a new tab: print it from there.")
        : gettext("Sent to the till's printer."), "ok");
      if (result.link) {   // a pop-up blocker may have stopped the tab: the PDF stays one click away
        box.insertBefore(el("a", {href: result.link, target: "_blank", class: "msg__link", text: gettext("Open the PDF")}),
          box.querySelector(".msg__close"));
      }
      return result;
    }, function (err) { ui.report(box, err); throw err; });
  }

  /* --- the header ----------------------------------------------------------------------------------- */

  function expectedOf(shift, code) {
    var expected = (shift && shift.expected) || {};
    return expected[code] === undefined ? null : expected[code];
  }

  /* The shift's operations per kind, as the API counts them: [{kind, kind_label, count, amount}] (the
     opening float and the cash-up are not operations a cashier counts). */
  var NOT_COUNTED = {float: true, cash_up: true, over_short: true};

  function countsOf(shift) {
    return ((shift && shift.totals) || []).filter(function (t) { return t.count && !NOT_COUNTED[t.kind]; });
  }

  function renderHead() {
    var shift = state.shift;
    $("head-till").textContent = shift ? shift.till_name || shift.till : "—";
    var badge = $("head-state");
    if (!state.loaded) {
      badge.textContent = gettext("Loading…");
      badge.className = "badge";
      badge.setAttribute("data-state", "loading");
    } else if (shift) {
      badge.textContent = gettext("Shift open");
      badge.className = "badge badge--ok";
      badge.setAttribute("data-state", "open");
    } else {
      badge.textContent = gettext("No open shift");
      badge.className = "badge badge--bad";
      badge.setAttribute("data-state", "none");
    }
    $("head-since").textContent = shift && shift.opened_at
      ? interpolate(gettext("since %(time)s"), {time: when(shift.opened_at)}, true) : "";
    $("head-cash").textContent = shift ? money(expectedOf(shift, "cash")) : "—";
    $("head-bank").textContent = shift ? money(expectedOf(shift, "bank_card")) : "—";
    var parts = countsOf(shift).map(function (t) {
      return el("span", {class: "till-count", "data-kind": t.kind}, t.kind_label + " ", el("strong", {text: t.count}));
    });
    fill($("head-counts"), parts.length ? parts : el("span", {class: "muted",
      text: shift ? gettext("No operation yet") : "—"}));
    doc.body.setAttribute("data-shift", shift ? "open" : "none");
    TABS.forEach(function (name) {
      if (name !== "shift") { $("tab-" + name).classList.toggle("is-locked", !shift); }
    });
  }

  function renderVenues() {
    var select = $("head-venue");
    if (venues.length < 2) { select.hidden = true; return; }
    select.hidden = false;
    fill(select, venues.map(function (v) {
      return el("option", {value: v.id, selected: state.venue && v.id === state.venue.id, text: v.name});
    }));
  }

  /* --- the shift ------------------------------------------------------------------------------------ */

  var loading = null;

  function refresh() {
    if (!state.venue) { return Promise.resolve(null); }
    if (loading) { return loading; }
    var venue = state.venue.id;
    loading = api.get(paths.current(venue)).then(function (shift) {
      return shift && shift.id ? shift : null;
    }, function (err) {
      if (err.status === 404 || err.code === "no_open_shift") { return null; }
      throw err;
    }).then(function (shift) {
      loading = null;
      $("till-poll").className = "console-poll is-ok";
      if (!state.venue || state.venue.id !== venue) { return state.shift; }
      var changed = !state.loaded || (state.shift ? state.shift.id : null) !== (shift ? shift.id : null);
      state.shift = shift;
      state.loaded = true;
      renderHead();
      Object.keys(panels).forEach(function (name) {
        if (panels[name].shift) {
          try { panels[name].shift(shift, changed); } catch (err) { console.error(err); }
        }
      });
      if (changed && state.tab === null) { showTab(initialTab()); }
      return shift;
    }, function (err) {
      loading = null;
      $("till-poll").className = "console-poll is-failing";
      ui.report($("page-msg"), err);
      return state.shift;
    });
    return loading;
  }

  /* An operation moved money: the header's totals (and the panels' views of the shift) reload. */
  function changed() { return refresh(); }

  /* --- tabs ----------------------------------------------------------------------------------------- */

  function initialTab() {
    var hash = (global.location.hash || "").replace("#", "");
    if (TABS.indexOf(hash) >= 0) { return hash; }
    return state.shift ? "sales" : "shift";
  }

  /* Open a tab; `remember`: a person chose it, so a reload comes back to it (the address's #tab). */
  function showTab(name, remember) {
    if (TABS.indexOf(name) < 0) { name = "shift"; }
    state.tab = name;
    TABS.forEach(function (t) {
      var on = t === name;
      $("panel-" + t).hidden = !on;
      var tab = $("tab-" + t);
      tab.classList.toggle("is-current", on);
      tab.setAttribute("aria-selected", on ? "true" : "false");
    });
    if (remember && global.history && global.history.replaceState) {
      global.history.replaceState(null, "", "#" + name);
    }
    var panel = panels[name];
    if (panel && panel.show) {
      try { panel.show(); } catch (err) { console.error(err); }
    }
  }

  /* --- the venue's cashier stream ---------------------------------------------------------------------
   * ws/cashier/venues/<id>/ forwards the venue's till events (a prize waiting or paid, a shift opened or
   * closed, a ticket). An event only says "something changed": the panels reload over HTTP. A lost event
   * is caught by the slow poll; a closed socket reconnects with backoff while the page polls fast. */

  var socket = null;
  var socketVenue = null;
  var attempt = 0;
  var live = false;

  function connect() {
    if (!state.venue || !global.WebSocket) { return; }
    var venue = state.venue.id;
    var scheme = global.location.protocol === "https:" ? "wss://" : "ws://";
    var ws;
    try {
      ws = new global.WebSocket(scheme + global.location.host + "/ws/cashier/venues/" + venue + "/");
    } catch (err) {
      reconnect();
      return;
    }
    socket = ws;
    socketVenue = venue;
    ws.onopen = function () {
      if (ws !== socket) { return; }
      attempt = 0;
      live = true;
      doc.body.setAttribute("data-till-stream", "live");
      poll();   // whatever happened while the socket was down
    };
    ws.onmessage = function (message) {
      if (ws !== socket) { return; }
      var event;
      try { event = JSON.parse(message.data); } catch (err) { return; }
      if (!event || typeof event.type !== "string") { return; }
      refresh();
      Object.keys(panels).forEach(function (name) {
        if (panels[name].event) {
          try { panels[name].event(event); } catch (err) { console.error(err); }
        }
      });
    };
    ws.onclose = function () {
      if (ws !== socket) { return; }
      socket = null;
      live = false;
      doc.body.setAttribute("data-till-stream", "offline");
      reconnect();
    };
    ws.onerror = function () { /* onclose follows */ };
  }

  function reconnect() {
    var ceiling = Math.min(15000, 500 * Math.pow(2, attempt));
    attempt += 1;
    global.setTimeout(connect, ceiling / 2 + Math.random() * ceiling / 2);
  }

  function followVenue() {
    if (socket && socketVenue !== (state.venue && state.venue.id)) {
      var old = socket;
      socket = null;
      old.close();
    }
    if (!socket) { connect(); }
  }

  /* --- the frame ------------------------------------------------------------------------------------ */

  function panel(name, hooks) { panels[name] = hooks; }

  var lastPoll = 0;

  function poll() {
    if (doc.hidden) { return; }
    lastPoll = Date.now();
    refresh();
    var current = panels[state.tab];
    if (current && current.poll) {
      try { current.poll(); } catch (err) { console.error(err); }
    }
    Object.keys(panels).forEach(function (name) {
      if (name !== state.tab && panels[name].background) {
        try { panels[name].background(); } catch (err) { console.error(err); }
      }
    });
  }

  function start() {
    renderVenues();
    renderHead();
    if (!state.venue) {
      ui.report($("page-msg"), gettext("You have the cashier role in no venue."), "info");
      return;
    }
    $("till-tabs").addEventListener("click", function (event) {
      var tab = event.target.closest("[data-tab]");
      if (tab) { showTab(tab.getAttribute("data-tab"), true); }
    });
    $("head-venue").addEventListener("change", function (event) {
      var id = Number(event.currentTarget.value);
      venues.forEach(function (v) { if (v.id === id) { state.venue = v; } });
      state.loaded = false;
      state.shift = null;
      refresh();
      followVenue();
    });
    global.addEventListener("hashchange", function () {
      var hash = (global.location.hash || "").replace("#", "");
      if (TABS.indexOf(hash) >= 0 && hash !== state.tab) { showTab(hash); }
    });
    refresh().then(function () {
      if (state.tab === null) { showTab(initialTab()); }
    });
    connect();
    global.setInterval(function () {
      if (Date.now() - lastPoll >= (live ? LIVE_POLL_MS : POLL_MS) - 100) { poll(); }
    }, POLL_MS);
  }

  global.HallTill = {
    state: state,
    paths: paths,
    panel: panel,
    refresh: refresh,
    changed: changed,
    showTab: showTab,
    money: money,
    amount: amount,
    scanned: scanned,
    when: when,
    means: means,
    venueQuery: venueQuery,
    printDocument: printDocument,
    expectedOf: expectedOf,
    base: BASE
  };

  doc.addEventListener("DOMContentLoaded", start);
})(window);
