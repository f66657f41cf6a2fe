/*
 * The caller's voice controls of the console (spec §2.7 S10): mute and volume of the room's audio screen.
 * Each change is one API command (POST /api/rooms/{id}/voice/); the audio screen and every open console hear
 * it at once as a "room.voice" event on the room's stream (console.js passes it on as "console:event"), so
 * a console shows the room's voice as it is, whoever changed it. The audio screen itself is the operator's
 * choice (POST /api/rooms/{id}/audio-screen/): when the event names another one, its name is asked again.
 * After every console snapshot (a gap, a reconnect: an event may have been lost) the state is asked again.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var $ = function (id) { return doc.getElementById(id); };
  if (!$("voice-controls")) { return; }  // a read-only user: the page left the controls out
  var api = global.HallApi;
  var roomId = Number($("console").getAttribute("data-room"));
  var url = "/api/rooms/" + roomId + "/voice/";
  var state = null;
  var adjusting = false;   // the caller is moving the volume slider: it is not moved under their hand
  // Every state shown (an event heard, an answer) bumps this: an answer to a request sent before is not
  // shown, as it may be older than what is on screen (a GET read before a change, a reply overtaken by a
  // later room.voice event). The room's events are the order of changes.
  var shown = 0;

  function show(next) {
    shown += 1;
    state = next;
    var mute = $("voice-mute");
    var volume = $("voice-volume");
    mute.disabled = false;
    volume.disabled = false;
    mute.setAttribute("aria-pressed", state.muted ? "true" : "false");
    mute.textContent = state.muted ? gettext("Unmute voice") : gettext("Mute voice");
    mute.classList.toggle("is-muted", !!state.muted);
    if (!adjusting) {
      volume.value = String(state.volume);
      $("voice-volume-value").textContent = state.volume + "%";
    }
    $("voice-screen").textContent = state.audio_screen_name
      ? interpolate(gettext("Voice on: %(screen)s"), {screen: state.audio_screen_name}, true)
      : gettext("No audio screen chosen");
    $("voice-controls").setAttribute("data-muted", state.muted ? "true" : "false");
    $("voice-controls").setAttribute("data-volume", String(state.volume));
  }

  function failed(err) { global.HallUi.report($("page-msg"), err); }

  function load() {
    var before = shown;
    return api.get(url).then(function (data) {
      if (shown === before) { show(data); }
    }).catch(failed);
  }

  function send(change) {
    var before = shown;
    return api.post(url, change).then(function (reply) {
      if (shown === before) { show(reply.data); }
    }).catch(failed);
  }

  function onEvent(event) {
    var detail = event.detail || {};
    var data = detail.type === "room.voice" ? detail.data : null;
    if (!data || data.room !== roomId) { return; }
    if (!state || data.audio_screen !== state.audio_screen) {
      load();   // another audio screen: its name is the API's
      return;
    }
    show(Object.assign({}, state, {muted: data.muted, volume: data.volume}));
  }

  $("voice-mute").addEventListener("click", function () {
    if (state) { send({muted: !state.muted}); }
  });
  $("voice-volume").addEventListener("input", function (e) {
    adjusting = true;
    $("voice-volume-value").textContent = e.target.value + "%";
  });
  $("voice-volume").addEventListener("change", function (e) {
    adjusting = false;
    send({volume: Number(e.target.value)});
  });
  doc.addEventListener("console:event", onEvent);
  doc.addEventListener("console:snapshot", load);

  load();
})(window);
