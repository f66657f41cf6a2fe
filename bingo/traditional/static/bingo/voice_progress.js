/*
 * How far the caller's voice clips are made (GET /api/voice/clips/), in every [data-voice-progress] element of
 * the page (the setup page's rooms, the caller console's voice controls): asked again every few seconds while
 * they are being made, hidden once every clip is made. A screen plays the clips made so far and stays silent
 * for the others, so a hall can play while the rest are made (the demo makes them in the background).
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var boxes = doc.querySelectorAll("[data-voice-progress]");
  if (!boxes.length) { return; }
  var EVERY = 4000;   // ms between asks while the clips are being made

  function text(p) {
    var values = {made: p.made, total: p.total};
    if (p.state === "building") {
      return interpolate(gettext("Caller's voice: %(made)s of %(total)s clips made; the screens say what is made so far."), values, true);
    }
    if (p.state === "failed") {
      return interpolate(gettext("Caller's voice: it could not be made (%(made)s of %(total)s clips); the screens stay silent where a clip is missing."), values, true);
    }
    return interpolate(gettext("Caller's voice: not made yet (%(made)s of %(total)s clips); the screens stay silent where a clip is missing."), values, true);
  }

  function show(p) {
    Array.prototype.forEach.call(boxes, function (box) {
      box.setAttribute("data-state", p.state);
      box.hidden = p.state === "ready";
      box.textContent = p.state === "ready" ? "" : text(p);
      box.title = p.error || "";
      if (box.classList.contains("msg")) {   // a message box: a failure said as one
        box.classList.toggle("msg--error", p.state === "failed");
        box.classList.toggle("msg--info", p.state !== "failed");
      }
    });
  }

  function ask() {
    global.HallApi.get("/api/voice/clips/").then(function (p) {
      show(p);
      if (p.state === "building" || p.state === "missing") { global.setTimeout(ask, EVERY); }
    }, function () { global.setTimeout(ask, EVERY * 4); });
  }

  ask();
})(window);
