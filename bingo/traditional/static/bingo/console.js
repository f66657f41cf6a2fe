/*
 * The caller console of one room. What it shows comes from a snapshot (GET /api/rooms/{id}/console/) and
 * then from the events of the console's WebSocket (/ws/console/rooms/{id}/: the room's public stream and
 * its staff stream, see console_stream.js): no polling, a fresh snapshot only on a gap or a reconnect.
 * Every button is one API command whose refusal is shown with the server's message; what the command
 * changed arrives as events. The page decides nothing: it only helps the caller see and type.
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

  var root = $("console");
  var canWrite = global.HallUi.canWrite("console");
  var roomId = Number(root.getAttribute("data-room"));
  var venueId = Number(root.getAttribute("data-venue"));
  var currency = root.getAttribute("data-currency") || "EUR";
  var LIVE = ["scheduled", "on_sale", "sales_closed", "drawing", "paused"];
  var STEP_ALLOWED = {
    "open-sales": ["scheduled"],
    "close-sales": ["on_sale"],
    "start-draw": ["sales_closed"],
    "pause": ["drawing"],
    "resume": ["paused"]
  };
  var KIND = {line: gettext("Line"), bingo: gettext("Bingo")};
  // Which parts of a pick the hall manager sets, per program type (bingo.traditional.programs.rules.validate_pick).
  var PICKS = {
    "BA-2": {amount: false, max_ball: true, colour: false,
      hint: gettext("Bingo Extra: the extraction order (50 or more)")},
    "BA-19": {amount: true, max_ball: true, colour: false, hint: gettext("Super Prima: amount and extraction order")},
    "BA-20": {amount: true, max_ball: false, colour: true,
      hint: interpolate(gettext("Colour Prima: amount (%(limit)s at most) and colour"), {limit: fmt.money("500", "EUR")}, true)}
  };
  var PICK_STATES = ["scheduled", "on_sale"];
  var STATE_LABELS = {
    scheduled: gettext("Scheduled"), on_sale: gettext("On sale"), sales_closed: gettext("Sales closed"),
    drawing: gettext("Drawing"), paused: gettext("Paused"), closed: gettext("Closed"), void: gettext("Void")
  };
  var REFUSALS = {   // bingo.traditional.claims.Refusal
    not_sold: gettext("not sold"), not_complete: gettext("not complete"), line_already_won: gettext("line already won"),
    game_closed: gettext("game closed"), no_balls: gettext("no balls")
  };
  var COLOURS = {
    red: gettext("red"), yellow: gettext("yellow"), green: gettext("green"), blue: gettext("blue"),
    purple: gettext("purple"), orange: gettext("orange"), pink: gettext("pink"), white: gettext("white"),
    black: gettext("black"), brown: gettext("brown"), grey: gettext("grey"), cyan: gettext("cyan")
  };
  var NO_UNCLAIMED = {ordinal: 0, line: [], bingo: [], line_count: 0, bingo_count: 0};

  var room = null;
  var game = null;
  var sessionInfo = {};            // session id -> GET /api/sessions/{id}/
  var inspection = [];             // the inspection balls typed so far, in order
  // ...kept in this browser until the session opens (a reload, a closed tab, a crash lose none of them): under
  // the room and the session the next one follows, so a draft never outlives the session it was typed for.
  // The draw is the opener's (the server records it with the opening, by the opener): a draft is nobody's
  // record yet, and it stays on the console where the balls are read out.
  var DRAFT_PREFIX = "hall.inspection.room." + roomId + ".";
  // The material checks recorded for the room's next session (GET /api/rooms/{id}/checks/): the latest of
  // each device, with who ran it and when. Each is recorded when it is ticked, by whoever ticks it.
  var MATERIAL_CHECKS = ["blower", "reserve", "reader"];
  var checks = {};
  var checkSending = {};
  var lastVerdict = null;          // the claim answered last, with its master card
  var claimIntent = new ui.KeyedIntent("claim");
  var wasDrawing = false;
  var pickable = [];               // the room's active programs the hall manager picks for (PICKS)
  var stream = null;               // the ConsoleStream: snapshot + events
  var offline = false;             // the socket dropped (the page says so until it is live again)
  // The balls typed, in order, each with its answer: sent one at a time, so none is lost or reordered
  // however fast the caller types (issue 10). {game, number, ordinal, state, message, tries, fixed}
  var entries = [];
  var entrySending = false;
  var ENTRY_RETRIES = 3;           // a lost answer is asked again, same ordinal: a retry is a no-op
  var correctionTimer = null;
  var devices = [];                // the room's drawing devices (GET /api/rooms/{id}/devices/)
  var devicesRoom = null;

  function money(amount) { return fmt.money(amount, currency); }
  function say(text, values) { return interpolate(text, values, true); }
  function colourName(colour) { return COLOURS[colour] || colour; }
  function isLive(g) { return !!g && LIVE.indexOf(g.state) >= 0; }
  function drawnSet(g) {
    var set = {};
    (g ? g.balls : []).forEach(function (b) { set[b.ball] = b.ordinal; });
    return set;
  }
  /* A claim's verdict in the reader's language, from its code and facts (bingo.traditional.claims.VerdictCode): the
     English `reason` is the audit's. */
  var VERDICTS = {
    bingo: gettext("Card %(serial)s has bingo, complete at ball %(at)s (claim at ball %(bound)s)"),
    line: gettext("Card %(serial)s has a line: row %(row)s complete at ball %(at)s (claim at ball %(bound)s)"),
    game_closed: gettext("The game is closed: no more claims"),
    no_balls: gettext("No ball has been drawn yet"),
    not_sold: gettext("Card %(serial)s is not sold in this game"),
    bingo_incomplete: gettext("Card %(serial)s is not complete: %(missing)s not drawn"),
    line_incomplete: gettext("Card %(serial)s has no complete line: row %(row)s still needs %(missing)s"),
    line_already_won: gettext("Line already won at ball %(line_at)s; this claim is at ball %(bound)s"),
    line_already_paid: gettext("The Line was already won and paid at ball %(line_at)s")
  };

  function numberList(numbers) {
    var words = (numbers || []).map(String);
    if (words.length < 2) { return words.join(""); }
    return say(gettext("%(first)s and %(last)s"), {first: words.slice(0, -1).join(", "), last: words[words.length - 1]});
  }

  function verdictText(c) {
    var sentence = VERDICTS[c.code];
    if (!sentence) { return REFUSALS[c.refusal] || (c.valid ? gettext("valid") : gettext("refused")); }
    return say(sentence, Object.assign({}, c.facts, {missing: numberList((c.facts || {}).missing)}));
  }

  function cardName(series, serial) { return say(gettext("%(series)s · no. %(serial)s"), {series: series, serial: serial}); }
  function isCorrected(b) { return b.corrected_from !== null && b.corrected_from !== undefined; }

  /* --- the live state: a snapshot, then the streams' events ------------------------------------------- */

  /* The console's other parts (console_voice.js) hear the stream through the page: "console:snapshot" after
     every snapshot (a first load, a gap, a reconnect), "console:event" with each room event. */
  function tell(name, detail) {
    try {
      doc.dispatchEvent(new global.CustomEvent(name, {detail: detail}));
    } catch (err) {
      console.error(err);
    }
  }

  function onSnapshot(snapshot) {
    tell("console:snapshot", null);
    var previous = game;
    room = snapshot.room;
    game = snapshot.game || null;
    restoreDraft();
    if (!game || (previous && previous.id !== game.id)) { lastVerdict = null; }
    render();
    loadSessionInfo();
    loadChecks();
    loadPrograms();
    loadDevices();
  }

  function newGame(data) {
    return {
      id: data.game, number: data.number, state: data.state, state_label: STATE_LABELS[data.state] || data.state,
      draw_source: data.draw_source || "", draw: data.draw || null, cards_sold: 0, sales_total: "0", line_prize: null, bingo_prize: null,
      announcement: {}, programs: [], claim_window: "", line_won_at: null, balls: [], prizes: [],
      void_reason: "", claims: [], claims_count: 0, unclaimed: NO_UNCLAIMED
    };
  }

  /* Results of the accumulated prizes (programs.awarded) merged into the game's programs. */
  function applyAwards(awards) {
    var byCode = {};
    (awards || []).forEach(function (a) { byCode[a.code] = a; });
    var merged = gamePrograms(game).map(function (p) {
      var result = byCode[p.code];
      if (!result) { return p; }
      delete byCode[p.code];
      return Object.assign({}, p, result);
    });
    Object.keys(byCode).forEach(function (code) { merged.push(byCode[code]); });
    game.programs = merged;
  }

  /* A check recorded on any console of the room (the event session.check): shown here too, who and when. */
  function checkRecorded(c) {
    if (!room || room.open_session || MATERIAL_CHECKS.indexOf(c.check) < 0) { return; }
    if (checks[c.check] && checks[c.check].id > c.id) { return; }   // a later one is already shown
    checks[c.check] = c;
    renderChecks();
  }

  function onStaffEvent(event) {
    var data = event.data || {};
    if (event.type === "session.check") {
      if (data.room === roomId) { checkRecorded(data); }
      return;
    }
    if (event.type !== "console.unclaimed" || !game || data.game !== game.id) { return; }
    game.unclaimed = data;
    renderClaims();
  }

  function onEvent(event) {
    if (room && event.stream !== "room." + roomId) {
      onStaffEvent(event);
      return;
    }
    var data = event.data || {};
    tell("console:event", event);
    if (event.type === "session.opened") {
      dropDraft();   // opened here or on another console: the draw typed here is no longer the next one's
      inspection = [];
      room.open_session = data.session;
      room.last_session = data.session;
      checks = {};   // the session's now: the next session's are recorded afresh
      render();
      loadSessionInfo();
      return;
    }
    if (event.type === "session.closed") {
      room.open_session = null;
      render();
      loadChecks();
      return;
    }
    if (data.game === undefined) { return; }   // not about a game (pool meters, prize notices)
    if (event.type === "game.created") {
      game = newGame(data);
      room.current_game = data.game;
      lastVerdict = null;
      render();
      loadPrograms();
      stream.resync();   // its ball set and drawing device are the snapshot's (staff only)
      return;
    }
    if (!game || data.game !== game.id) {
      stream.resync();   // an event of a game we do not hold: the snapshot knows which one is on
      return;
    }
    if (data.state) {
      game.state = data.state;
      game.state_label = STATE_LABELS[data.state] || data.state;
    }
    switch (event.type) {
      case "sales.sold":
      case "sales.returned":
        game.cards_sold = data.cards_sold;
        game.sales_total = data.sales_total;
        break;
      case "game.sales_opened":
        if (data.offered && data.offered.length) {
          game.announcement = Object.assign({}, game.announcement, {offered: data.offered});
        }
        break;
      case "game.sales_closed":
        game.announcement = data.announcement || {};
        game.cards_sold = game.announcement.cards_sold;
        game.sales_total = game.announcement.sales_total;
        game.line_prize = game.announcement.line_prize;
        game.bingo_prize = game.announcement.bingo_prize;
        game.programs = (game.announcement.programs || []).map(function (p) { return Object.assign({won: null}, p); });
        break;
      case "ball.drawn":
        if (data.ordinal <= game.balls.length && game.balls[data.ordinal - 1].ball === data.ball) { return; }
        if (data.ordinal !== game.balls.length + 1) {
          stream.resync();
          return;
        }
        game.balls.push({ordinal: data.ordinal, ball: data.ball, colour: data.colour, drawn_at: data.drawn_at,
          corrected_from: null});
        break;
      case "ball.corrected":
        if (!applyCorrection(data)) { return; }
        break;
      case "claim.verified":
        if (!game.claims.some(function (c) { return c.id === data.claim; })) {
          game.claims.push({id: data.claim, kind: data.kind, series: data.series, serial: data.serial,
            bound_ordinal: data.bound_ordinal, valid: data.valid, refusal: data.refusal, reason: data.reason,
            code: data.code, facts: data.facts, winning_row: data.winning_row});
          game.claims_count += 1;
        }
        if (data.claim_window !== undefined) { game.claim_window = data.claim_window; }
        if (data.valid && data.kind === "line" && game.line_won_at === null) { game.line_won_at = data.bound_ordinal; }
        break;
      case "prize.awarded":
        game.prizes.push({kind: data.kind, ordinal: data.ordinal, amount: data.amount, share: data.share,
          remainder: data.remainder, winners: data.winners});
        if (data.kind === "line") {
          game.line_won_at = data.ordinal;
          // A valid bingo at the same ball keeps the window open for it.
          game.claim_window = game.claims.some(function (c) { return c.valid && c.kind === "bingo"; }) ? "bingo" : "";
        } else {
          game.claim_window = "";
        }
        break;
      case "programs.awarded":
        applyAwards(data.awards);
        break;
      case "game.resumed":
      case "game.closed":
        game.claim_window = "";
        break;
      case "game.device_switched":   // the draw goes on with another device (TB-31): the balls stay
        game.draw_source = data.draw_source;
        game.draw_device = {id: null, name: data.device, kind: data.kind};
        break;
      case "game.void_reason":   // the staff stream's: the public "game.voided" does not carry it
        game.void_reason = data.reason || "";
        break;
      case "game.voided":
        game.void_reason = data.reason || game.void_reason || "";
        game.claim_window = "";
        break;
      default:
        break;
    }
    render();
  }

  /* A mis-keyed ball put right: the ball takes its new number (same place), the claims judged again and the
     window come with the event, and the console says which number changed. */
  function applyCorrection(data) {
    var ball = game.balls[data.ordinal - 1];
    if (!ball) {
      stream.resync();
      return false;
    }
    if (!isCorrected(ball)) { ball.corrected_from = data.old; }
    ball.ball = data.ball;
    ball.colour = data.colour;
    if (data.claim_window !== undefined) { game.claim_window = data.claim_window; }
    if (data.line_won_at !== undefined) { game.line_won_at = data.line_won_at; }
    (data.claims || []).forEach(function (judged) {
      game.claims.forEach(function (c) {
        if (c.id === judged.claim) {
          Object.assign(c, {valid: judged.valid, refusal: judged.refusal, reason: judged.reason,
            code: judged.code, facts: judged.facts, winning_row: judged.winning_row});
        }
      });
      if (lastVerdict && lastVerdict.claim.id === judged.claim) {
        lastVerdict.claim = Object.assign({}, lastVerdict.claim, {valid: judged.valid, refusal: judged.refusal,
          reason: judged.reason, code: judged.code, facts: judged.facts, winning_row: judged.winning_row});
      }
    });
    entries.forEach(function (e) {
      if (e.game === game.id && e.ordinal === data.ordinal && e.state === "ok") { e.fixed = data.ball; }
    });
    var box = $("correction-notice");
    box.textContent = box.getAttribute("data-text").replace("%(old)s", data.old).replace("%(new)s", data.ball);
    box.hidden = false;
    global.clearTimeout(correctionTimer);
    correctionTimer = global.setTimeout(function () { box.hidden = true; }, 30000);
    return true;
  }

  function onStatus(status) {
    var indicator = $("poll-state");
    indicator.className = "console-poll" + (status === "live" ? " is-ok" : status === "offline" ? " is-failing" : "");
    indicator.title = status === "live" ? gettext("Live") : status === "offline" ? gettext("Reconnecting…") : gettext("Loading…");
    if (status === "offline") {
      offline = true;
      ui.report($("page-msg"), {message: gettext("Live updates lost: reconnecting…"), code: "offline"}, "error");
    } else if (offline && status === "live") {
      offline = false;
      ui.report($("page-msg"), null);
    }
  }

  function loadPrograms() {
    api.get("/api/rooms/" + roomId + "/programs/").then(function (programs) {
      pickable = (programs || []).filter(function (p) {
        return p.active !== false && Object.prototype.hasOwnProperty.call(PICKS, p.type);
      });
      renderPicks();
    }, function () { /* the picks stay as they were; the next snapshot tries again */ });
  }

  function loadSessionInfo() {
    var id = room && room.open_session;
    if (!id || sessionInfo[id]) { return; }
    sessionInfo[id] = {id: id};
    api.get("/api/sessions/" + id + "/").then(function (data) {
      sessionInfo[id] = data;
      render();
    }, function () { delete sessionInfo[id]; });
  }

  function loadChecks() {
    if (!canWrite || !room || room.open_session) { return; }
    api.get("/api/rooms/" + roomId + "/checks/").then(function (recorded) {
      var fresh = {};
      (recorded || []).forEach(function (c) { fresh[c.check] = c; });   // in the order run: the latest wins
      MATERIAL_CHECKS.forEach(function (name) {   // one ticked while this was asked stays
        if (checks[name] && (!fresh[name] || checks[name].id > fresh[name].id)) { fresh[name] = checks[name]; }
      });
      checks = room && room.open_session ? {} : fresh;
      renderChecks();
    }, function () { /* shown as not done; the next snapshot asks again */ });
  }

  /* --- rendering ------------------------------------------------------------------------------------ */

  function renderChecks() {
    if (!canWrite) { return; }
    MATERIAL_CHECKS.forEach(function (name) {
      var c = checks[name];
      var ok = !!(c && c.ok);
      var box = $("check-" + name);
      box.checked = ok || !!checkSending[name];
      box.disabled = ok || !!checkSending[name];
      box.parentNode.parentNode.setAttribute("data-done", ok ? "true" : "false");
      if (ok) { box.parentNode.parentNode.classList.remove("is-missing"); }
      var done = $("check-" + name + "-done");
      done.className = "check-done" + (c ? (c.ok ? " is-ok" : " is-bad") : "");
      done.textContent = checkSending[name] ? gettext("Recording…")
        : !c ? gettext("Not checked yet")
        : say(c.ok ? gettext("Checked by %(user)s at %(time)s")
          : c.note ? gettext("Not working: %(note)s (recorded by %(user)s at %(time)s)")
          : gettext("Not working: recorded by %(user)s at %(time)s"),
          {user: c.checked_by, time: fmt.time(c.checked_at), note: c.note || ""});
      $("check-" + name + "-fail-open").disabled = !!checkSending[name];
    });
  }

  /* A check ticked: recorded at once, by whoever ticked it, with the time (POST /api/rooms/{id}/checks/). */
  function recordCheck(name, ok, note) {
    var box = $("session-msg");
    checkSending[name] = true;
    renderChecks();
    var body = {check: name, ok: ok !== false, note: note || ""};
    return api.post("/api/rooms/" + roomId + "/checks/", body).then(function (response) {
      delete checkSending[name];
      checkRecorded(response.data);
      ui.report(box, null);
      renderChecks();
      return response;
    }, function (err) {
      delete checkSending[name];
      renderChecks();
      ui.report(box, err);
      throw err;
    });
  }

  /* "Not working…": the check recorded as failed with a short note (the opening stays refused until the
     device is checked again and works; the minutes keep both). */
  function wireCheckFailure(name) {
    var form = $("check-" + name + "-fail");
    var note = $("check-" + name + "-note");
    function shut() { form.hidden = true; $("check-" + name + "-fail-open").hidden = false; note.value = ""; }
    $("check-" + name + "-fail-open").addEventListener("click", function () {
      form.hidden = false;
      $("check-" + name + "-fail-open").hidden = true;
      note.focus();
    });
    form.querySelector("[data-cancel]").addEventListener("click", shut);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var text = note.value.trim();
      if (!text) {
        ui.report($("session-msg"), gettext("Say in a short note what is wrong with it."), "error");
        note.focus();
        return;
      }
      recordCheck(name, false, text).then(shut, function () { /* reported; the note stays to send again */ });
    });
  }


  function render() {
    var open = !!(room && room.open_session);
    $("session-open").hidden = !room || open;
    $("session-live").hidden = !open;
    var sessionBadge = $("session-badge");
    sessionBadge.textContent = !room ? gettext("Loading…")
      : open ? say(gettext("Session %(id)s open"), {id: room.open_session}) : gettext("No open session");
    sessionBadge.className = "badge " + (open ? "badge--ok" : "badge--bad");
    var gameBadge = $("game-badge");
    gameBadge.hidden = !game || !open;
    if (game) {
      gameBadge.textContent = say(gettext("Game %(number)s · %(state)s"), {number: game.number, state: game.state_label});
      gameBadge.className = "badge badge--" + game.state;
    }
    if (!open) {
      renderChecks();
      renderInspection();
      return;
    }
    renderGame();
    renderPrograms();
    renderPicks();
    renderDraw();
    renderClaims();
  }

  /* --- accumulated prizes: those in play, and the manager's pick ------------------------------------ */

  function gamePrograms(g) {
    if (!g) { return []; }
    if (g.programs && g.programs.length) { return g.programs; }
    return (g.announcement && g.announcement.programs) || [];
  }

  function programLine(p) {
    var parts = [(p.name || p.type) + (p.slot ? " (" + p.slot + ")" : ""), money(p.amount)];
    if (p.max_ball !== null && p.max_ball !== undefined) { parts.push(say(gettext("max ball %(ball)s"), {ball: p.max_ball})); }
    if (p.colour) { parts.push(say(gettext("colour %(colour)s"), {colour: colourName(p.colour)})); }
    return parts.join(" · ");
  }

  function renderPrograms() {
    var playing = gamePrograms(game);
    $("programs-box").hidden = !playing.length;
    fill($("programs-in-play"), playing.map(function (p) {
      var result = null;
      if (p.won === true) {
        result = el("span", {class: "program-won", text: " — " + ((p.winners || []).length > 1
          ? say(gettext("won: %(amount)s (%(share)s each)"), {amount: money(p.prize || p.amount), share: money(p.share)})
          : say(gettext("won: %(amount)s"), {amount: money(p.prize || p.amount)}))});
      } else if (p.won === false) {
        result = el("span", {class: "muted", text: " — " + gettext("not won")});
      }
      return el("li", {"data-code": p.code}, programLine(p), result);
    }));
  }

  function selectedPick() {
    var id = Number($("pick-program").value);
    return pickable.filter(function (p) { return p.id === id; })[0] || null;
  }

  function renderPicks() {
    var form = $("pick-form");
    var open = !!game && PICK_STATES.indexOf(game.state) >= 0 && pickable.length > 0;
    form.hidden = !open;
    if (!open) { return; }
    var select = $("pick-program");
    var chosen = select.value;
    var wanted = pickable.map(function (p) { return String(p.id); }).join(",");
    if (select.getAttribute("data-ids") !== wanted) {
      fill(select, pickable.map(function (p) {
        return el("option", {value: p.id, text: (p.name || p.type) + " (" + p.type + ")"});
      }));
      select.setAttribute("data-ids", wanted);
      if (chosen && wanted.split(",").indexOf(chosen) >= 0) { select.value = chosen; }
    }
    var program = selectedPick();
    var parts = program ? PICKS[program.type] : {amount: false, max_ball: false, colour: false, hint: ""};
    $("pick-amount").disabled = !parts.amount;
    $("pick-max-ball").disabled = !parts.max_ball;
    $("pick-colour").disabled = !parts.colour;
    $("pick-hint").textContent = parts.hint;
  }

  function renderGame() {
    var live = isLive(game);
    $("game-title").textContent = game ? say(gettext("Game %(number)s"), {number: game.number}) : gettext("No game yet");
    $("game-source").textContent = game
      ? (game.draw_source === "manual" ? gettext("Blower + ball reader") : gettext("RNG draw")) : "";
    $("fig-cards").textContent = game ? String(game.cards_sold) : "—";
    $("fig-sales").textContent = game ? money(game.sales_total) : "—";
    $("fig-line").textContent = game ? money(game.line_prize) : "—";
    $("fig-bingo").textContent = game ? money(game.bingo_prize) : "—";
    Array.prototype.forEach.call(doc.querySelectorAll("#steps [data-step]"), function (button) {
      var step = button.getAttribute("data-step");
      var allowed = !!game && STEP_ALLOWED[step].indexOf(game.state) >= 0;
      if (step === "resume" && game && game.claim_window) { allowed = false; }
      if (!button.classList.contains("is-busy")) { button.disabled = !allowed; }
      button.hidden = !live;
    });
    var announcement = $("announcement");
    var formula = game && game.announcement ? game.announcement.formula : "";
    var offered = (game && game.announcement && game.announcement.offered) || [];
    announcement.hidden = !formula && !offered.length;
    if (formula) {
      fill(announcement, el("div", {class: "announcement__label", text: gettext("Sales announcement — read it out")}),
        el("div", {class: "announcement__text", text: formula}));
    } else if (offered.length) {   // S3, before the session's first sale
      fill(announcement, el("div", {class: "announcement__label", text: gettext("Series on sale — announce them")}),
        el("div", {class: "announcement__text", text: offered.map(function (s) {
          return say(gettext("Series %(series)s: %(price)s a card, %(cards)s cards"),
            {series: s.series, price: money(s.face_value), cards: s.cards});
        }).join(" · ")}));
    }
    if (game && game.state === "void") {
      announcement.hidden = false;
      fill(announcement, el("div", {class: "announcement__label", text: gettext("Void")}),
        el("div", {class: "announcement__text", text: game.void_reason}));
    }
    $("create-game").hidden = live;
    $("void-box").hidden = !live;
    renderEquipment(live);
    renderDraw();
    var sid = room.open_session;
    var info = sessionInfo[sid] || {};
    $("session-info").textContent = info.opened_at
      ? say(gettext("Session %(id)s · opened %(time)s by %(user)s"),
        {id: sid, time: fmt.time(info.opened_at), user: info.opened_by})
      : say(gettext("Session %(id)s"), {id: sid});
    $("session-close-btn").disabled = live;
    $("session-close-btn").title = live ? gettext("Finish or void the game first") : "";
  }

  /* The game's ball set against its manufacturer's limit (R-06, TB-07) and its drawing device (TB-30);
     mid-game, the switch to the room's other devices (TB-31). */
  /* The draw's commitment and its public page (issue 28), or that a blower's balls are not verifiable
     by seed; the texts are the template's (data-verifiable, data-blower). */
  function renderDraw() {
    var box = $("game-draw");
    var draw = game ? game.draw : null;
    // An RNG game without commitment (verifiable draws off) shows nothing, as before.
    box.hidden = !draw || (!draw.verifiable && game.draw_source !== "manual");
    if (box.hidden) { return; }
    $("game-draw-text").textContent = draw.verifiable
      ? say(box.getAttribute("data-verifiable"), {commitment: draw.commitment})
      : box.getAttribute("data-blower");
    var link = $("game-draw-link");
    link.hidden = !draw.url;
    link.setAttribute("href", draw.url || "");
  }

  function renderEquipment(live) {
    var set = game ? game.ball_set : null;
    var device = game ? game.draw_device : null;
    var parts = [];
    if (set) {
      parts.push(say(gettext("Ball set %(name)s: %(played)s of %(certified)s games"),
        {name: set.name, played: set.games_played, certified: set.certified_games}));
    }
    if (device) { parts.push(say(gettext("Device: %(name)s"), {name: device.name})); }
    $("game-equipment").textContent = parts.join(" · ");
    $("game-equipment").hidden = !parts.length;
    var warning = $("ball-set-warning");
    warning.hidden = !(set && set.at_limit);
    warning.textContent = set && set.at_limit
      ? say(gettext("Ball set %(name)s has reached the manufacturer's %(certified)s games: replace it (TB-07)."),
        {name: set.name, certified: set.certified_games}) : "";
    var switchable = !!game && (game.state === "drawing" || game.state === "paused") && live;
    var select = $("device-select");
    var current = device ? device.name : null;
    var others = devices.filter(function (d) { return d.name !== current; });
    $("device-box").hidden = !switchable || !others.length;
    var wanted = others.map(function (d) { return String(d.id); }).join(",");
    if (select.getAttribute("data-options") !== wanted) {
      fill(select);
      others.forEach(function (d) {
        select.appendChild(el("option", {value: String(d.id),
          text: d.reserve ? say(gettext("%(name)s (reserve)"), {name: d.name}) : d.name}));
      });
      select.setAttribute("data-options", wanted);
    }
  }

  /* The venue's ball sets in use, offered for the next game (its first one unless chosen). */
  function loadBallSets() {
    api.get("/api/ball-sets/?venue=" + room.venue).then(function (found) {
      var select = $("game-ball-set");
      var usable = (found || []).filter(function (s) { return !s.retired_at; });
      fill(select, usable.map(function (s) {
        return el("option", {value: String(s.id), text: s.at_limit
          ? say(gettext("%(name)s (limit reached)"), {name: s.name}) : s.name});
      }));
      select.hidden = usable.length < 2;
    }, function () { /* the game gets the venue's first set */ });
  }

  function loadDevices() {
    if (!room || devicesRoom === room.id) { return; }
    devicesRoom = room.id;
    loadBallSets();
    api.get("/api/rooms/" + room.id + "/devices/").then(function (found) {
      devices = found || [];
      render();
    }, function () { devicesRoom = null; });
  }

  function renderDraw() {
    var manual = !!game && game.draw_source === "manual";
    var drawing = !!game && game.state === "drawing";
    var input = $("ball-input");
    var canEnter = manual && drawing;
    input.disabled = !canEnter;
    if (!$("ball-submit").classList.contains("is-busy")) { $("ball-submit").disabled = !canEnter; }
    $("ball-form").hidden = !!game && !manual;
    var hint = "";
    if (!game) { hint = gettext("No game"); }
    else if (!manual) { hint = isLive(game) ? gettext("The RNG draws by itself") : ""; }
    else if (drawing) { hint = say(gettext("Next: ball %(ordinal)s of 90"), {ordinal: game.balls.length + 1}); }
    else if (game.state === "paused") { hint = game.claim_window ? gettext("Paused for a claim") : gettext("Paused"); }
    else if (isLive(game) && canWrite) { hint = gettext("Start the draw to enter balls"); }
    $("draw-hint").textContent = hint;
    if (canEnter && !wasDrawing && doc.activeElement === doc.body) { input.focus(); }
    wasDrawing = canEnter;

    var balls = game ? game.balls : [];
    var current = balls.length ? balls[balls.length - 1] : null;
    var big = $("console-current");
    big.setAttribute("data-colour", current ? current.colour : "");
    big.setAttribute("data-corrected", current && isCorrected(current) ? "true" : "false");
    big.classList.toggle("is-empty", !current);
    $("console-current-number").textContent = current ? String(current.ball) : "";
    $("console-ordinal").textContent = current
      ? say(gettext("Ball %(ordinal)s of 90"), {ordinal: current.ordinal}) : gettext("No ball yet");
    fill($("console-last"), balls.slice(Math.max(0, balls.length - 6), Math.max(0, balls.length - 1)).reverse()
      .map(function (b) {
        return el("span", {class: "cball cball--sm", "data-colour": b.colour,
          "data-corrected": isCorrected(b) ? "true" : "false"}, el("span", {text: b.ball}));
      }));
    var drawn = drawnSet(game);
    var last = current ? current.ball : null;
    var corrected = {};
    balls.forEach(function (b) { if (isCorrected(b)) { corrected[b.ball] = b.corrected_from; } });
    for (var n = 1; n <= 90; n += 1) {
      var cell = $("console-board-" + n);
      cell.classList.toggle("is-on", !!drawn[n]);
      cell.classList.toggle("is-last", n === last);
      cell.classList.toggle("is-corrected", corrected[n] !== undefined);
      cell.title = corrected[n] !== undefined ? say(gettext("Entered as %(number)s, corrected"), {number: corrected[n]}) : "";
    }
    // Only typed balls can be mis-keyed: corrections are for manual games in play with a ball drawn.
    var correctable = manual && (drawing || (!!game && game.state === "paused")) && balls.length > 0;
    $("correct-box").hidden = !correctable;
    if (!correctable) { $("correction-notice").hidden = true; }
    renderCorrectHint();
    renderEntries();
  }

  function renderCorrectHint() {
    var ordinal = Number($("correct-ordinal").value);
    var ball = game && ordinal >= 1 ? game.balls[ordinal - 1] : null;
    $("correct-hint").textContent = ball
      ? say(gettext("Ball %(ordinal)s is %(number)s now."), {ordinal: ordinal, number: ball.ball}) : "";
  }

  /* The entries of the game on show, newest first, each with its answer. */
  function renderEntries() {
    var shown = entries.filter(function (e) { return game && e.game === game.id; }).slice().reverse();
    fill($("ball-log"), shown.map(function (e) {
      var answer = e.state === "queued" ? gettext("waiting…")
        : e.state === "sending" ? gettext("sending…")
        : e.state === "retry" ? e.message
        : e.state === "ok" ? say(gettext("ball %(ordinal)s ✓"), {ordinal: e.ordinal})
        : "✗ " + e.message;
      var fix = null;
      if (e.state === "ok" && e.fixed !== undefined && e.fixed !== e.number) {
        fix = el("span", {class: "ball-log__fix", text: say(gettext("corrected to %(number)s"), {number: e.fixed})});
      } else if (e.state === "ok" && canWrite) {
        fix = el("button", {type: "button", class: "btn-link", text: gettext("Correct"), onclick: function () {
          $("correct-box").open = true;
          $("correct-ordinal").value = String(e.ordinal);
          renderCorrectHint();
          $("correct-number").focus();
        }});
      }
      return el("li", {"data-state": e.state, "data-ordinal": e.ordinal || "", "data-number": e.number},
        el("span", {class: "ball-log__number", text: e.number}),
        el("span", {class: "ball-log__answer", text: answer}), fix);
    }));
  }

  /* --- ball entry: a queue, sent in the order typed ---------------------------------------------------- */

  function queueBall(number) {
    entries.push({game: game.id, number: number, ordinal: null, state: "queued", message: "", tries: 0});
    renderEntries();
    sendNext();
  }

  function sendNext() {
    if (entrySending) { return; }
    var entry = entries.filter(function (e) { return e.state === "queued" || e.state === "retry"; })[0];
    if (!entry) { return; }
    var box = $("ball-msg");
    if (!game || game.id !== entry.game) {
      entry.state = "refused";
      entry.message = gettext("Not sent: the game changed.");
      renderEntries();
      sendNext();
      return;
    }
    entrySending = true;
    // The ordinal is fixed at the first try: if its answer is lost, the retry names the same ball.
    if (entry.ordinal === null) { entry.ordinal = game.balls.length + 1; }
    entry.state = "sending";
    renderEntries();
    api.post("/api/games/" + entry.game + "/balls/", {number: entry.number, ordinal: entry.ordinal})
      .then(function (response) {
        var ball = response.data;
        entry.state = "ok";
        entry.ordinal = ball.ordinal;
        ui.report(box, say(gettext("Ball %(number)s entered as ball %(ordinal)s."),
          {number: ball.number, ordinal: ball.ordinal}), "ok");
        // Shown at once, so the next entry gets the next ordinal; this ball's event is then skipped.
        if (game && game.id === entry.game && ball.ordinal === game.balls.length + 1) {
          game.balls.push({ordinal: ball.ordinal, ball: ball.number, colour: ball.colour, drawn_at: ball.drawn_at,
            corrected_from: null});
        }
        return 0;
      }, function (err) {
        if ((err.status === 0 || err.status >= 500) && entry.tries < ENTRY_RETRIES) {
          entry.tries += 1;
          entry.state = "retry";
          entry.message = say(gettext("no answer: trying again (%(try)s)…"), {"try": entry.tries});
          return 400 * entry.tries;
        }
        entry.state = "refused";
        entry.message = err.message;
        entry.ordinal = null;   // it did not become a ball
        ui.report(box, err);
        return 0;
      })
      .then(function (wait) {
        global.setTimeout(function () {
          entrySending = false;
          render();
          sendNext();
        }, wait);
      });
  }

  function renderClaims() {
    var claimable = !!game && (game.state === "drawing" || game.state === "paused");
    Array.prototype.forEach.call($("claim-form").querySelectorAll("input, button"), function (node) {
      if (!node.classList.contains("is-busy")) { node.disabled = !claimable; }
    });
    var prompt = $("window-prompt");
    prompt.hidden = !(game && game.claim_window);
    if (game && game.claim_window) {
      $("window-question").textContent = game.claim_window === "line" ? gettext("Any more lines?") : gettext("Any more bingos?");
      $("confirm-btn").textContent = game.claim_window === "line"
        ? gettext("No more lines: confirm and pay the Line")
        : gettext("No more bingos: confirm and pay the Bingo");
    }
    renderVerdict();
    renderUnclaimed();
    renderPrizes();
    renderClaimTable();
  }

  function renderVerdict() {
    var box = $("verdict");
    if (!lastVerdict || !game || lastVerdict.game !== game.id) {
      box.hidden = true;
      return;
    }
    var c = lastVerdict.claim;
    box.hidden = false;
    box.className = "verdict " + (c.valid ? "verdict--ok" : "verdict--bad");
    var drawn = drawnSet(game);
    fill(box,
      el("div", {class: "verdict__head"},
        el("span", {class: "badge " + (c.valid ? "badge--ok" : "badge--bad"),
          text: c.kind === "line" ? (c.valid ? gettext("Valid line") : gettext("Not valid: line"))
            : (c.valid ? gettext("Valid bingo") : gettext("Not valid: bingo"))}),
        el("strong", {text: say(gettext("Series %(card)s"), {card: cardName(c.series, c.serial)})}),
        el("span", {class: "muted", text: say(gettext("claim at ball %(ordinal)s"), {ordinal: c.bound_ordinal})})),
      el("div", {class: "verdict__reason", id: "verdict-reason", text: verdictText(c)}),
      c.master_card
        ? ui.masterCard(c.master_card, drawn, c.valid && c.kind === "line" ? c.winning_row : null)
        : el("div", {class: "muted", text: gettext("No master card: the card is not sold in this game.")}));
  }

  function renderUnclaimed() {
    var box = $("unclaimed");
    // Only while the game can be claimed: a void or closed game's last list is history.
    var claimable = !!game && (game.state === "drawing" || game.state === "paused");
    var found = claimable && game.unclaimed ? game.unclaimed : NO_UNCLAIMED;
    var rows = [];
    ["bingo", "line"].forEach(function (kind) {
      var more = (found[kind + "_count"] || 0) - (found[kind] || []).length;
      (found[kind] || []).forEach(function (card) {
        rows.push(el("li", null,
          el("span", {class: "badge badge--" + (kind === "bingo" ? "drawing" : "sales_closed"), text: KIND[kind]}),
          " ", el("strong", {text: cardName(card.series, card.serial)}),
          el("span", {class: "muted", text: " " + say(gettext("since ball %(ordinal)s"), {ordinal: card.since_ball})}), " ",
          !canWrite ? null : el("button", {type: "button", class: "btn-link", text: gettext("Fill the claim"), onclick: function () {
            doc.querySelector('#claim-form input[name="kind"][value="' + kind + '"]').checked = true;
            $("claim-series").value = card.series;
            $("claim-serial").value = String(card.serial);
            $("claim-serial").focus();
          }})));
      });
      if (more > 0) {
        rows.push(el("li", {class: "muted unclaimed__more", text: kind === "line"
          ? say(ngettext("… and %(count)s more line", "… and %(count)s more lines", more), {count: more})
          : say(ngettext("… and %(count)s more bingo", "… and %(count)s more bingos", more), {count: more})}));
      }
    });
    box.hidden = rows.length === 0;
    if (rows.length) {
      fill(box, el("div", {class: "unclaimed__title", text: gettext("Winning cards nobody has claimed yet")}),
        el("ul", null, rows));
    } else {
      fill(box);
    }
  }

  function renderPrizes() {
    var box = $("prizes");
    var prizes = game ? game.prizes : [];
    if (!prizes.length) {
      fill(box, el("p", {class: "empty", text: gettext("No prize paid yet.")}));
      return;
    }
    fill(box, prizes.map(function (p) {
      return el("div", {class: "prize"},
        el("span", {class: "badge badge--ok", text: KIND[p.kind]}),
        el("strong", {text: " " + money(p.amount)}),
        el("span", {class: "muted", text: " " + say(gettext("at ball %(ordinal)s"), {ordinal: p.ordinal}) + " · "}),
        el("span", {text: p.winners.map(function (w) {
          return cardName(w.series, w.serial) + " (" + money(w.amount) + ")";
        }).join(", ")}),
        Number(p.remainder)
          ? el("span", {class: "muted", text: " · " + say(gettext("remainder %(amount)s"), {amount: money(p.remainder)})})
          : null);
    }));
  }

  function renderClaimTable() {
    var body = $("claims-table").querySelector("tbody");
    var claims = game ? game.claims.slice().reverse() : [];
    if (!claims.length) {
      fill(body, el("tr", null, el("td", {colspan: 5, class: "empty", text: gettext("No claims yet.")})));
      return;
    }
    var earlier = game.claims_count - claims.length;   // the view holds the latest claims only
    fill(body, claims.map(function (c) {
      return el("tr", {title: verdictText(c)},
        el("td", {text: c.id}),
        el("td", {text: KIND[c.kind]}),
        el("td", {text: cardName(c.series, c.serial)}),
        el("td", {class: "num", text: c.bound_ordinal}),
        el("td", null, el("span", {class: "badge " + (c.valid ? "badge--ok" : "badge--bad"),
          text: c.valid ? gettext("valid") : REFUSALS[c.refusal] || (c.refusal || gettext("refused")).replace(/_/g, " ")})));
    }).concat(earlier > 0 ? [el("tr", null, el("td", {colspan: 5, class: "muted",
      text: say(ngettext("%(count)s earlier claim: see the game's recall.", "%(count)s earlier claims: see the game's recall.",
        earlier), {count: earlier})}))] : []));
  }

  /* --- the inspection draw -------------------------------------------------------------------------- */

  function storage() {
    try { return global.localStorage; } catch (err) { return null; }   // storage off: kept in the page only
  }

  function draftKey() { return room ? DRAFT_PREFIX + "after." + (room.last_session || 0) : null; }

  function saveDraft() {
    var store = storage();
    var key = draftKey();
    if (!store || !key || (room && room.open_session)) { return; }
    try {
      if (inspection.length) { store.setItem(key, JSON.stringify(inspection)); } else { store.removeItem(key); }
    } catch (err) { /* full or refused: the page still holds the balls */ }
  }

  function dropDraft() {
    var store = storage();
    if (!store) { return; }
    var stale = [];
    for (var i = 0; i < store.length; i += 1) {
      var key = store.key(i);
      if (key && key.indexOf(DRAFT_PREFIX) === 0) { stale.push(key); }
    }
    stale.forEach(function (key) { store.removeItem(key); });
  }

  /* After a (re)load: the balls typed for the next session before it, if any (a draft under an older session
     is dropped: that session has opened since). A list being typed in this page is kept as it is. */
  function restoreDraft() {
    var store = storage();
    if (!store || !room) { return; }
    if (room.open_session) {
      dropDraft();
      inspection = [];
      return;
    }
    var key = draftKey();
    var saved = null;
    try { saved = JSON.parse(store.getItem(key) || "null"); } catch (err) { saved = null; }
    var keep = Array.isArray(saved) ? saved.filter(function (n) { return typeof n === "number" && isFinite(n); }) : [];
    for (var i = store.length - 1; i >= 0; i -= 1) {
      var other = store.key(i);
      if (other && other !== key && other.indexOf(DRAFT_PREFIX) === 0) { store.removeItem(other); }
    }
    if (!inspection.length && keep.length) {
      inspection = keep;
      ui.report($("session-msg"), say(ngettext(
        "Inspection draw recovered: %(count)s ball typed before, kept on this console until the session opens.",
        "Inspection draw recovered: %(count)s balls typed before, kept on this console until the session opens.",
        keep.length), {count: keep.length}), "info");
    }
  }

  /* The check rows the server named in a refusal (checks_missing, checks_failed): outlined until ticked. */
  function markChecks(names) {
    MATERIAL_CHECKS.forEach(function (name) {
      var row = doc.querySelector('.check-row[data-check="' + name + '"]');
      if (row) { row.classList.toggle("is-missing", names.indexOf(name) >= 0); }
    });
  }

  /* A message the caller must see now: brought into view wherever the page is scrolled. */
  function reveal(box) {
    if (box && !box.hidden && box.scrollIntoView) { box.scrollIntoView({block: "nearest"}); }
  }

  function renderInspection() {
    var counts = {};
    inspection.forEach(function (n) { counts[n] = (counts[n] || 0) + 1; });
    var missing = [];
    var repeated = [];
    for (var n = 1; n <= 90; n += 1) {
      var c = counts[n] || 0;
      var cell = $("inspect-board-" + n);
      cell.className = "board90__cell " + (c === 0 ? "is-missing" : c === 1 ? "is-once" : "is-repeated");
      cell.title = c > 1 ? say(gettext("%(number)s entered %(count)s times"), {number: n, count: c}) : "";
      if (c === 0) { missing.push(n); }
      if (c > 1) { repeated.push(n + " ×" + c); }
    }
    var outOfRange = inspection.filter(function (x) { return x < 1 || x > 90; });
    var summary = $("inspect-summary");
    var complete = inspection.length === 90 && !missing.length && !repeated.length && !outOfRange.length;
    fill(summary,
      el("div", {class: "inspect-count" + (complete ? " is-complete" : "")},
        el("strong", {id: "inspect-count", text: String(inspection.length)}), " " + gettext("of 90 balls entered")),
      missing.length ? el("div", {class: "inspect-missing"},
        el("strong", {text: say(gettext("Missing (%(count)s):"), {count: missing.length}) + " "}),
        missing.length > 30 ? missing.slice(0, 30).join(", ") + "…" : missing.join(", ")) : null,
      repeated.length ? el("div", {class: "inspect-repeated"},
        el("strong", {text: gettext("Repeated:") + " "}), repeated.join(", ")) : null,
      outOfRange.length ? el("div", {class: "inspect-repeated"},
        el("strong", {text: gettext("Out of 1–90:") + " "}), outOfRange.join(", ")) : null,
      complete ? el("div", {class: "inspect-ok", text: gettext("All 90 balls, each once.")}) : null);
    var seq = $("inspect-seq");
    fill(seq, inspection.slice(-24).map(function (x) {
      return el("span", {class: "chip" + ((counts[x] || 0) > 1 || x < 1 || x > 90 ? " is-bad" : ""), text: x});
    }));
    if (inspection.length > 24) { seq.insertBefore(el("span", {class: "muted", text: "… "}), seq.firstChild); }
  }

  function addInspection(numbers) {
    numbers.forEach(function (n) { if (isFinite(n)) { inspection.push(n); } });
    renderInspection();
    saveDraft();
  }

  /* --- commands ------------------------------------------------------------------------------------- */

  function gameUrl(suffix) { return "/api/games/" + game.id + "/" + (suffix ? suffix + "/" : ""); }

  // What a command changed arrives as events on the console's stream: the answers only say how it went.
  function after(box, message) {
    return function (response) {
      if (message) { ui.report(box, typeof message === "function" ? message(response.data) : message, "ok"); }
      return response;
    };
  }

  /* A change behind four eyes answers 202 with its proposal: it waits for a second person. */
  function proposedText(proposal) {
    return say(gettext("Proposal no. %(id)s: a second person approves it on the proposals page with their own password."),
      {id: proposal.id});
  }

  function failed(box) {
    return function (err) { ui.report(box, err); };
  }

  function wire() {
    // Boards are built once and lit by render().
    var board = $("console-board");
    var inspectBoard = $("inspect-board");
    for (var n = 1; n <= 90; n += 1) {
      board.appendChild(el("div", {class: "board90__cell", id: "console-board-" + n, text: n}));
      inspectBoard.appendChild(el("div", {class: "board90__cell is-missing", id: "inspect-board-" + n, text: n}));
    }

    $("inspect-form").addEventListener("submit", function (event) {
      event.preventDefault();
      var input = $("inspect-number");
      var value = input.value.trim();
      if (value === "") { return; }
      addInspection([parseInt(value, 10)]);
      input.value = "";
      input.focus();
    });
    $("inspect-undo").addEventListener("click", function () { inspection.pop(); renderInspection(); saveDraft(); });
    $("inspect-clear").addEventListener("click", function () {
      if (!inspection.length || global.confirm(say(ngettext("Clear the %(count)s ball entered?",
        "Clear the %(count)s balls entered?", inspection.length), {count: inspection.length}))) {
        inspection = [];
        renderInspection();
        saveDraft();
      }
    });
    $("inspect-paste-add").addEventListener("click", function () {
      var text = $("inspect-paste").value;
      var numbers = (text.match(/-?\d+/g) || []).map(function (x) { return parseInt(x, 10); });
      addInspection(numbers);
      $("inspect-paste").value = "";
    });
    MATERIAL_CHECKS.forEach(function (name) {
      $("check-" + name).addEventListener("change", function (event) {
        if (event.currentTarget.checked && !(checks[name] && checks[name].ok)) {
          recordCheck(name, true).then(null, function () { /* reported */ });
        } else { renderChecks(); }   // a check recorded stays recorded: the minutes keep it
      });
      wireCheckFailure(name);
    });
    // Every click is answered on screen at once ("Opening…"), then with the opening or the refusal in the
    // server's words, brought into view; the checks a refusal names are outlined.
    $("session-open-btn").addEventListener("click", function (event) {
      var box = $("session-msg");
      var button = event.currentTarget;
      ui.report(box, gettext("Opening the session…"), "info");
      reveal(box);
      markChecks([]);
      ui.busy(button, function () {
        // The material checks are the ones recorded as they were ticked (the server refuses, naming them,
        // any not recorded as working): the opening sends the inspection draw only.
        return api.post("/api/rooms/" + roomId + "/sessions/", {inspection_balls: inspection});
      }).then(function (response) {
        dropDraft();
        inspection = [];
        checks = {};
        renderChecks();
        ui.report(box, null);
        ui.report($("page-msg"), say(gettext("Session %(id)s is open."), {id: response.data.id}), "ok");
        reveal($("page-msg"));
      }, function (err) {
        if (err.code === "session_already_open") {
          // Opened meanwhile (another console): this part of the page goes; the page says so at its top.
          ui.report(box, null);
          ui.report($("page-msg"), err);
          reveal($("page-msg"));
          stream.resync();
          return;
        }
        if (err.code === "checks_missing" || err.code === "checks_failed") {
          markChecks((err.details && err.details.checks) || []);
        }
        ui.report(box, err);
        reveal(box);
      });
    });

    Array.prototype.forEach.call(doc.querySelectorAll("#steps [data-step]"), function (button) {
      button.addEventListener("click", function () {
        var step = button.getAttribute("data-step");
        ui.busy(button, function () { return api.post(gameUrl(step)); })
          .then(after($("game-msg"), say(gettext("%(step)s: done."), {step: button.textContent})), failed($("game-msg")));
      });
    });

    $("create-game").addEventListener("submit", function (event) {
      event.preventDefault();
      var form = event.currentTarget;
      var body = {room: roomId, draw_source: form.querySelector('input[name="draw_source"]:checked').value};
      var pace = form.querySelector('input[name="pace_seconds"]').value.trim();
      if (pace) { body.pace_seconds = pace; }
      var chosenSet = $("game-ball-set").value;
      if (chosenSet) { body.ball_set = Number(chosenSet); }
      ui.busy(form.querySelector("button[type=submit]"), function () { return api.post("/api/games/", body); })
        .then(function (response) {
          lastVerdict = null;
          ui.report($("game-msg"), say(gettext("Game %(number)s created: open the sales."), {number: response.data.number}), "ok");
        }, failed($("game-msg")));
    });

    $("pick-program").addEventListener("change", renderPicks);
    $("pick-form").addEventListener("submit", function (event) {
      event.preventDefault();
      var program = selectedPick();
      var box = $("pick-msg");
      if (!game || !program) { return; }
      var parts = PICKS[program.type];
      var body = {program: program.id};
      var read = fmt.readAmount($("pick-amount").value);   // "1.234,56" as "1234.56" (never a float)
      if (parts.amount && read.problem) {
        ui.report($("pick-msg"), {code: "bad_amount", message: read.problem});
        return;
      }
      var amount = read.amount;
      var maxBall = $("pick-max-ball").value.trim();
      var colour = $("pick-colour").value;
      if (parts.amount && amount) { body.amount = amount; }
      if (parts.max_ball && maxBall) { body.max_ball = Number(maxBall); }
      if (parts.colour && colour) { body.colour = colour; }
      ui.busy($("pick-submit"), function () { return api.post(gameUrl("picks"), body); })
        .then(function (response) {
          var pick = response.data || {};
          var said = [program.name || program.type];
          if (pick.amount) { said.push(money(pick.amount)); }
          if (pick.max_ball) { said.push(say(gettext("max ball %(ball)s"), {ball: pick.max_ball})); }
          if (pick.colour) { said.push(say(gettext("colour %(colour)s"), {colour: colourName(pick.colour)})); }
          ui.report(box, say(gettext("Pick set for game %(number)s: %(pick)s."),
            {number: game.number, pick: said.join(" · ")}), "ok");
        }, failed(box));
    });

    $("void-form").addEventListener("submit", function (event) {
      event.preventDefault();
      var reason = $("void-reason").value.trim();
      if (!game) { return; }
      if (!global.confirm(say(gettext("Void game %(number)s? This cannot be undone."), {number: game.number}))) { return; }
      ui.busy(event.currentTarget.querySelector("button"), function () {
        return api.post(gameUrl("void"), {reason: reason, public_message: $("void-message").value.trim()});
      }).then(function (response) {
        $("void-reason").value = "";
        $("void-message").value = "";
        $("void-box").open = false;
        // Four eyes: the void is proposed; a second person approves it with their own password.
        return after($("game-msg"), proposedText(response.data.proposal))(response);
      }, failed($("game-msg")));
    });

    $("device-form").addEventListener("submit", function (event) {
      event.preventDefault();
      if (!game) { return; }
      var reason = $("device-reason").value.trim();
      var body = {device: Number($("device-select").value), reason: reason};
      ui.busy(event.currentTarget.querySelector("button"), function () {
        return api.post(gameUrl("device"), body);
      }).then(function (response) {
        $("device-reason").value = "";
        $("device-box").open = false;
        return after($("game-msg"), say(gettext("The draw goes on with %(name)s after ball %(ordinal)s."),
          {name: response.data.to_device, ordinal: response.data.at_ordinal}))(response);
      }, failed($("game-msg")));
    });

    $("session-close-btn").addEventListener("click", function (event) {
      if (!room || !room.open_session) { return; }
      if (!global.confirm(say(gettext("Close session %(id)s?"), {id: room.open_session}))) { return; }
      ui.busy(event.currentTarget, function () {
        return api.post("/api/sessions/" + room.open_session + "/close/");
      }).then(function () {
        ui.report($("page-msg"), gettext("Session closed."), "ok");
        lastVerdict = null;
      }, failed($("session-close-msg")));
    });

    $("ball-form").addEventListener("submit", function (event) {
      event.preventDefault();
      var input = $("ball-input");
      var box = $("ball-msg");
      var number = Number(input.value);
      if (!game) { return; }
      if (!input.value || !Number.isInteger(number) || number < 1 || number > 90) {
        ui.report(box, {message: gettext("Type the ball's number, 1 to 90."), code: "ball_out_of_range"}, "error");
        input.select();
        return;
      }
      // Emptied at once: the next ball is typed into an empty field while this one waits its turn.
      input.value = "";
      input.focus();
      queueBall(number);
    });

    $("correct-ordinal").addEventListener("input", renderCorrectHint);
    $("correct-form").addEventListener("submit", function (event) {
      event.preventDefault();
      if (!game) { return; }
      var box = $("correct-msg");
      var body = {ordinal: Number($("correct-ordinal").value), number: Number($("correct-number").value),
        reason: $("correct-reason").value.trim()};
      ui.busy($("correct-submit"), function () { return api.post(gameUrl("corrections"), body); })
        .then(function (response) {
          var c = response.data;
          ui.report(box, response.status === 202 ? proposedText(c.proposal) : say(gettext("Ball %(ordinal)s corrected: %(old)s → %(new)s."),
            {ordinal: c.ordinal, old: c.old, "new": c.new}), "ok");
          $("correct-number").value = "";
          $("correct-reason").value = "";
        }, failed(box));
    });

    $("claim-form").addEventListener("submit", function (event) {
      event.preventDefault();
      if (!game) { return; }
      var box = $("claim-msg");
      var values = {
        kind: doc.querySelector('#claim-form input[name="kind"]:checked').value,
        series: $("claim-series").value.trim(),
        serial: Number($("claim-serial").value)
      };
      var gameId = game.id;
      var body = {kind: values.kind, series: values.series, serial: values.serial,
        idempotency_key: claimIntent.keyFor([gameId, values])};
      ui.busy(event.currentTarget.querySelector("button[type=submit]"), function () {
        return api.post(gameUrl("claims"), body);
      }).then(function (response) {
        claimIntent.done();
        lastVerdict = {game: gameId, claim: response.data};
        ui.report(box, null);
        $("claim-serial").value = "";
        render();
      }, function (err) {
        if (err.status >= 400 && err.status < 500) { claimIntent.done(); }
        failed(box)(err);
      });
    });

    $("confirm-btn").addEventListener("click", function (event) {
      if (!game || !game.claim_window) { return; }
      var kind = game.claim_window;
      ui.busy(event.currentTarget, function () { return api.post(gameUrl("confirm"), {kind: kind}); })
        .then(after($("claim-msg"), function (result) {
          var values = {amount: money(result.amount), count: result.winners, cards: result.awards.map(function (a) {
            return cardName(a.series, a.serial) + " " + money(a.amount);
          }).join(", "), remainder: money(result.remainder)};
          var paid = result.kind === "line"
            ? ngettext("Line paid: %(amount)s to %(count)s card (%(cards)s)", "Line paid: %(amount)s to %(count)s cards (%(cards)s)",
              result.winners)
            : ngettext("Bingo paid: %(amount)s to %(count)s card (%(cards)s)", "Bingo paid: %(amount)s to %(count)s cards (%(cards)s)",
              result.winners);
          return say(paid, values) + (Number(result.remainder) ? say(gettext(", remainder %(remainder)s"), values) : "") + ".";
        }), failed($("claim-msg")));
    });

    api.get("/api/series/?venue=" + venueId).then(function (series) {
      fill($("series-codes"), series.map(function (s) { return el("option", {value: s.code}); }));
      if (series.length && !$("claim-series").value) { $("claim-series").value = series[0].code; }
    }, function () { /* the series field still takes a typed code */ });
  }

  wire();
  renderInspection();
  var scheme = global.location.protocol === "https:" ? "wss://" : "ws://";
  stream = new global.ConsoleStream({
    socketUrl: scheme + global.location.host + "/ws/console/rooms/" + roomId + "/",
    snapshotUrl: "/api/rooms/" + roomId + "/console/",
    seqUrl: "/api/rooms/" + roomId + "/console/seq/",
    onSnapshot: onSnapshot,
    onEvent: onEvent,
    onStatus: onStatus
  });
  stream.start();
})(window);
