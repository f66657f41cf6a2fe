/*
 * A staff page's watch over the screens (issue 28): every second while a game draws, the screens' (and
 * terminals') acknowledgements of the current ball, from the URL in the box's data-url (the caller console:
 * GET /api/rooms/{id}/console/screens/; the electronic operator's watch: GET
 * /api/electronic/specialities/{id}/screens/). One that has not shown the ball HALL_ACK_LATE_SECONDS (2 s by
 * default) after it was drawn is flagged. The one poll of the page: the acks are written by the web processes
 * that hold the sockets, in batches, and are not an event stream of their own. The box may name its own
 * alert texts (data-late-one, data-late-many: "terminals" where the default says "screens").
 * A page that shows the current ball names its element (data-follow): once every screen has shown the ball
 * (or there is none to watch) the watch rests, and the next change of that element wakes it, so a quiet
 * console sends nothing; a screen that is late keeps it polling until the screen shows the ball.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var box = doc.getElementById("screens-watch");
  if (!box || !box.getAttribute("data-url")) { return; }
  var url = box.getAttribute("data-url");
  var alertBox = doc.getElementById("screens-late");
  var list = doc.getElementById("screens-list");
  var EVERY_MS = 1000;
  var busy = false;
  var follow = box.getAttribute("data-follow") ? doc.getElementById(box.getAttribute("data-follow")) : null;
  var resting = false;  // every screen has shown the current ball: wait for the next one (data-follow)

  function say(format, values) { return global.interpolate(format, values, true); }

  function chip(screen, ball) {
    var item = doc.createElement("li");
    item.className = "screens-watch__screen";
    item.setAttribute("data-screen", String(screen.id));
    if (screen.kind) { item.setAttribute("data-kind", screen.kind); }
    item.setAttribute("data-state", screen.shown ? "shown" : (screen.late ? "late" : "waiting"));
    var badge = doc.createElement("span");
    badge.className = "badge " + (screen.shown ? "badge--ok" : (screen.late ? "badge--bad" : ""));
    badge.textContent = screen.shown ? global.gettext("shown") :
      (screen.late ? global.gettext("not shown") : global.gettext("waiting"));
    var name = doc.createElement("span");
    name.textContent = " " + screen.name;
    item.appendChild(badge);
    item.appendChild(name);
    if (screen.late) {
      item.title = say(global.gettext("%(screen)s has not shown ball %(ball)s"), {screen: screen.name, ball: ball});
    }
    return item;
  }

  function settled(data) {
    if (data.ball === null || data.ball === undefined || !data.screens.length) { return true; }
    return data.screens.every(function (s) { return s.shown; });
  }

  function render(data) {
    resting = !!follow && settled(data);
    if (data.ball === null || data.ball === undefined || !data.screens.length) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    box.setAttribute("data-ball", String(data.ball));
    while (list.firstChild) { list.removeChild(list.firstChild); }
    data.screens.forEach(function (screen) { list.appendChild(chip(screen, data.ball)); });
    var late = data.screens.filter(function (s) { return s.late; });
    if (!late.length) {
      alertBox.hidden = true;
      alertBox.textContent = "";
      return;
    }
    alertBox.hidden = false;
    alertBox.textContent = say(
      late.length === 1 && box.getAttribute("data-late-one") ? box.getAttribute("data-late-one") :
        late.length !== 1 && box.getAttribute("data-late-many") ? box.getAttribute("data-late-many") :
        global.ngettext(
          "%(count)s screen has not shown ball %(ball)s after %(seconds)s s: %(names)s",
          "%(count)s screens have not shown ball %(ball)s after %(seconds)s s: %(names)s",
          late.length
        ),
      {count: late.length, ball: data.ball, seconds: data.late_after,
       names: late.map(function (s) { return s.name; }).join(", ")}
    );
  }

  function poll() {
    if (busy || resting || doc.hidden) { return; }
    busy = true;
    global.HallApi.get(url).then(function (data) {
      busy = false;
      render(data);
    }, function () { busy = false; });
  }

  if (follow && global.MutationObserver) {
    new global.MutationObserver(function () { resting = false; poll(); })
      .observe(follow, {childList: true, characterData: true, subtree: true});
  }
  poll();
  global.setInterval(poll, EVERY_MS);
})(window);
