/*
 * The caller's voice controls of the console (spec §2.7 S10): mute and volume of the room's audio screen.
 * Each change is one API command (POST /api/rooms/{id}/voice/); the screen hears it at once as a
 * "room.voice" event. The audio screen itself is the operator's choice (POST /api/rooms/{id}/audio-screen/).
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

  function show(next) {
    state = next;
    var mute = $("voice-mute");
    var volume = $("voice-volume");
    mute.disabled = false;
    volume.disabled = false;
    mute.setAttribute("aria-pressed", state.muted ? "true" : "false");
    mute.textContent = state.muted ? gettext("Unmute voice") : gettext("Mute voice");
    mute.classList.toggle("is-muted", !!state.muted);
    volume.value = String(state.volume);
    $("voice-volume-value").textContent = state.volume + "%";
    $("voice-screen").textContent = state.audio_screen_name
      ? interpolate(gettext("Voice on: %(screen)s"), {screen: state.audio_screen_name}, true)
      : gettext("No audio screen chosen");
    $("voice-controls").setAttribute("data-muted", state.muted ? "true" : "false");
  }

  function send(change) {
    return api.post(url, change).then(function (reply) { show(reply.data); }).catch(function (err) {
      global.HallUi.report($("page-msg"), err);
    });
  }

  $("voice-mute").addEventListener("click", function () {
    if (state) { send({muted: !state.muted}); }
  });
  $("voice-volume").addEventListener("input", function (e) {
    $("voice-volume-value").textContent = e.target.value + "%";
  });
  $("voice-volume").addEventListener("change", function (e) {
    send({volume: Number(e.target.value)});
  });

  api.get(url).then(show).catch(function (err) { global.HallUi.report($("page-msg"), err); });
})(window);
