/*
 * The bingo section of a hall screen: current ball with its colour, the last five, the 90-number board,
 * cards sold, Line and Bingo prizes, the sales announcement, claim verification and winners, and the
 * accumulated prizes (bolsa acumulada programs) in play: name, amount, max ball or colour, announced with
 * the Line and Bingo prizes at the close of sales (before the first ball, BA-G4), then won or not with the
 * Bingo; "programs.due" notices tell the hall that the next game serves a scheduled hour.
 *
 * State is the snapshot's game summary (bingo.traditional.services.readmodels.game_summary); each event of the room's
 * stream updates it and the whole section is redrawn from it (cheap, and never half-updated). An event
 * that does not fit the state (another game, a ball out of order) asks for a fresh snapshot.
 *
 * The caller's voice (bingo.traditional.voice, played by halls/voice.js on the room's audio screen only): each ball as
 * it is drawn ("el cuarenta y cinco"), the series on sale (S3), the sales announcement with the prizes and
 * max balls (S6–S8), the start (S9), a valid Line or Bingo with "¿Alguna línea más?" (S14) and the closing
 * (S15). Only live events speak: a snapshot (a reload, a resync) never replays what was said.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var $ = function (id) { return doc.getElementById(id); };

  // What the hall reads: the public screen's own words (pgettext "screen"), not the console's.
  var STATE_LABELS = {
    scheduled: pgettext("screen", "Next game"),
    on_sale: pgettext("screen", "Cards on sale"),
    sales_closed: pgettext("screen", "Sales closed"),
    drawing: pgettext("screen", "In play"),
    paused: pgettext("screen", "Paused"),
    closed: pgettext("screen", "Finished"),
    void: pgettext("screen", "Void")
  };
  var KIND_LABELS = {line: pgettext("screen", "Line"), bingo: pgettext("screen", "Bingo")};
  var COLOUR_LABELS = {   // "Bola Roja": the colour of a ball
    red: pgettext("ball", "Red"), yellow: pgettext("ball", "Yellow"), green: pgettext("ball", "Green"),
    blue: pgettext("ball", "Blue"), purple: pgettext("ball", "Purple"), orange: pgettext("ball", "Orange"),
    pink: pgettext("ball", "Pink"), white: pgettext("ball", "White"), black: pgettext("ball", "Black"),
    brown: pgettext("ball", "Brown"), grey: pgettext("ball", "Grey"), cyan: pgettext("ball", "Cyan")
  };
  function say(text, values) { return interpolate(text, values, true); }
  var LINE_OVERLAY_MS = 15000;
  var BINGO_OVERLAY_MS = 30000;
  var INVALID_CLAIM_MS = 15000;
  var PRIZE_MIN_MS = 4000;   // a winner stays up at least this long, even if the next ball comes sooner
  var CORRECTION_MS = 30000; // "Bola corregida: 45 → 54" stays up this long

  var game = null;           // the game summary being shown, or null
  var validBingoPending = false;
  var claim = null;          // the claim under verification shown in the overlay
  var claimTimer = null;
  var prizeTimer = null;
  var prizeShownAt = 0;
  var lastRenderedBall = null;
  var correctionTimer = null;
  var digests = [];          // the programs in force and their short digests: [{code, name, digest_short}]
  var dueNotices = [];       // "programs.due" notices for the next game: [{code, name, slot, operating_day}]

  /* --- small helpers ------------------------------------------------------------------------------ */

  function el(tag, className, text) {
    var node = doc.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }

  function ballNode(ball, size) {
    var node = el("li", "ball ball--" + size);
    node.setAttribute("data-colour", ball.colour || "");
    node.setAttribute("data-ball", String(ball.ball));
    node.setAttribute("data-corrected", isCorrected(ball) ? "true" : "false");
    var face = el("span", "ball__face");
    face.appendChild(el("span", "ball__num", ball.ball));
    node.appendChild(face);
    return node;
  }

  function isCorrected(ball) { return ball.corrected_from !== null && ball.corrected_from !== undefined; }

  function drawnSet() {
    var set = {};
    (game ? game.balls : []).forEach(function (b) { set[b.ball] = b.ordinal; });
    return set;
  }

  function cardLabel(series, serial) {
    return say(pgettext("screen", "Series %(series)s · Card no. %(serial)s"), {series: series, serial: serial});
  }
  function cardShort(series, serial) {   // "P2 · nº 1", the no-break space keeps the number with its sign
    return say(pgettext("screen", "%(series)s · no.\u00a0%(serial)s"), {series: series, serial: serial});
  }

  /* --- the board ---------------------------------------------------------------------------------- */

  function buildBoard() {
    var board = $("board");
    for (var n = 1; n <= 90; n += 1) {
      var cell = el("div", "board__cell", n);
      cell.id = "board-" + n;
      board.appendChild(cell);
    }
  }

  /* --- rendering ---------------------------------------------------------------------------------- */

  function render(screen) {
    var section = $("bingo");
    var state = game ? game.state : "none";
    section.setAttribute("data-state", state);
    section.setAttribute("data-claim-window", game ? game.claim_window || "" : "");
    renderHead();
    renderBalls();
    renderBoard();
    renderSide(screen);
    renderPrograms(screen);
    renderFoot(screen);
    renderDrawProof();
    updateHold();
  }

  /* The room's own announcements come first (halls/screen.js "Priority"): while a claim is verified, the
     claim band asks "¿Algún bingo más?" or a winner is up, table and machine hits wait. */
  function updateHold() {
    var screen = global.HallScreen.screen;
    var busy = !$("claim-overlay").hidden || !$("prize-overlay").hidden || !!(game && game.claim_window);
    screen.hold("bingo", busy);
  }

  function renderHead() {
    var slot = $("screen-head-slot");
    clear(slot);
    if (!game) { return; }
    slot.appendChild(el("span", "head-game", say(pgettext("screen", "Game %(number)s"), {number: game.number})));
    var pill = el("span", "head-state head-state--" + game.state, STATE_LABELS[game.state] || game.state);
    pill.id = "game-state";
    slot.appendChild(pill);
  }

  function renderBalls() {
    var balls = game ? game.balls : [];
    var current = balls.length ? balls[balls.length - 1] : null;
    var big = $("current-ball");
    var number = current ? String(current.ball) : "";
    big.setAttribute("data-ball", number);
    big.setAttribute("data-colour", current ? current.colour || "" : "");
    big.setAttribute("data-corrected", current && isCorrected(current) ? "true" : "false");
    $("current-ball-number").textContent = number;
    if (current && lastRenderedBall !== null && lastRenderedBall !== current.ordinal + ":" + current.ball) {
      // Restart the arrival animation.
      big.classList.remove("is-new");
      void big.offsetWidth;
      big.classList.add("is-new");
    }
    lastRenderedBall = current ? current.ordinal + ":" + current.ball : "";
    $("ball-ordinal").textContent = current
      ? say(pgettext("screen", "Ball %(ordinal)s of 90"), {ordinal: current.ordinal}) : "\u00a0";
    var list = $("last-balls");
    clear(list);
    balls.slice(Math.max(0, balls.length - 6), Math.max(0, balls.length - 1)).reverse().forEach(function (b) {
      list.appendChild(ballNode(b, "sm"));
    });
  }

  function renderBoard() {
    var drawn = drawnSet();
    var balls = game ? game.balls : [];
    var last = balls.length ? balls[balls.length - 1].ball : null;
    var corrected = {};
    balls.forEach(function (b) { if (isCorrected(b)) { corrected[b.ball] = true; } });
    for (var n = 1; n <= 90; n += 1) {
      var cell = $("board-" + n);
      var lit = Object.prototype.hasOwnProperty.call(drawn, n);
      cell.classList.toggle("is-drawn", lit);
      cell.classList.toggle("is-last", n === last);
      cell.classList.toggle("is-corrected", !!corrected[n]);
    }
  }

  function renderWinners(list, kind) {
    clear(list);
    (game ? game.prizes : []).forEach(function (prize) {
      if (prize.kind !== kind) { return; }
      // A network prize won in several halls names each card's hall (one hall: the "where" line says it).
      var halls = {};
      prize.winners.forEach(function (w) { if (w.hall) { halls[w.hall] = true; } });
      var many = Object.keys(halls).length > 1;
      prize.winners.forEach(function (w) {
        list.appendChild(el("li", null, cardShort(w.series, w.serial) + (many && w.hall ? " · " + w.hall : "")));
      });
    });
  }

  /* Where a network prize was won (decided at the central, in whichever hall): its ball and its halls. */
  function renderWhere(box, kind) {
    var prize = (game ? game.prizes : []).filter(function (p) { return p.kind === kind; })[0];
    var halls = [];
    (prize ? prize.winners : []).forEach(function (w) {
      if (w.hall && halls.indexOf(w.hall) < 0) { halls.push(w.hall); }
    });
    box.hidden = !halls.length;
    box.textContent = halls.length
      ? say(pgettext("screen", "Ball %(ordinal)s · %(halls)s"), {ordinal: prize.ordinal, halls: halls.join(", ")}) : "";
  }

  function renderSide(screen) {
    $("cards-sold").textContent = game ? String(game.cards_sold) : "0";
    $("line-prize").textContent = game ? screen.money(game.line_prize) : "—";
    $("bingo-prize").textContent = game ? screen.money(game.bingo_prize) : "—";
    renderWinners($("line-winners"), "line");
    renderWinners($("bingo-winners"), "bingo");
    renderWhere($("line-where"), "line");
    renderWhere($("bingo-where"), "bingo");
    var lineWon = game && game.prizes.some(function (p) { return p.kind === "line"; });
    var bingoWon = game && game.prizes.some(function (p) { return p.kind === "bingo"; });
    $("line-stat").classList.toggle("is-won", !!lineWon);
    $("bingo-stat").classList.toggle("is-won", !!bingoWon);
  }

  /* --- accumulated prizes (programs) ------------------------------------------------------------- */

  /* The programs in play in the game: the summary's list (with results), else the announcement's. */
  function programsOf(g) {
    if (!g) { return []; }
    if (g.programs && g.programs.length) { return g.programs; }
    return (g.announcement && g.announcement.programs) || [];
  }

  function programTitle(p) {
    return (p.name || p.type || p.code) + (p.slot ? " (" + p.slot + ")" : "");
  }

  function programTerms(p) {
    var terms = [];
    if (p.max_ball !== null && p.max_ball !== undefined) {
      terms.push(say(pgettext("screen", "Max. ball %(ball)s"), {ball: p.max_ball}));
    }
    if (p.colour) {
      terms.push(say(pgettext("screen", "%(colour)s ball"), {colour: COLOUR_LABELS[p.colour] || p.colour}));
    }
    return terms.join(" · ");
  }

  function winnersText(p, screen) {
    var winners = p.winners || [];
    var cards = winners.map(function (w) { return cardShort(w.series, w.serial); }).join(", ");
    var amount = winners.length > 1 ? say(pgettext("screen", "%(amount)s each"), {amount: screen.money(p.share)})
      : screen.money(p.prize || p.amount);
    return say(pgettext("screen", "Prize! %(amount)s"), {amount: amount}) + (cards ? " · " + cards : "");
  }

  function programNode(p, screen) {
    // Only the server's verdict: the Bingo's prize event may come before the programs' results.
    var won = p.won === true ? "true" : p.won === false ? "false" : "";
    var item = el("li", "program");
    item.setAttribute("data-code", p.code || "");
    item.setAttribute("data-type", p.type || "");
    item.setAttribute("data-won", won);
    var head = el("div", "program__head");
    head.appendChild(el("span", "program__name", programTitle(p)));
    head.appendChild(el("span", "program__amount", screen.money(p.won === true ? p.prize || p.amount : p.amount)));
    item.appendChild(head);
    var foot = el("div", "program__foot");
    if (p.colour) {
      var dot = el("span", "ball ball--dot");
      dot.setAttribute("data-colour", p.colour);
      foot.appendChild(dot);
    }
    var terms = el("span", "program__terms", programTerms(p) || pgettext("screen", "With the Bingo"));
    foot.appendChild(terms);
    if (won === "true") {
      foot.appendChild(el("span", "program__result", winnersText(p, screen)));
    } else if (won === "false") {
      foot.appendChild(el("span", "program__result", pgettext("screen", "Not won")));
    }
    item.appendChild(foot);
    return item;
  }

  /* "Próxima partida: Bingo Extra 12/2 (20:00)" when its pool holds the amount; otherwise the hour is
     served without the prize, and the screen says so rather than promise it. */
  function dueText(notices, screen) {
    var playing = notices.filter(function (n) { return n.reached !== false; });
    var waiting = notices.filter(function (n) { return n.reached === false; });
    var label = function (n) { return (n.name || n.code) + (n.slot ? " (" + n.slot + ")" : ""); };
    var parts = [];
    if (playing.length) {
      parts.push(say(pgettext("screen", "Next game: %(programs)s"), {programs: playing.map(label).join(" · ")}));
    }
    waiting.forEach(function (n) {
      parts.push(say(pgettext("screen", "%(program)s: pool %(amount)s, not reached yet"),
        {program: label(n), amount: screen.money(n.amount)}));
    });
    return parts.join(" · ");
  }

  /* "Posted prize tables: Prima 30 3F2A-9C10 · …": what the hall compares with the sheets on the wall. */
  function renderDigests() {
    var node = $("program-digests");
    var shown = digests.filter(function (d) { return d.digest_short; });
    node.hidden = !shown.length;
    node.textContent = shown.length ? node.getAttribute("data-label") + ": " + shown.map(function (d) {
      return (d.name || d.code) + " " + d.digest_short;
    }).join(" · ") : "";
  }

  /* The first two groups of a digest, as the server's short form ("3F2A-9C10"). */
  function shortDigest(hex) {
    return hex ? (hex.slice(0, 4) + "-" + hex.slice(4, 8)).toUpperCase() : "";
  }

  function onProgramChange(type, data) {
    // A version that takes effect later is not in force yet: the next snapshot shows it when it is.
    if (type === "programs.changed" && data.effective_from && Date.parse(data.effective_from) > Date.now()) { return; }
    digests = digests.filter(function (d) { return d.code !== data.code; });
    if (type !== "programs.deactivated") {
      digests.push({code: data.code, name: data.name, digest_short: shortDigest(data.digest)});
    }
    renderDigests();
  }

  function renderPrograms(screen) {
    var list = $("programs-list");
    var playing = programsOf(game);
    clear(list);
    playing.forEach(function (p) { list.appendChild(programNode(p, screen)); });
    var due = $("programs-due");
    due.hidden = !dueNotices.length;
    due.textContent = dueNotices.length ? dueText(dueNotices, screen) : "";
    due.setAttribute("data-reached", dueNotices.some(function (n) { return n.reached !== false; }) ? "true" : "false");
    var shown = playing.length > 0 || dueNotices.length > 0;
    $("programs").hidden = !shown;
    $("programs").setAttribute("data-count", String(playing.length));
    doc.querySelector(".bingo-side").classList.toggle("has-programs", shown);
  }

  /* Merge results (programs.awarded, same shape as the summary's programs) into the game's programs. */
  function applyAwards(awards) {
    var byCode = {};
    (awards || []).forEach(function (a) { byCode[a.code] = a; });
    var merged = programsOf(game).map(function (p) {
      var result = byCode[p.code];
      if (!result) { return p; }
      delete byCode[p.code];
      return Object.assign({}, p, result);
    });
    Object.keys(byCode).forEach(function (code) { merged.push(byCode[code]); });
    game.programs = merged;
  }

  function renderPrizePrograms(screen) {
    var list = $("prize-programs");
    clear(list);
    var won = programsOf(game).filter(function (p) { return p.won === true; });
    won.forEach(function (p) {
      var item = el("li", "prize__program");
      item.setAttribute("data-code", p.code || "");
      item.appendChild(el("span", "prize__program-name", programTitle(p)));
      var many = (p.winners || []).length > 1;
      item.appendChild(el("span", "prize__program-amount",
        many ? say(pgettext("screen", "%(amount)s per card"), {amount: screen.money(p.share)})
          : screen.money(p.prize || p.amount)));
      list.appendChild(item);
    });
    list.hidden = !won.length;
    $("prize-overlay").classList.toggle("has-programs", won.length > 0);
  }

  /* The draw's proof: the commitment of an RNG game's seed (its first 16 hex digits), or that a blower's
     balls are not verifiable by seed; the texts are the template's (data-verifiable, data-blower). */
  function renderDrawProof() {
    var box = $("draw-proof");
    var draw = game ? game.draw : null;
    // An RNG game without commitment (verifiable draws off) shows nothing, as before.
    box.hidden = !game || !draw || (!draw.verifiable && game.draw_source !== "manual");
    if (box.hidden) { box.textContent = ""; return; }
    box.setAttribute("data-state", draw.verifiable ? "verifiable" : "blower");
    box.textContent = draw.verifiable
      ? say(box.getAttribute("data-verifiable"), {short: draw.commitment.slice(0, 16)})
      : box.getAttribute("data-blower");
  }

  function renderFoot(screen) {
    var tag = "";
    var text = "";
    var formula = game && game.announcement ? game.announcement.formula : "";
    if (!game) {
      tag = pgettext("screen", "Bingo");
      text = pgettext("screen", "Waiting for the next game");
    } else if (game.state === "scheduled") {
      tag = say(pgettext("screen", "Game %(number)s"), {number: game.number});
      text = pgettext("screen", "Cards on sale shortly");
    } else if (game.state === "on_sale") {
      tag = pgettext("screen", "Sales open");
      text = say(npgettext("screen", "Get your cards · %(count)s sold", "Get your cards · %(count)s sold",
        game.cards_sold), {count: game.cards_sold});
      var offered = (game.announcement && game.announcement.offered) || [];
      if (offered.length) {   // S3: the series on sale and their face value
        text = say(pgettext("screen", "Series on sale: %(series)s"), {series: offered.map(function (s) {
          return say(pgettext("screen", "%(series)s at %(price)s"), {series: s.series, price: screen.money(s.face_value)});
        }).join(" · ")}) + " · " + text;
      }
    } else if (game.state === "paused" && game.claim_window) {
      tag = game.claim_window === "line" ? pgettext("screen", "Any more lines?") : pgettext("screen", "Any more bingos?");
      text = game.claim_window === "line" ? pgettext("screen", "Checking the line") : pgettext("screen", "Checking the bingo");
    } else if (game.state === "paused") {
      tag = pgettext("screen", "Pause");
      text = formula || pgettext("screen", "Game paused");
    } else if (game.state === "closed") {
      tag = pgettext("screen", "Finished");
      var bingo = game.prizes.filter(function (p) { return p.kind === "bingo"; })[0];
      text = bingo ? say(bingo.winners.length > 1 ? pgettext("screen", "Bingo: %(cards)s · %(amount)s each")
        : pgettext("screen", "Bingo: %(cards)s · %(amount)s"), {cards: bingo.winners.map(function (w) {
          return cardLabel(w.series, w.serial);
        }).join(", "), amount: screen.money(bingo.share)})
        : pgettext("screen", "Game finished");
    } else if (game.state === "void") {
      tag = pgettext("screen", "Void");
      // The public message only: the reason is internal and never reaches a screen.
      text = game.void_message || pgettext("screen", "Game void");
    } else {
      tag = game.state === "drawing" ? pgettext("screen", "Sales") : pgettext("screen", "Sales closed");
      text = formula || "";
    }
    $("foot-tag").textContent = tag;
    $("foot-text").textContent = text;
  }

  /* --- claim verification overlay ----------------------------------------------------------------- */

  function missingNumbers(grid, kind, drawn) {
    var rows = grid.map(function (row) {
      return row.filter(function (n) { return n && !drawn[n]; });
    });
    if (kind === "bingo") { return [].concat.apply([], rows).sort(function (a, b) { return a - b; }); }
    return rows.reduce(function (best, row) { return row.length < best.length ? row : best; });
  }

  function refusalText(data, drawn) {
    switch (data.refusal) {
      case "not_sold": return pgettext("screen", "The card is not sold in this game");
      case "line_already_won":
        return game && game.line_won_at
          ? say(pgettext("screen", "The line was already won at ball %(ordinal)s"), {ordinal: game.line_won_at})
          : pgettext("screen", "The line was already won");
      case "game_closed": return pgettext("screen", "The game is closed");
      case "no_balls": return pgettext("screen", "No ball has been drawn yet");
      case "not_complete":
        if (data.master_card) {
          var missing = missingNumbers(data.master_card, data.kind, drawn);
          if (missing.length) { return say(pgettext("screen", "Missing: %(numbers)s"), {numbers: missing.join(", ")}); }
        }
        return data.kind === "line" ? pgettext("screen", "The line is not complete")
          : pgettext("screen", "The card is not complete");
      default: return data.reason || pgettext("screen", "Claim not valid");
    }
  }

  function showClaim(data) {
    claim = data;
    global.clearTimeout(claimTimer);
    hidePrize();
    var overlay = $("claim-overlay");
    var drawn = drawnSet();
    $("claim-kind").textContent = say(pgettext("screen", "Checking %(kind)s"), {kind: KIND_LABELS[data.kind] || data.kind});
    $("claim-card").textContent = cardLabel(data.series, data.serial);
    var grid = $("claim-grid");
    clear(grid);
    grid.classList.toggle("is-empty", !data.master_card);
    if (data.master_card) {
      data.master_card.forEach(function (row, r) {
        var rowNode = el("div", "master-card__row");
        if (data.valid && data.kind === "line" && data.winning_row === r) { rowNode.classList.add("is-winning"); }
        row.forEach(function (n) {
          var cell = el("div", "master-card__cell", n || "");
          if (!n) { cell.classList.add("is-blank"); } else if (drawn[n]) { cell.classList.add("is-drawn"); }
          rowNode.appendChild(cell);
        });
        grid.appendChild(rowNode);
      });
    } else {
      grid.appendChild(el("div", "master-card__none", pgettext("screen", "Card not sold in this game")));
    }
    var verdict = $("claim-verdict");
    verdict.className = "claim__verdict " + (data.valid ? "is-valid" : "is-invalid");
    verdict.textContent = data.valid
      ? (data.kind === "line" ? pgettext("screen", "Valid line") : pgettext("screen", "Valid bingo"))
      : say(pgettext("screen", "Not valid · %(why)s"), {why: refusalText(data, drawn)});
    overlay.setAttribute("data-valid", data.valid ? "true" : "false");
    overlay.hidden = false;
    updateHold();
    if (!data.valid) {
      claimTimer = global.setTimeout(hideClaim, INVALID_CLAIM_MS);
    }
  }

  function hideClaim() {
    claim = null;
    global.clearTimeout(claimTimer);
    $("claim-overlay").hidden = true;
    updateHold();
  }

  /* --- a corrected ball ------------------------------------------------------------------------- */

  /* A mis-keyed ball put right (ball.corrected): same place and time, the new number and colour; the
     claims judged again come with the event, and the hall is told which number changed. */
  function applyCorrection(data, screen) {
    var ball = game.balls[data.ordinal - 1];
    if (!ball) {
      screen.resync();
      return false;
    }
    if (!isCorrected(ball)) { ball.corrected_from = data.old; }
    ball.ball = data.ball;
    ball.colour = data.colour;
    if (data.claim_window !== undefined) { game.claim_window = data.claim_window; }
    if (data.line_won_at !== undefined) { game.line_won_at = data.line_won_at; }
    validBingoPending = game.claim_window === "bingo";
    (data.claims || []).forEach(function (c) {
      if (claim && claim.claim === c.claim) { showClaim(Object.assign({}, claim, c)); }
    });
    var box = $("correction-notice");
    box.textContent = box.getAttribute("data-text").replace("%(old)s", data.old).replace("%(new)s", data.ball);
    box.hidden = false;
    global.clearTimeout(correctionTimer);
    correctionTimer = global.setTimeout(hideCorrection, CORRECTION_MS);
    return true;
  }

  function hideCorrection() {
    global.clearTimeout(correctionTimer);
    $("correction-notice").hidden = true;
  }

  /* --- winner overlay ----------------------------------------------------------------------------- */

  function showPrize(data, screen) {
    hideClaim();
    global.clearTimeout(prizeTimer);
    $("prize-title").textContent = data.kind === "line" ? pgettext("screen", "Line!") : pgettext("screen", "Bingo!");
    var many = data.winners.length > 1;
    $("prize-amount").textContent = many
      ? say(pgettext("screen", "%(amount)s per card"), {amount: screen.money(data.share)})
      : screen.money(data.amount);
    var list = $("prize-winners");
    clear(list);
    data.winners.forEach(function (w) {
      var item = el("li", "prize__winner");
      item.appendChild(el("span", "prize__series", say(pgettext("screen", "Series %(series)s"), {series: w.series})));
      item.appendChild(el("span", "prize__serial", say(pgettext("screen", "Card no. %(serial)s"), {serial: w.serial})));
      if (w.hall) { item.appendChild(el("span", "prize__hall", w.hall)); }
      list.appendChild(item);
    });
    $("prize-note").textContent = many
      ? say(pgettext("screen", "Prize of %(amount)s shared by %(count)s cards"),
        {amount: screen.money(data.amount), count: data.winners.length})
      : say(pgettext("screen", "Won at ball %(ordinal)s"), {ordinal: data.ordinal});
    var overlay = $("prize-overlay");
    overlay.setAttribute("data-kind", data.kind);
    if (data.kind === "bingo") {
      renderPrizePrograms(screen);
    } else {
      $("prize-programs").hidden = true;
      overlay.classList.remove("has-programs");
    }
    overlay.hidden = false;
    updateHold();
    prizeShownAt = Date.now();
    prizeTimer = global.setTimeout(hidePrize, data.kind === "line" ? LINE_OVERLAY_MS : BINGO_OVERLAY_MS);
  }

  /* The draw has moved on: let the winner go once it has been up for the minimum time. */
  function releasePrize() {
    if ($("prize-overlay").hidden) { return; }
    global.clearTimeout(prizeTimer);
    prizeTimer = global.setTimeout(hidePrize, Math.max(0, prizeShownAt + PRIZE_MIN_MS - Date.now()));
  }

  function hidePrize() {
    global.clearTimeout(prizeTimer);
    $("prize-overlay").hidden = true;
    updateHold();
  }

  /* --- the caller's voice ------------------------------------------------------------------------ */

  function speak(keys, screen) {
    if (!screen.voice || !keys || !keys.length) { return; }
    var pattern = $("bingo").getAttribute("data-voice-url");
    screen.voice.say(keys.map(function (key) { return pattern.replace("KEY", key); }));
  }

  /* --- snapshot and events ------------------------------------------------------------------------ */

  /* After a reload: the room's programs say which scheduled hour the next game would serve with its
     prize in play ("next"). Only between games: once sales close, the game itself shows its programs. */
  function dueFromSnapshot(programs, current) {
    if (current && ["sales_closed", "drawing", "paused"].indexOf(current.state) >= 0) { return []; }
    var found = [];
    (programs || []).forEach(function (p) {
      if (p.family !== "scheduled" || !p.next || !p.next.slot) { return; }
      found.push({code: p.code, name: p.name, slot: p.next.slot, amount: p.next.amount, reached: true});
    });
    return found;
  }

  function onSnapshot(data, screen) {
    data = data || {};
    var previous = game;
    game = data.game || null;
    if (data.programs !== undefined) {
      dueNotices = dueFromSnapshot(data.programs, game);
      digests = (data.programs || []).map(function (p) {
        return {code: p.code, name: p.name, digest_short: p.digest_short};
      });
      renderDigests();
    }
    if (!game || (previous && previous.id !== game.id)) {
      hideClaim();
      hidePrize();
      hideCorrection();
      validBingoPending = false;
    }
    if (claim && game && game.state !== "paused") { hideClaim(); }
    render(screen);
  }

  function newGame(data) {
    return {
      id: data.game,
      number: data.number,
      state: data.state,
      state_label: "",
      draw_source: data.draw_source || "",
      draw: data.draw || null,
      cards_sold: 0,
      sales_total: "0",
      line_prize: null,
      bingo_prize: null,
      announcement: {},
      programs: [],
      claim_window: "",
      line_won_at: null,
      balls: [],
      prizes: [],
      void_message: ""
    };
  }

  function onEvent(event, screen) {
    var data = event.data || {};
    if (event.type === "session.opened" || event.type === "session.closed") { return; }
    if (["programs.activated", "programs.changed", "programs.deactivated"].indexOf(event.type) >= 0) {
      onProgramChange(event.type, data);
      return;
    }
    if (event.type === "programs.due") {
      // A scheduled prize is due in the room's next game: replace what we held for those programs.
      var codes = (data.programs || []).map(function (n) { return n.code; });
      dueNotices = dueNotices.filter(function (n) { return codes.indexOf(n.code) < 0; })
        .concat(data.programs || []);
      render(screen);
      return;
    }
    if (data.game === undefined) { return; }   // not about a game (pool meters...): another section's
    if (event.type.indexOf("egame.") === 0) { return; }   // an electronic game: electronic/screen.js's
    if (event.type === "game.created") {
      game = newGame(data);
      hideClaim();
      hidePrize();
      hideCorrection();
      validBingoPending = false;
      render(screen);
      return;
    }
    if (!game || data.game !== game.id) {
      screen.resync();   // an event of a game we do not hold: the snapshot knows which one is on
      return;
    }
    if (data.state) { game.state = data.state; }
    switch (event.type) {
      case "sales.sold":
      case "sales.returned":
        game.cards_sold = data.cards_sold;
        game.sales_total = data.sales_total;
        break;
      case "game.sales_opened":
        if (data.offered && data.offered.length) {
          game.announcement = Object.assign({}, game.announcement, {offered: data.offered});
          speak(data.voice, screen);
        }
        break;
      case "game.sales_closed":
        game.announcement = data.announcement || {};
        speak(game.announcement.voice, screen);
        game.cards_sold = game.announcement.cards_sold;
        game.sales_total = game.announcement.sales_total;
        game.line_prize = game.announcement.line_prize;
        game.bingo_prize = game.announcement.bingo_prize;
        // The programs in play are fixed now; the hour a due notice announced is served by this game.
        game.programs = (game.announcement.programs || []).map(function (p) {
          return Object.assign({won: null}, p);
        });
        dueNotices = [];
        break;
      case "ball.drawn":
        if (data.ordinal !== game.balls.length + 1) {
          screen.resync();
          return;
        }
        game.balls.push({ordinal: data.ordinal, ball: data.ball, colour: data.colour, drawn_at: data.drawn_at});
        speak(["ball-" + data.ball], screen);
        if (claim && !claim.valid) { hideClaim(); }
        releasePrize();
        break;
      case "ball.corrected":
        if (!applyCorrection(data, screen)) { return; }
        break;
      case "claim.verified":
        if (data.claim_window !== undefined) { game.claim_window = data.claim_window; }
        if (data.valid && data.kind === "line" && game.line_won_at === null) { game.line_won_at = data.bound_ordinal; }
        if (data.valid && data.kind === "bingo") { validBingoPending = true; }
        if (data.valid) { speak(data.kind === "line" ? ["line", "more-lines"] : ["bingo", "more-bingos"], screen); }
        showClaim(data);
        break;
      case "prize.awarded":
        game.prizes.push({
          kind: data.kind, ordinal: data.ordinal, amount: data.amount, share: data.share,
          remainder: data.remainder, winners: data.winners
        });
        if (data.kind === "line") {
          game.line_won_at = data.ordinal;
          game.claim_window = validBingoPending ? "bingo" : "";
        } else {
          game.claim_window = "";
        }
        showPrize(data, screen);
        break;
      case "programs.awarded":
        applyAwards(data.awards);
        if (!$("prize-overlay").hidden && $("prize-overlay").getAttribute("data-kind") === "bingo") {
          renderPrizePrograms(screen);
        }
        break;
      case "game.resumed":
        game.claim_window = "";
        if (claim) { hideClaim(); }
        break;
      case "game.closed":
        game.claim_window = "";
        speak(["closing"], screen);
        break;
      case "game.draw_started":
        speak(["start"], screen);
        break;
      case "game.voided":
        game.void_message = data.message || "";
        game.claim_window = "";
        hideClaim();
        hidePrize();
        break;
      default:
        break;
    }
    render(screen);
  }

  buildBoard();
  global.HallScreen.register("bingo", {snapshot: onSnapshot, event: onEvent});
})(window);
