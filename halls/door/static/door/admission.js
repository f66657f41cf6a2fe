/*
 * The door's reception page (/admission/): admit or refuse at the entrance, record who leaves at the exit,
 * admit by override (a second person's own password), record a self-exclusion; the live count of who is
 * inside and this door's last decisions, streamed (ws/door/venues/<id>/: the count after every visit and
 * exit) and polled (fast while the socket is down, slowly besides: nothing depends on a message arriving). Every write goes through /api/venues/<id>/admissions/
 * and /self-exclusions/ with an idempotency key (a retry after a network error replays, never admits
 * twice). A scanner types into the number field like a keyboard: focus returns there after each decision.
 * No document number is ever shown back.
 * The door's alerts (a player inside whose admission was withdrawn: a register listed them or they
 * self-excluded; their cards blocked) are listed from /api/venues/<id>/door-alerts/, reloaded when the stream
 * says door.alert or door.alert_cleared, and acknowledged there. Each decision says how the registers were
 * consulted (online, or the last loaded file because the authority's service did not answer); a
 * self-exclusion offers its receipt's PDF.
 */
(function () {
  "use strict";

  var root = document.getElementById("door");
  if (!root) { return; }
  var byId = HallUi.byId;
  var venue = root.getAttribute("data-venue");
  var canWrite = root.getAttribute("data-can-write") === "true";
  var pollMs = parseInt(root.getAttribute("data-poll-ms"), 10) || 3000;
  var base = "/api/venues/" + venue + "/";
  var DOOR_KEY = "hall.door.name";
  var DOCUMENT_PROBLEMS = ["bad_format", "bad_check_letter", "unknown_country", "not_eu_id_card", "not_spanish"];
  var admitIntent = new HallUi.KeyedIntent("door");

  function decisionText(decision) {
    return {
      admitted: gettext("Admitted"),
      minor: gettext("Refused: a minor"),
      prohibited: gettext("Refused: on a prohibited-access register"),
      self_excluded: gettext("Refused: self-excluded here")
    }[decision] || decision;
  }

  /* A date as a person types it: "17/05/1980" (also 17-05-1980, 17.05.1980, 17051980) or ISO "1980-05-17";
     the ISO text the API reads, or null when it is no date. */
  function readDate(typed) {
    var text = String(typed || "").trim();
    var found = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(text);
    var y, m, d;
    if (found) { y = +found[1]; m = +found[2]; d = +found[3]; }
    else {
      found = /^(\d{1,2})[\/.\-](\d{1,2})[\/.\-](\d{4})$/.exec(text) || /^(\d{2})(\d{2})(\d{4})$/.exec(text);
      if (!found) { return null; }
      d = +found[1]; m = +found[2]; y = +found[3];
    }
    var at = new Date(Date.UTC(y, m - 1, d));
    if (y < 1900 || at.getUTCMonth() !== m - 1 || at.getUTCDate() !== d) { return null; }
    var two = function (n) { return String(n).padStart(2, "0"); };
    return y + "-" + two(m) + "-" + two(d);
  }

  function datePlaceholder() {
    return HallFormat.language === "es" ? gettext("dd/mm/yyyy") : "yyyy-mm-dd";
  }

  function doorName() {
    var input = byId("door-name");
    var name = input.value.trim();
    if (!name) {
      name = gettext("Main door");
      input.value = name;
    }
    try { window.localStorage.setItem(DOOR_KEY, name); } catch (err) { /* private mode: not remembered */ }
    return name;
  }

  function mode() {
    return byId("mode-exit").checked ? "exit" : "entry";
  }

  function needsCountry(kind) {
    return kind === "PASSPORT" || kind === "ID_CARD";
  }

  function showCountry() {
    byId("country-field").hidden = !needsCountry(byId("kind").value);
    byId("selfex-country-field").hidden = !needsCountry(byId("selfex-kind").value);
  }

  function showMode() {
    var exit = mode() === "exit";
    byId("birth-field").hidden = exit;
    byId("admit-submit").textContent = exit ? gettext("Record the exit") : pgettext("door button", "Check");
    byId("override").querySelector("summary").textContent = exit
      ? gettext("The document cannot be read: record the exit of an override")
      : gettext("The document cannot be read: admit by override");
    byId("override-submit").textContent = exit ? gettext("Record the exit") : gettext("Admit by override");
    byId("decision").hidden = true;
    byId("consultation").hidden = true;
    focusNumber();
  }

  function focusNumber() {
    var number = byId("number");
    if (number.focus) { number.focus(); }
  }

  function show(decision, title, detail) {
    var box = byId("decision");
    box.setAttribute("data-decision", decision);
    box.className = "decision decision--" + (decision === "admitted" || decision === "left" ? "ok" : decision === "replayed_left" ? "info" : "bad");
    byId("decision-title").textContent = title;
    byId("decision-detail").textContent = detail || "";
    box.hidden = false;
    byId("consultation").hidden = true;
  }

  function answered(result) {
    var data = result.data;
    var details = [];
    if (data.decision === "prohibited" && data.decided_by_register) {
      details.push(interpolate(gettext("Register: %(name)s (%(code)s)"),
        {name: data.decided_by_register.name, code: data.decided_by_register.code}, true));
    }
    if (data.override) { details.push(gettext("By override, confirmed by a second person.")); }
    if (data.registers_readable === false) {
      details.push(gettext("A register in force could not be consulted: tell the operator."));
    }
    if (data.replayed) { details.push(gettext("Already answered: the same request was sent again.")); }
    show(data.decision, decisionText(data.decision), details.join(" "));
    showConsultation(data.consultation);
  }

  /* How the registers were consulted for the decision shown: a quiet line, a warning for the fallback. */
  function showConsultation(consultation) {
    var line = byId("consultation");
    var text = {
      online: gettext("Registers consulted online."),
      file: gettext("Registers read from the loaded file."),
      file_fallback: gettext("The authority's online service did not answer: the last loaded register file decided.")
    }[consultation];
    line.setAttribute("data-consultation", text ? consultation : "");
    line.textContent = text || "";
    line.hidden = !text;
  }

  function exited(result) {
    var data = result.data;
    if (data.replayed) { show("replayed_left", gettext("Already recorded as leaving")); }
    else { show("left", gettext("Exit recorded")); }
  }

  function clearPerson() {
    byId("number").value = "";
    byId("birth").value = "";
    byId("country").value = "";
    byId("second-username").value = "";
    byId("second-password").value = "";
    byId("override").open = false;
  }

  function submit(override) {
    var box = byId("admit-msg");
    var button = override ? byId("override-submit") : byId("admit-submit");
    var body = {
      kind: byId("kind").value,
      number: byId("number").value,
      country: needsCountry(byId("kind").value) ? byId("country").value.trim() : "",
      door: doorName()
    };
    if (!body.number.trim()) {
      HallUi.report(box, gettext("Type or scan the document's number."), "error");
      focusNumber();
      return;
    }
    var exit = mode() === "exit";
    if (!exit) {
      body.birth_date = readDate(byId("birth").value);
      if (!body.birth_date) {
        HallUi.report(box, interpolate(gettext("Type the date of birth as %(format)s."),
          {format: datePlaceholder()}, true), "error");
        byId("birth").focus();
        return;
      }
    }
    if (override) {
      body.override = true;
      if (!exit) {
        body.second_username = byId("second-username").value;
        body.second_password = byId("second-password").value;
      }
    }
    var url = base + (exit ? "admissions/exits/" : "admissions/");
    if (!exit) {
      var signature = Object.assign({}, body);
      delete signature.second_password;
      body.idempotency_key = admitIntent.keyFor(signature);
    }
    HallUi.busy(button, function () { return HallApi.post(url, body); }).then(function (result) {
      admitIntent.done();
      HallUi.report(box, null);
      if (exit) { exited(result); } else { answered(result); }
      clearPerson();
      refresh();
      focusNumber();
    }, function (err) {
      if (err.status !== 0) { admitIntent.done(); }  // a network error keeps the key: the retry replays
      byId("decision").hidden = true;
      byId("consultation").hidden = true;
      HallUi.report(box, err);
      if (!override && DOCUMENT_PROBLEMS.indexOf(err.code) >= 0) { byId("override").open = true; }
      byId("second-password").value = "";
      focusNumber();
    });
  }

  function recentRow(visit) {
    var text = decisionText(visit.decision);
    if (visit.register) { text += " · " + visit.register; }
    if (visit.override) { text += " · " + gettext("override"); }
    return HallUi.el("tr", {"data-decision": visit.decision},
      HallUi.el("td", {text: HallFormat.time(visit.at)}),
      HallUi.el("td", {}, HallUi.el("span", {class: "door-badge door-badge--" + visit.decision, text: text})),
      HallUi.el("td", {text: visit.left_at ? HallFormat.time(visit.left_at) : "—"}));
  }

  function refresh() {
    var door = canWrite ? byId("door-name").value.trim() : "";
    var url = base + "admissions/live/" + (door ? "?door=" + encodeURIComponent(door) : "");
    return HallApi.get(url).then(function (answer) {
      showCount(answer);
      var body = byId("recent");
      if (!answer.recent.length) {
        HallUi.fill(body, HallUi.el("tr", {}, HallUi.el("td", {colspan: "3", class: "muted",
          text: gettext("No decision yet today.")})));
      } else {
        HallUi.fill(body, answer.recent.map(recentRow));
      }
      HallUi.report(byId("page-msg"), null);
    }, function (err) {
      HallUi.report(byId("page-msg"), err);
    });
  }

  function selfExclude(event) {
    event.preventDefault();
    var box = byId("selfex-msg");
    var kind = byId("selfex-kind").value;
    var body = {
      kind: kind,
      number: byId("selfex-number").value,
      country: needsCountry(kind) ? byId("selfex-country").value.trim() : "",
      until: readDate(byId("selfex-until").value)
    };
    if (!body.number.trim() || !body.until) {
      HallUi.report(box, interpolate(gettext("Type the document's number and the date the self-exclusion ends (%(format)s)."),
        {format: datePlaceholder()}, true), "error");
      return;
    }
    byId("selfex-receipt-line").hidden = true;
    HallUi.busy(byId("selfex-submit"), function () { return HallApi.post(base + "self-exclusions/", body); })
      .then(function (result) {
        HallUi.report(box, interpolate(gettext("Self-exclusion recorded until %(until)s."),
          {until: HallFormat.date(result.data.until + "T12:00:00")}, true), "ok");
        if (result.data.receipt) {
          byId("selfex-receipt").href = result.data.receipt;
          byId("selfex-receipt-line").hidden = false;
        }
        byId("selfex-number").value = "";
        byId("selfex-country").value = "";
        byId("selfex-until").value = "";
        focusNumber();
      }, function (err) { HallUi.report(box, err); });
  }

  if (canWrite) {
    Array.prototype.forEach.call(document.querySelectorAll("[data-date]"), function (input) {
      input.placeholder = datePlaceholder();
    });
    try { byId("door-name").value = window.localStorage.getItem(DOOR_KEY) || ""; } catch (err) { /* none */ }
    byId("admit-form").addEventListener("submit", function (event) { event.preventDefault(); submit(false); });
    byId("override-submit").addEventListener("click", function () { submit(true); });
    byId("kind").addEventListener("change", function () { showCountry(); focusNumber(); });
    byId("selfex-kind").addEventListener("change", showCountry);
    byId("mode-entry").addEventListener("change", showMode);
    byId("mode-exit").addEventListener("change", showMode);
    byId("door-name").addEventListener("change", function () { doorName(); refresh(); });
    byId("selfex-form").addEventListener("submit", selfExclude);
    showCountry();
    focusNumber();
  }
  /* --- the door's alerts: reloaded over HTTP (at start, on the stream's door.alert/door.alert_cleared,
     with every poll); no name and no number, the visit's door and time, the register's code. ------------- */
  function alertTitle(alert) {
    return alert.kind === "register_listed"
      ? gettext("A player inside is now on a prohibited-access register")
      : gettext("A player inside has self-excluded");
  }

  function alertDetail(alert) {
    var parts = [];
    if (alert.admitted_at) {
      parts.push(interpolate(gettext("Admitted at %(time)s at %(door)s."),
        {time: HallFormat.time(alert.admitted_at), door: alert.door || "—"}, true));
    }
    if (alert.register) {
      parts.push(interpolate(gettext("Register: %(code)s, version %(version)s."),
        {code: alert.register, version: alert.register_version}, true));
    }
    parts.push(alert.cards_blocked
      ? interpolate(ngettext("%(n)s card blocked.", "%(n)s cards blocked.", alert.cards_blocked),
        {n: HallFormat.number(alert.cards_blocked)}, true)
      : gettext("No card of theirs to block."));
    parts.push(interpolate(gettext("Alert at %(time)s (player %(player)s)."),
      {time: HallFormat.time(alert.raised_at), player: alert.player}, true));
    return parts.join(" ");
  }

  function acknowledge(alert, button) {
    HallUi.busy(button, function () {
      return HallApi.post(base + "door-alerts/" + alert.id + "/acknowledge/", {});
    }).then(loadAlerts, function (err) { HallUi.report(byId("page-msg"), err); });
  }

  function alertItem(alert) {
    var button = canWrite ? HallUi.el("button", {type: "button", class: "btn-primary door-alert__ack",
      text: gettext("Acknowledge")}) : null;
    if (button) { button.addEventListener("click", function () { acknowledge(alert, button); }); }
    return HallUi.el("li", {class: "door-alert", "data-alert": String(alert.id), "data-kind": alert.kind},
      HallUi.el("div", {class: "door-alert__body"},
        HallUi.el("div", {class: "door-alert__title", text: alertTitle(alert)}),
        HallUi.el("div", {class: "door-alert__detail", text: alertDetail(alert)})),
      button);
  }

  function loadAlerts() {
    return HallApi.get(base + "door-alerts/").then(function (alerts) {
      var panel = byId("alerts");
      HallUi.fill(byId("alert-list"), alerts.map(alertItem));
      byId("alerts-count").textContent = alerts.length ? HallFormat.number(alerts.length) : "";
      panel.setAttribute("data-alerts", String(alerts.length));
      panel.hidden = !alerts.length;
    }, function () { /* the next event or poll tries again */ });
  }

  /* --- the venue's door stream: an event carries the new count; the list reloads over HTTP. --------- */
  var socket = null;
  var attempt = 0;
  var live = false;
  var SLOW_POLL_MS = 30000;

  function showCount(data) {
    byId("inside").textContent = HallFormat.number(data.inside);
    byId("inside").setAttribute("data-inside", String(data.inside));
    byId("inside-detail").textContent = interpolate(gettext("admitted today %(admitted)s · left %(left)s"),
      {admitted: HallFormat.number(data.admitted), left: HallFormat.number(data.left)}, true);
  }

  function connect() {
    if (!window.WebSocket) { return; }
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var ws;
    try { ws = new window.WebSocket(scheme + window.location.host + "/ws/door/venues/" + venue + "/"); }
    catch (err) { reconnect(); return; }
    socket = ws;
    ws.onopen = function () {
      if (ws !== socket) { return; }
      attempt = 0;
      live = true;
      document.body.setAttribute("data-door-stream", "live");
      refresh();  // whatever happened while the socket was down
      loadAlerts();
    };
    ws.onmessage = function (message) {
      if (ws !== socket) { return; }
      var event;
      try { event = JSON.parse(message.data); } catch (err) { return; }
      if (!event || !event.data) { return; }
      if (event.type === "door.alert" || event.type === "door.alert_cleared") { loadAlerts(); return; }
      if (event.type !== "door.presence") { return; }
      showCount(event.data);
      refresh();
    };
    ws.onclose = function () {
      if (ws !== socket) { return; }
      socket = null;
      live = false;
      document.body.setAttribute("data-door-stream", "offline");
      reconnect();
    };
  }

  function reconnect() {
    attempt += 1;
    window.setTimeout(connect, Math.min(30000, 1000 * Math.pow(2, Math.min(attempt, 5))));
  }

  var lastPoll = 0;
  function tick() {
    var now = Date.now();
    if (now - lastPoll >= (live ? SLOW_POLL_MS : pollMs)) {
      lastPoll = now;
      refresh();
      loadAlerts();
    }
  }

  root.setAttribute("data-ready", "true");
  lastPoll = Date.now();
  refresh();
  loadAlerts();
  connect();
  window.setInterval(tick, 1000);
}());
