/*
 * The hall screen's frame: a 1920×1080 stage scaled to the display, the clock, the link indicator,
 * and the registry of sections (bingo, pools...) fed by one HallStream.
 *
 * A section registers before the page finishes loading:
 *   HallScreen.register("bingo", {
 *     snapshot: function (data, screen) {},   // data = snapshot.sections.bingo
 *     event: function (event, screen) {}      // every delta of the stream, in seq order
 *   });
 * `screen` carries {currency, venue, name, money(amount), resync()} and the priority rule below; money is
 * HallFormat's (halls/format.js) in the screen's currency; `screen.voice` is the caller's voice
 * (halls/voice.js): `screen.voice.say([url, ...])` speaks on the room's audio screen only.
 *
 * Priority: the room's own game comes first. A section whose announcement must not be covered (the bingo
 * section while a claim is verified, the "¿Algún bingo más?" band is up or a winner is announced) holds
 * the screen: `screen.hold("bingo", true)`, and lets go with `screen.hold("bingo", false)`. Announcements
 * that are not the room's own (table and machine hits) ask `screen.busy()` first and wait while it is
 * held; `screen.onPriority(fn)` calls `fn(busy)` each time the screen is taken or let go.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var STAGE_W = 1920;
  var STAGE_H = 1080;
  var sections = {};

  var screen = {
    currency: "EUR",
    venue: "",
    name: "",
    stream: null,
    money: function (amount) { return global.HallFormat.money(amount, screen.currency); },
    resync: function () { if (screen.stream) { screen.stream.resync(); } }
  };

  function register(name, handler) { sections[name] = handler; }

  /* --- priority ----------------------------------------------------------------------------------- */

  var holds = {};
  var priorityListeners = [];

  screen.busy = function () { return Object.keys(holds).length > 0; };

  screen.hold = function (name, on) {
    var before = screen.busy();
    if (on) { holds[name] = true; } else { delete holds[name]; }
    var now = screen.busy();
    doc.body.setAttribute("data-priority", now ? Object.keys(holds).join(" ") : "");
    if (now === before) { return; }
    priorityListeners.forEach(function (fn) {
      try { fn(now); } catch (err) { console.error("priority listener failed", err); }
    });
  };

  screen.onPriority = function (fn) { priorityListeners.push(fn); };

  function each(method, arg, pick) {
    Object.keys(sections).forEach(function (name) {
      var handler = sections[name];
      if (typeof handler[method] !== "function") { return; }
      try {
        handler[method](pick ? pick(name) : arg, screen);
      } catch (err) {
        console.error("section " + name + " failed on " + method, err);
      }
    });
  }

  function fitStage() {
    var stage = doc.getElementById("stage");
    var scale = Math.min(global.innerWidth / STAGE_W, global.innerHeight / STAGE_H);
    stage.style.transform = "translate(-50%, -50%) scale(" + scale + ")";
  }

  function tickClock() {
    doc.getElementById("screen-clock").textContent = global.HallFormat.clock(new Date());
  }

  // The room's and the screen's names, renamed by the operator: shown without a reload.
  function showNames(room, name) {
    var head = doc.querySelector(".screen-head__room");
    if (room && head) { head.textContent = room; }
    if (name && head) { doc.title = name + " · " + head.textContent; }
  }

  function start() {
    fitStage();
    global.addEventListener("resize", fitStage);
    tickClock();
    global.setInterval(tickClock, 5000);
    var offlineTimer = null;
    var stream = new global.HallStream({
      token: doc.body.getAttribute("data-token"),
      onSnapshot: function (snapshot) {
        if (snapshot.currency) { screen.currency = snapshot.currency; }
        screen.venue = snapshot.venue;
        screen.name = snapshot.screen;
        screen.id = snapshot.screen_id;
        showNames(snapshot.room, snapshot.screen);
        var data = snapshot.sections || {};
        if (global.HallVoice) { global.HallVoice.apply(snapshot.voice); }
        each("snapshot", null, function (name) { return data[name]; });
      },
      onEvent: function (event) {
        if (event.type === "room.voice" && global.HallVoice) { global.HallVoice.apply(event.data); }
        if (event.type === "room.renamed") { showNames(event.data.name, screen.name); }
        if (event.type === "screen.renamed" && event.data.screen === screen.id) {
          screen.name = event.data.name;
          showNames(null, event.data.name);
        }
        each("event", event);
      },
      onStatus: function (status) {
        doc.getElementById("screen-link").className = "screen-link screen-link--" + status;
        // A short blip is not worth a banner; a lasting outage is. Counted from the first status that is not
        // "live" until the next "live": a process that refuses the screen for now (1013, right after the
        // socket opens: "syncing", then "offline" again) does not restart the count at each try.
        var banner = doc.getElementById("screen-offline");
        if (status === "live") {
          global.clearTimeout(offlineTimer);
          offlineTimer = null;
          banner.classList.remove("is-shown");
        } else if (offlineTimer === null) {
          offlineTimer = global.setTimeout(function () { banner.classList.add("is-shown"); }, 4000);
        }
      }
    });
    screen.stream = stream;
    global.hallStream = stream;  // for a look from the browser console
    stream.start();
  }

  global.HallScreen = {register: register, screen: screen};
  doc.addEventListener("DOMContentLoaded", start);
})(window);
