/*
 * Hand-pays at the cashier: the venue's progressive hits waiting to be paid by hand (the machine is locked
 * meanwhile), refreshed from /machines/handpays/snapshot/?venue=<id>. "Pagar" posts to
 * /api/machine-hits/<id>/pay/ with the CSRF token and an optional payment reference; the server records who
 * paid and when, and unlocks the machine once none of its hits waits. Paying twice is refused by the server,
 * and the button stays disabled while its request runs, so a double click pays once.
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
  var canWrite = ui.canWrite("handpays");  // a read-only user (the inspector) sees the hits, pays none

  var REFRESH_MS = 2000;
  var RETRY_MS = 4000;

  var root = $("handpays");
  var SNAPSHOT_URL = root.getAttribute("data-snapshot-url");
  var currency = root.getAttribute("data-currency") || "EUR";
  var timer = null;
  var inflight = false;  // a refresh is running
  var again = false;     // ... and another was asked for meanwhile
  var refs = {};        // hit id -> the reference typed so far (kept across refreshes)
  var paying = {};      // hit id -> true while its payment runs

  function money(amount) { return fmt.money(amount, currency); }

  function payUrl(id) { return "/api/machine-hits/" + id + "/pay/"; }

  function pay(hit, button, identification) {
    paying[hit.id] = true;
    var ref = (refs[hit.id] || "").trim();
    var body = ref ? {payment_ref: ref} : {};
    if (identification) { body.identification = identification; }  // the winner's, at the cage (AML)
    return ui.busy(button, function () {
      return api.post(payUrl(hit.id), body);
    }).then(function () {
      global.HallIdentify.clear($("page-msg"));
      delete refs[hit.id];
      ui.report($("page-msg"), interpolate(gettext("Paid: machine %(machine)s · %(level)s · %(amount)s."),
        {machine: hit.asset_number, level: hit.level_name || "", amount: money(hit.amount)}, true), "ok");
    }, function (err) {
      ui.report($("page-msg"), err);
      // At or above the AML threshold: identify the winner, then pay naming them.
      var venue = err && err.details ? err.details.venue : null;
      global.HallIdentify.offer($("page-msg"), err, venue, function (id) { pay(hit, button, id); });
    }).then(function () {
      delete paying[hit.id];
      schedule(0);
    });
  }

  function rowOf(hit) {
    if (!canWrite) {
      return el("tr", {id: "hit-" + hit.id, "data-hit": hit.id, "data-asset": hit.asset_number},
        el("td", {text: fmt.time(hit.reported_at)}),
        el("td", null, el("strong", {text: hit.asset_number})),
        el("td", {text: hit.location || "—"}),
        el("td", {text: hit.level_name || "—"}),
        el("td", {class: "num hp-amount", text: money(hit.amount)}),
        el("td"), el("td"));
    }
    var input = el("input", {type: "text", class: "hp-ref", maxlength: 120, placeholder: gettext("optional"),
      "aria-label": gettext("Payment reference"), value: refs[hit.id] || ""});
    input.addEventListener("input", function () { refs[hit.id] = input.value; });
    var button = el("button", {type: "button", class: "btn-go hp-pay", text: gettext("Pay"),
      "data-hit": hit.id, disabled: !!paying[hit.id]});
    button.addEventListener("click", function () { pay(hit, button).catch(function () {}); });
    return el("tr", {id: "hit-" + hit.id, "data-hit": hit.id, "data-asset": hit.asset_number},
      el("td", {text: fmt.time(hit.reported_at)}),
      el("td", null, el("strong", {text: hit.asset_number})),
      el("td", {text: hit.location || "—"}),
      el("td", {text: hit.level_name || "—"}),
      el("td", {class: "num hp-amount", text: money(hit.amount)}),
      el("td", null, input),
      el("td", {class: "num"}, button));
  }

  function render(data) {
    var hits = data.hits || [];
    currency = data.currency || currency;
    var body = $("hits-table").tBodies[0];
    var focused = doc.activeElement && doc.activeElement.classList.contains("hp-ref")
      ? doc.activeElement.closest("tr").getAttribute("data-hit") : null;
    fill(body, hits.map(rowOf));
    if (focused) {  // a refresh must not take the cursor out of the reference being typed
      var again = doc.querySelector("#hit-" + focused + " .hp-ref");
      if (again) { again.focus(); again.setSelectionRange(again.value.length, again.value.length); }
    }
    $("hits-table").hidden = hits.length === 0;
    $("hits-empty").hidden = hits.length > 0;
    $("hits-count").textContent = hits.length
      ? interpolate(ngettext("%(count)s pending", "%(count)s pending", hits.length), {count: hits.length}, true) : "";
    root.setAttribute("data-loaded", String(Number(root.getAttribute("data-loaded") || 0) + 1));
  }

  function refresh() {
    timer = null;
    if (inflight) { again = true; return; }
    inflight = true;
    api.get(SNAPSHOT_URL).then(function (data) {
      $("poll-state").className = "mf-poll is-ok";
      render(data || {});
      return REFRESH_MS;
    }, function (err) {
      $("poll-state").className = "mf-poll is-failing";
      ui.report($("page-msg"), {message: interpolate(gettext("Live refresh failed: %(error)s"), {error: err.message}, true),
        code: err.code}, "error");
      return RETRY_MS;
    }).then(function (next) {
      inflight = false;
      schedule(again ? 0 : next);
      again = false;
    });
  }

  /* One refresh at a time, one pending; a payment asks for one right away (after any running one). */
  function schedule(ms) {
    if (timer !== null) { global.clearTimeout(timer); }
    timer = global.setTimeout(refresh, ms);
  }

  refresh();
})(window);
