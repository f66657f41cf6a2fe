/*
 * The croupier's console of one casino table. Everything it shows comes from the REST API, refreshed every
 * second (GET /api/tables/{id}/: the pool meter, the pack's rules and the current hand); every button is one
 * API command whose refusal is shown with the server's code and message. The page decides nothing: the
 * server checks every bet, card and limit again.
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

  var root = $("table-console");
  var tableId = Number(root.getAttribute("data-table"));
  var currency = root.getAttribute("data-currency") || "EUR";
  var seats = Number(root.getAttribute("data-seats"));
  var POLL_MS = 1000;
  var CATEGORY = {
    royal_flush: gettext("Royal flush"), straight_flush: gettext("Straight flush"),
    four_of_a_kind: gettext("Four of a kind"), full_house: gettext("Full house"), flush: gettext("Flush"),
    straight: gettext("Straight"), three_of_a_kind: gettext("Three of a kind"), two_pair: gettext("Two pair"),
    pair: gettext("Pair"), high_card: gettext("High card"),
    three_sevens_same_suit: gettext("Three 7s, same suit"), three_sevens: gettext("Three 7s"),
    two_sevens_same_suit: gettext("Two 7s, same suit"), two_sevens: gettext("Two 7s"),
    first_card_seven: gettext("First card a 7")
  };
  var HAND_STATES = {open: gettext("open"), settled: gettext("settled"), void: gettext("void")};

  var table = null;
  var polling = false;
  var pollAgain = false;
  var version = 0;               // bumped by every accepted command: a poll started before may show the past
  var builtFor = "";             // the hand and registered seats the forms were built for
  var openIntent = new ui.KeyedIntent("hand");

  function money(amount) { return fmt.money(amount, currency); }

  /* A paytable's prize in the reader's language, with its currency when it is an amount (its English is
     row.prize, the API's). */
  function prizeText(row) {
    if (row.prize_kind === "percent") {
      return say(gettext("%(percent)s of the meter"), {percent: fmt.number(row.prize_value) + "\u00a0%"});
    }
    if (row.prize_kind === "multiple") { return say(gettext("%(multiple)s × the bet"), {multiple: fmt.number(row.prize_value)}); }
    if (row.prize_kind === "amount") { return money(row.prize_value); }
    return row.prize;
  }
  function say(text, values) { return interpolate(text, values, true); }
  function hand() { return table ? table.current_hand : null; }
  function isOpen() { return !!hand() && hand().state === "open"; }
  function category(c) { return CATEGORY[c] || (c ? c.replace(/_/g, " ") : ""); }
  function seatOf(seat) {
    var h = hand();
    var found = null;
    (h ? h.seats : []).forEach(function (s) { if (s.seat === seat) { found = s; } });
    return found;
  }

  /* --- polling -------------------------------------------------------------------------------------- */

  function refresh() {
    if (polling) {
      pollAgain = true;
      return Promise.resolve();
    }
    polling = true;
    var startedAt = version;
    return api.get("/api/tables/" + tableId + "/")
      .then(function (data) {
        if (startedAt !== version) {
          pollAgain = true;
          return;
        }
        table = data;
        $("poll-state").className = "console-poll is-ok";
        render();
      })
      .catch(function (err) {
        $("poll-state").className = "console-poll is-failing";
        ui.report($("page-msg"), {message: say(gettext("Live refresh failed: %(error)s"), {error: err.message}),
          code: err.code}, "error");
      })
      .then(function () {
        polling = false;
        if (pollAgain) {
          pollAgain = false;
          refresh();
        }
      });
  }

  /* --- rendering ------------------------------------------------------------------------------------ */

  function render() {
    renderMeter();
    renderHand();
    renderPayouts();
  }

  function renderMeter() {
    var meter = table.meter;
    var rules = table.rules;
    $("pool-code").textContent = meter ? meter.code + " · " + meter.name : gettext("No pool");
    $("meter-amount").textContent = meter ? money(meter.amount) : "—";
    $("fig-bet").textContent = meter && meter.carousel_bet ? money(meter.carousel_bet) : "—";
    $("fig-cap").textContent = rules.max_pool_bet ? money(rules.max_pool_bet) : gettext("no cap");
    $("fig-hits").textContent = meter && meter.levels.length ? String(meter.levels[0].hits) : "—";
    var facts = [el("li", {text: rules.title})];
    if (rules.requires_initial_bet) { facts.push(el("li", {text: gettext("A pool bet needs the initial bet.")})); }
    if (rules.max_pool_bet) {
      facts.push(el("li", {text: say(gettext("Pool bet at most %(amount)s (half the table minimum)."),
        {amount: money(rules.max_pool_bet)})}));
    }
    if (rules.manual_total) { facts.push(el("li", {text: gettext("Manual entry (b.1): enter the hand's total jackpot bets.")})); }
    if (rules.extra_card_forfeits) { facts.push(el("li", {text: gettext("Buying an extra card forfeits the jackpot bet.")})); }
    if (rules.first_five_cards_only) {
      facts.push(el("li", {text: gettext("Only the first five cards count: enter them, not the bought card.")}));
    }
    if (rules.community_cards) {
      facts.push(el("li", {text: say(gettext("%(count)s community cards complete each hand."), {count: rules.community_cards})}));
    }
    fill($("rules"), el("ul", null, facts));
    var rows = rules.paytable.map(function (row) {
      return el("tr", null, el("td", {text: category(row.category)}), el("td", {text: prizeText(row)}));
    }).concat(rules.discard_paytable.map(function (row) {
      return el("tr", null, el("td", {text: say(gettext("%(category)s (after discarding)"), {category: category(row.category)})}),
        el("td", {text: prizeText(row)}));
    }));
    fill($("paytable").querySelector("tbody"), rows.length ? rows
      : [el("tr", null, el("td", {colspan: 2, class: "empty", text: gettext("Awaiting the authorised paytable.")}))]);
    var hits = meter ? meter.last_hits : [];
    fill($("hits").querySelector("tbody"), hits.length ? hits.map(function (h) {
      return el("tr", null, el("td", {text: fmt.time(h.at)}),
        el("td", {text: h.member + (h.seat ? " · " + say(gettext("seat %(seat)s"), {seat: h.seat}) : "")}),
        el("td", {text: category(h.category)}), el("td", {class: "num", text: money(h.amount)}));
    }) : [el("tr", null, el("td", {colspan: 4, class: "empty", text: gettext("No hit yet.")}))]);
  }

  function renderHand() {
    var h = hand();
    var open = isOpen();
    var badge = $("hand-badge");
    badge.textContent = !h ? gettext("No hand yet")
      : say(gettext("Hand %(number)s · %(state)s"), {number: h.number, state: HAND_STATES[h.state] || h.state});
    badge.className = "badge " + (open ? "badge--drawing" : h && h.state === "void" ? "badge--void" : "badge--closed");
    $("hand-title").textContent = h ? say(gettext("Hand %(number)s"), {number: h.number}) : gettext("No hand yet");
    $("hand-info").textContent = h
      ? say(gettext("opened %(time)s by %(user)s"), {time: fmt.time(h.opened_at), user: h.opened_by}) : "";
    $("open-hand").disabled = open || !table.meter || table.state !== "open";
    $("open-hand").title = !table.meter ? gettext("The table plays for no pool")
      : table.state !== "open" ? gettext("The table is closed") : "";
    if (!$("settle-hand").classList.contains("is-busy")) { $("settle-hand").disabled = !open; }
    $("bets-form").hidden = !open;
    $("cards-form").hidden = !open;
    $("void-box").hidden = !open;
    renderSummary(h, open);
    if (!open) {
      builtFor = "";
      return;
    }
    var rules = table.rules;
    $("manual-total-row").hidden = !rules.manual_total;
    $("community-row").hidden = !rules.community_cards;
    if (h.community_cards) {
      $("community").value = h.community_cards;
      $("community").disabled = true;
    } else {
      $("community").disabled = false;
    }
    if (rules.manual_total && h.manual_total !== null) {
      $("manual-total").value = h.manual_total;
      $("manual-total").disabled = true;
    } else {
      $("manual-total").disabled = false;
    }
    var signature = JSON.stringify([h.id, h.seats.map(function (s) { return [s.seat, !!s.pool_bet, s.cards, s.forfeited]; })]);
    if (signature === builtFor) { return; }
    builtFor = signature;
    buildBets(h, rules);
    buildCards(h, rules);
  }

  /* A settled or void hand, seat by seat (read only). */
  function renderSummary(h, open) {
    var box = $("hand-summary");
    box.hidden = open || !h || !h.seats.length;
    if (box.hidden) { return; }
    fill(box.querySelector("tbody"), h.seats.map(function (s) {
      return el("tr", {class: s.forfeited ? "is-forfeited" : ""},
        el("td", {text: String(s.seat)}),
        el("td", {class: "num", text: s.pool_bet ? money(s.pool_bet) : "—"}),
        el("td", {class: "cards-input", text: s.cards + (h.community_cards ? " + " + h.community_cards : "")}),
        el("td", {text: s.forfeited ? gettext("forfeited") : s.rank || ""}));
    }));
  }

  function buildBets(h, rules) {
    var dealt = h.seats.some(function (s) { return !!s.cards; });
    $("bets-hint").textContent = dealt ? gettext("closed: cards are dealt")
      : rules.manual_total ? gettext("who bet (the total contributes)") : gettext("each contributes at once");
    var rows = [];
    for (var seat = 1; seat <= seats; seat += 1) {
      var s = seatOf(seat);
      var locked = !!(s && s.pool_bet);
      rows.push(el("tr", {class: locked ? "is-locked" : "", "data-seat": seat},
        el("td", {text: String(seat)}),
        el("td", null, el("input", {type: "text", inputmode: "decimal", class: "bet-initial", placeholder: "0.00",
          value: locked ? s.initial_bet : "", disabled: locked || dealt,
          "aria-label": say(gettext("Initial bet, seat %(seat)s"), {seat: seat})})),
        el("td", null, el("input", {type: "text", inputmode: "decimal", class: "bet-pool",
          placeholder: table.meter && table.meter.carousel_bet ? table.meter.carousel_bet : "0.00",
          value: locked ? s.pool_bet : "", disabled: locked || dealt,
          "aria-label": say(gettext("Pool bet, seat %(seat)s"), {seat: seat})})),
        el("td", null, locked ? el("span", {class: "badge badge--ok", text: gettext("registered")})
          : el("button", {type: "button", class: "btn-link", text: gettext("stipulated"), disabled: dealt,
            onclick: fillStipulated(seat)}))));
    }
    fill($("bets-table").querySelector("tbody"), rows);
    $("bets-submit").disabled = dealt && !rules.manual_total;
  }

  function fillStipulated(seat) {
    return function () {
      var row = $("bets-table").querySelector('tr[data-seat="' + seat + '"]');
      if (table.meter && table.meter.carousel_bet) { row.querySelector(".bet-pool").value = table.meter.carousel_bet; }
      if (table.rules.requires_initial_bet && !row.querySelector(".bet-initial").value) {
        row.querySelector(".bet-initial").value = $("table-minimum").getAttribute("data-value");
      }
    };
  }

  function buildCards(h, rules) {
    var discards = rules.discards;
    var extra = table.game === "poker_sin_descarte";
    doc.querySelectorAll("#cards-table .col-discard").forEach(function (n) { n.hidden = !discards; });
    doc.querySelectorAll("#cards-table .col-extra").forEach(function (n) { n.hidden = !extra; });
    var range = rules.cards_per_seat;
    $("cards-hint").textContent = range.min === range.max ? say(gettext("%(count)s per seat"), {count: range.min})
      : say(gettext("%(min)s to %(max)s per seat, in deal order"), {min: range.min, max: range.max});
    var rows = h.seats.filter(function (s) { return !!s.pool_bet; }).map(function (s) {
      var locked = !!s.cards;
      var paid = s.payout !== null && Number(s.payout) > 0;
      return el("tr", {class: (locked ? "is-locked" : "") + (s.forfeited ? " is-forfeited" : ""), "data-seat": s.seat},
        el("td", {text: String(s.seat)}),
        el("td", null, el("input", {type: "text", class: "cards-input", value: s.cards, disabled: locked,
          placeholder: "AS KS QS JS TS", autocapitalize: "characters",
          "aria-label": say(gettext("Cards, seat %(seat)s"), {seat: s.seat})})),
        el("td", {class: "col-discard", hidden: !discards}, el("input", {type: "checkbox", class: "card-discard",
          checked: s.discard, disabled: locked, "aria-label": say(gettext("Discarded, seat %(seat)s"), {seat: s.seat})})),
        el("td", {class: "col-extra", hidden: !extra}, el("input", {type: "checkbox", class: "card-extra",
          checked: s.extra_card, disabled: locked,
          "aria-label": say(gettext("Bought an extra card, seat %(seat)s"), {seat: s.seat})})),
        el("td", null, el("span", {class: "seat-rank" + (paid ? " is-winning" : ""),
          text: s.forfeited ? say(gettext("forfeited (%(reason)s)"), {reason: s.forfeit_reason.replace(/_/g, " ")})
            : s.rank || (locked ? gettext("no combination") : "")})));
    });
    fill($("cards-table").querySelector("tbody"), rows.length ? rows
      : [el("tr", null, el("td", {colspan: 5, class: "empty", text: gettext("Register pool bets first.")}))]);
  }

  function renderPayouts() {
    var h = hand();
    var body = $("payouts").querySelector("tbody");
    var paid = h ? h.seats.filter(function (s) { return s.payout !== null; }) : [];
    paid.sort(function (a, b) { return a.payout_order - b.payout_order; });
    $("payout-info").textContent = !h ? "" : h.state === "settled"
      ? say(gettext("hand %(number)s · total %(amount)s"), {number: h.number, amount: money(h.total_paid)})
      : say(gettext("hand %(number)s"), {number: h.number});
    if (!paid.length) {
      fill(body, el("tr", null, el("td", {colspan: 4, class: "empty",
        text: h && h.state === "settled" ? gettext("The pool paid nothing this hand.")
          : h && h.state === "void" ? say(gettext("Void: %(reason)s"), {reason: h.void_reason}) : gettext("Not settled yet.")})));
    } else {
      fill(body, paid.map(function (s) {
        return el("tr", {title: s.payout_note},
          el("td", {text: String(s.payout_order + 1)}), el("td", {text: String(s.seat)}),
          el("td", {text: s.discard ? say(gettext("%(category)s (discarded)"), {category: category(s.category)})
            : category(s.category)}),
          el("td", {class: "num", text: money(s.payout) + (Number(s.from_operator)
            ? " " + say(gettext("(operator %(amount)s)"), {amount: money(s.from_operator)}) : "")}));
      }));
    }
    $("meter-move").textContent = h && h.meter_before !== null
      ? say(gettext("Meter %(before)s → %(after)s"), {before: money(h.meter_before), after: money(h.meter_after_payouts)}) +
        (h.meter_after !== h.meter_after_payouts
          ? " " + say(gettext("(reset to %(amount)s)"), {amount: money(h.meter_after)}) : "") : "";
  }

  /* --- commands ------------------------------------------------------------------------------------- */

  function handUrl(suffix) { return "/api/hands/" + hand().id + "/" + suffix + "/"; }

  function accepted(box, message) {
    return function (response) {
      version += 1;
      if (table && response.data && response.data.id) { table.current_hand = response.data; builtFor = ""; render(); }
      if (message) { ui.report(box, typeof message === "function" ? message(response.data) : message, "ok"); }
      refresh();
      return response;
    };
  }

  function failed(box) {
    return function (err) {
      ui.report(box, err);
      refresh();
    };
  }

  function wire() {
    $("open-hand").addEventListener("click", function (event) {
      var key = openIntent.keyFor([tableId, hand() ? hand().id : null]);
      ui.busy(event.currentTarget, function () {
        return api.post("/api/tables/" + tableId + "/hands/", {idempotency_key: key});
      }).then(function (response) {
        openIntent.done();
        ["bets-msg", "cards-msg"].forEach(function (id) { ui.report($(id), null); });
        $("manual-total").value = "";
        $("community").value = "";
        return accepted($("hand-msg"),
          say(gettext("Hand %(number)s is open: take the pool bets."), {number: response.data.number}))(response);
      }, function (err) {
        if (err.status >= 400 && err.status < 500) { openIntent.done(); }
        failed($("hand-msg"))(err);
      });
    });

    $("bets-form").addEventListener("submit", function (event) {
      event.preventDefault();
      if (!isOpen()) { return; }
      // Each amount read as the other money inputs ("1.234,56", "12,5": HallFormat.readAmount), refused
      // with what is wrong before anything is sent.
      var bets = [];
      var problem = "";
      function read(input) {
        var got = fmt.readAmount(input.value);
        if (got.problem && !problem) { problem = got.problem; input.focus(); }
        return got.amount;
      }
      Array.prototype.forEach.call($("bets-table").querySelectorAll("tbody tr"), function (row) {
        var pool = row.querySelector(".bet-pool");
        if (!pool || pool.disabled || !pool.value.trim()) { return; }
        bets.push({
          seat: Number(row.getAttribute("data-seat")),
          initial_bet: read(row.querySelector(".bet-initial")) || "0",
          pool_bet: read(pool)
        });
      });
      var body = {};
      if (bets.length) { body.bets = bets; }
      var total = $("manual-total");
      if (table.rules.manual_total && !total.disabled && total.value.trim()) { body.total = read(total); }
      if (problem) {
        ui.report($("bets-msg"), {code: "bad_amount", message: problem});
        return;
      }
      ui.busy($("bets-submit"), function () { return api.post(handUrl("bets"), body); })
        .then(accepted($("bets-msg"), function (h) {
          return h.manual_total
            ? say(gettext("Registered. Pool bets this hand: %(bets)s · total entered %(total)s."),
              {bets: money(h.pool_bets), total: money(h.manual_total)})
            : say(gettext("Registered. Pool bets this hand: %(bets)s."), {bets: money(h.pool_bets)});
        }), failed($("bets-msg")));
    });

    $("cards-form").addEventListener("submit", function (event) {
      event.preventDefault();
      if (!isOpen()) { return; }
      var entries = [];
      Array.prototype.forEach.call($("cards-table").querySelectorAll("tbody tr[data-seat]"), function (row) {
        var input = row.querySelector(".cards-input");
        if (!input || input.disabled || !input.value.trim()) { return; }
        entries.push({
          seat: Number(row.getAttribute("data-seat")),
          cards: input.value.trim().toUpperCase(),
          discard: !!(row.querySelector(".card-discard") || {}).checked,
          extra_card: !!(row.querySelector(".card-extra") || {}).checked
        });
      });
      var body = {};
      if (entries.length) { body.seats = entries; }
      var community = $("community");
      if (table.rules.community_cards && !community.disabled && community.value.trim()) {
        body.community = community.value.trim().toUpperCase();
      }
      ui.busy($("cards-submit"), function () { return api.post(handUrl("cards"), body); })
        .then(accepted($("cards-msg"), gettext("Cards registered and ranked.")), failed($("cards-msg")));
    });

    $("settle-hand").addEventListener("click", function (event) {
      if (!isOpen()) { return; }
      if (!global.confirm(say(gettext("Settle hand %(number)s? The pool pays now; this cannot be undone."),
        {number: hand().number}))) { return; }
      ui.busy(event.currentTarget, function () { return api.post(handUrl("settle")); })
        .then(accepted($("hand-msg"), function (h) {
          return say(gettext("Hand %(number)s settled: the pool paid %(amount)s."), {number: h.number, amount: money(h.total_paid)});
        }), failed($("hand-msg")));
    });

    $("void-form").addEventListener("submit", function (event) {
      event.preventDefault();
      if (!isOpen()) { return; }
      if (!global.confirm(say(gettext("Void hand %(number)s? No payouts; pool bets stay in the pool."),
        {number: hand().number}))) { return; }
      var reason = $("void-reason").value.trim();
      ui.busy(event.currentTarget.querySelector("button"), function () {
        return api.post(handUrl("void"), {reason: reason});
      }).then(function (response) {
        $("void-reason").value = "";
        $("void-box").open = false;
        return accepted($("hand-msg"), say(gettext("Hand %(number)s voided."), {number: response.data.number}))(response);
      }, failed($("hand-msg")));
    });
  }

  wire();
  refresh();
  global.setInterval(function () { if (!doc.hidden) { refresh(); } }, POLL_MS);
})(window);
