/*
 * The machine floor: every machine of the venue with its state, link, last meters, plays today, link group
 * and pending hand-pays, refreshed from the floor snapshot (/machines/floor/snapshot/?venue=<id>) every
 * second. The next refresh is asked for only once the last one has answered, so a slow server never
 * piles requests up. Offline and locked machines are highlighted; each machine links to its reconciliation.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var $ = function (id) { return doc.getElementById(id); };
  var ui = global.HallUi;
  var fmt = global.HallFormat;
  var api = global.HallApi;
  var el = ui.el;
  var fill = ui.fill;

  var REFRESH_MS = 1000;
  var RETRY_MS = 3000;

  var root = $("floor");
  var SNAPSHOT_URL = root.getAttribute("data-snapshot-url");
  var RECONCILIATION_URL = root.getAttribute("data-reconciliation-url");  // .../machines/0/reconciliation/
  var currency = root.getAttribute("data-currency") || "EUR";

  var TYPES = {B: "B", C: "C"};
  var STATES = {in_service: gettext("In service"), locked: gettext("Locked"), out_of_service: gettext("Out of service")};
  var REASONS = {
    hand_pay: gettext("Hand pay"), link_lost: gettext("Link lost"), operator: gettext("Operator"), "": ""
  };
  var MODALITIES = {individual: gettext("Single"), two_player: gettext("Two players"), multi_position: gettext("Multi-position")};

  function money(amount) { return fmt.money(amount, currency); }
  var count = fmt.number;

  function ago(iso) {
    if (!iso) { return gettext("never"); }
    var seconds = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
    if (!isFinite(seconds)) { return ""; }
    if (seconds < 2) { return gettext("just now"); }
    if (seconds < 90) { return interpolate(gettext("%(seconds)s s ago"), {seconds: seconds}, true); }
    if (seconds < 5400) { return interpolate(gettext("%(minutes)s min ago"), {minutes: Math.round(seconds / 60)}, true); }
    return fmt.time(iso);
  }

  function reconciliationUrl(id) { return RECONCILIATION_URL.replace("/0/", "/" + id + "/"); }

  /* --- one machine ------------------------------------------------------------------------------- */

  function stateBadge(m) {
    var label = STATES[m.state] || m.state;
    var badge = el("span", {class: "badge mf-state mf-state--" + m.state, text: label});
    if (m.state === "locked" && m.lock_reason) {
      return [badge, el("div", {class: "mf-reason", text: REASONS[m.lock_reason] || m.lock_reason})];
    }
    return [badge];
  }

  function linkCell(m) {
    return [
      el("span", {class: "mf-link mf-link--" + (m.online ? "on" : "off"),
        text: m.online ? gettext("Online") : gettext("Offline")}),
      el("div", {class: "mf-seen muted", text: ago(m.last_seen_at)})
    ];
  }

  function groupCell(m) {
    if (!m.group) { return "—"; }
    return el("span", {class: "mf-group", title: m.group.name || "", text: m.group.code || m.group.name});
  }

  function pendingCell(m) {
    if (!m.pending_hits) { return el("span", {class: "muted", text: "0"}); }
    return el("span", {class: "mf-pending", text: m.pending_hits +
      (m.pending_amount !== null && m.pending_amount !== undefined ? " · " + money(m.pending_amount) : "")});
  }

  function rowOf(m) {
    var meters = m.meters || {};
    var cells = [
      el("td", {class: "mf-asset"},
        el("strong", {text: m.asset_number}),
        el("div", {class: "muted", text: [m.manufacturer, m.model].filter(Boolean).join(" ")})),
      el("td", {text: (TYPES[m.machine_type] || m.machine_type) +
        (m.modality && m.modality !== "individual" ? " · " + (MODALITIES[m.modality] || m.modality) : "")}),
      el("td", {class: "num", text: money(m.denomination)}),
      el("td", {text: m.location || "—"}),
      el("td", {class: "mf-state-cell"}, stateBadge(m)),
      el("td", {class: "mf-link-cell"}, linkCell(m)),
      el("td", {class: "num mf-coin-in", text: money(meters.coin_in)}),
      el("td", {class: "num mf-coin-out", text: money(meters.coin_out)}),
      el("td", {class: "num mf-games", text: count(meters.games_played)}),
      el("td", {class: "num mf-credits", text: money(meters.credits)}),
      el("td", {class: "num mf-plays", text: count(m.plays_today)}),
      el("td", null, groupCell(m)),
      el("td", {class: "num mf-pending-cell"}, pendingCell(m)),
      el("td", null, el("a", {href: reconciliationUrl(m.id), class: "mf-reconcile", text: gettext("Reconciliation")}))
    ];
    var row = el("tr", {id: "machine-" + m.id, "data-machine": m.id, "data-asset": m.asset_number}, cells);
    row.setAttribute("data-state", m.state);
    row.setAttribute("data-lock-reason", m.lock_reason || "");
    row.setAttribute("data-online", m.online ? "true" : "false");
    row.classList.toggle("is-offline", !m.online);
    row.classList.toggle("is-locked", m.state === "locked");
    row.classList.toggle("is-out", m.state === "out_of_service");
    row.classList.toggle("has-pending", !!m.pending_hits);
    return row;
  }

  /* --- the table ----------------------------------------------------------------------------------- */

  function render(data) {
    var machines = data.machines || [];
    currency = data.currency || currency;
    var body = $("floor-table").tBodies[0];
    // Rebuilt whole each second: a few hundred rows at most, and no input lives in them to lose.
    fill(body, machines.map(rowOf));
    $("floor-empty").hidden = machines.length > 0;
    var online = 0;
    var locked = 0;
    var plays = 0;
    var pending = 0;
    machines.forEach(function (m) {
      if (m.online) { online += 1; }
      if (m.state === "locked") { locked += 1; }
      plays += Number(m.plays_today || 0);
      pending += Number(m.pending_hits || 0);
    });
    $("sum-total").textContent = count(machines.length);
    $("sum-online").textContent = count(online);
    $("sum-offline").textContent = count(machines.length - online);
    $("sum-locked").textContent = count(locked);
    $("sum-plays").textContent = count(plays);
    $("sum-pending").textContent = count(pending);
    $("floor-summary").classList.toggle("has-offline", machines.length - online > 0);
    $("floor-summary").classList.toggle("has-locked", locked > 0);
    $("floor-updated").textContent = interpolate(gettext("Updated %(time)s"), {time: fmt.time(data.at)}, true);
    root.setAttribute("data-loaded", String(Number(root.getAttribute("data-loaded") || 0) + 1));
  }

  function refresh() {
    api.get(SNAPSHOT_URL).then(function (data) {
      $("poll-state").className = "mf-poll is-ok";
      ui.report($("page-msg"), null);
      render(data || {});
      global.setTimeout(refresh, REFRESH_MS);
    }, function (err) {
      $("poll-state").className = "mf-poll is-failing";
      ui.report($("page-msg"), {message: interpolate(gettext("Live refresh failed: %(error)s"), {error: err.message}, true),
        code: err.code}, "error");
      global.setTimeout(refresh, RETRY_MS);
    });
  }

  refresh();
})(window);
