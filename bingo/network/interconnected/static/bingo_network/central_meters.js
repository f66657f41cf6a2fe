/*
 * The central's pools page: every interconnected prize's meter, live. The page polls the pool engine's
 * read model (/central/pools/meters/: {meters: {code: {amount, currency}}, at}) every few seconds, as the
 * meter pages re-read their snapshot, and writes each figure with HallFormat.money.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var script = doc.getElementById("central-meters");
  var url = script.getAttribute("data-url");
  var seconds = Number(script.getAttribute("data-seconds")) || 3;
  var money = global.HallFormat.money;

  function show(meters) {
    doc.querySelectorAll("[data-meter]").forEach(function (node) {
      var meter = meters[node.getAttribute("data-meter")];
      if (!meter) { return; }
      node.setAttribute("data-amount", meter.amount);
      node.textContent = money(meter.amount, meter.currency);
    });
  }

  function poll() {
    global.fetch(url, {credentials: "same-origin", headers: {Accept: "application/json"}})
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (body) {
        if (body) {
          show(body.meters);
          doc.body.setAttribute("data-meters-at", body.at);
        }
      })
      .catch(function () { /* the next poll tries again */ })
      .then(function () { global.setTimeout(poll, seconds * 1000); });
  }

  // Every amount of the page in one format: the live meters and the fixed figures beside them.
  doc.querySelectorAll("[data-meter], [data-money]").forEach(function (node) {
    node.textContent = money(node.getAttribute("data-amount"), node.getAttribute("data-currency"));
  });
  poll();
})(window);
