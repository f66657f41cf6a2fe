/*
 * Pool meters on a display: shared by the hall screen's ribbon (jackpots/screen.js) and the table-side
 * meter page (jackpots/meter.js).
 *
 * A pool as the server sends it (jackpots.services.readmodels.screens.pool_display):
 *   {id, name, code, currency, levels: [{id, name, position, kind, amount: "1234.56", hits, version}]}
 * `amount` is what the pool holds, capped at the ceiling and rounded down to the cent. `version` grows with
 * every award, fold, correction and parameter change of the level, and within one version the meter only
 * grows: so (version, amount) orders two readings of a level, and a reading that was on its way while a
 * newer one arrived (an event racing the snapshot, a tick racing a hit) never replaces it. A meter thus
 * never goes back to a figure from before a hit.
 *
 *   var book = JackpotMeters.book();
 *   book.put(pool)          -> true when something shown changed
 *   JackpotMeters.total(winners)                 // "123.45": the sum of their amounts, in whole cents
 *   JackpotMeters.roll(node, amount, currency)   // counts up to amount, jumps down (a hit)
 */
(function (global) {
  "use strict";

  var fmt = global.HallFormat;
  var money = fmt.money;
  var ROLL_MS = 240;  // about the time between two meter events: the figure keeps rolling while it grows

  function total(winners) {
    return fmt.decimal(winners.reduce(function (sum, w) { return sum + fmt.cents(w.amount); }, 0));
  }

  /* Is reading `a` older than reading `b` of the same level? */
  function older(a, b) {
    var va = a.version || 0;
    var vb = b.version || 0;
    return va < vb || (va === vb && Number(a.amount) < Number(b.amount));
  }

  function book() {
    var pools = {};

    return {
      pools: function () {
        return Object.keys(pools).map(function (id) { return pools[id]; }).sort(function (a, b) {
          return a.id - b.id;
        });
      },
      get: function (id) { return pools[id] || null; },
      /* Replace everything (a snapshot). */
      reset: function (list) {
        pools = {};
        (list || []).forEach(function (pool) { pools[pool.id] = pool; });
      },
      remove: function (id) {
        var had = Object.prototype.hasOwnProperty.call(pools, id);
        delete pools[id];
        return had;
      },
      /* Merge a newer reading of a pool; levels read earlier than what is shown are kept as shown. */
      put: function (pool) {
        var shown = pools[pool.id];
        if (!shown) {
          pools[pool.id] = pool;
          return true;
        }
        var byId = {};
        shown.levels.forEach(function (level) { byId[level.id] = level; });
        var changed = false;
        var levels = pool.levels.map(function (level) {
          var before = byId[level.id];
          if (before && older(level, before)) { return before; }
          if (!before || before.amount !== level.amount || before.name !== level.name) { changed = true; }
          return level;
        });
        if (levels.length !== shown.levels.length || pool.name !== shown.name) { changed = true; }
        pools[pool.id] = {
          id: pool.id, name: pool.name, code: pool.code, currency: pool.currency, levels: levels
        };
        return changed;
      }
    };
  }

  /* Show `amount` in `node`: roll up from what it shows now, or jump when it goes down (a hit, a reset). */
  function roll(node, amount, currency) {
    var target = Number(amount);
    node.setAttribute("data-amount", String(amount));
    if (node._jpFrame) { global.cancelAnimationFrame(node._jpFrame); node._jpFrame = null; }
    var from = node._jpShown;
    if (from === undefined || !isFinite(target) || target <= from || global.document.hidden) {
      node._jpShown = target;
      node.textContent = money(amount, currency);
      return;
    }
    var start = null;
    function step(now) {
      if (start === null) { start = now; }
      var t = Math.min(1, (now - start) / ROLL_MS);
      if (t >= 1) {
        node._jpFrame = null;
        node._jpShown = target;
        node.textContent = money(amount, currency);  // the exact figure, never a float's rounding
        return;
      }
      // Whole cents, rounded down: on the way up the figure never passes the target.
      var value = Math.floor((from + (target - from) * t) * 100) / 100;
      node._jpShown = value;
      node.textContent = money(value, currency);
      node._jpFrame = global.requestAnimationFrame(step);
    }
    node._jpFrame = global.requestAnimationFrame(step);
  }

  global.JackpotMeters = {book: book, roll: roll, total: total};
})(window);
