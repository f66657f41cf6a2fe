/*
 * The caller's voice on a hall screen (spec §2.7 S10, TB-42). Only the room's audio screen speaks (the
 * operator's choice: snapshot.voice and "room.voice" deltas say which screen it is, whether the caller muted
 * it and how loud); every other screen stays silent. What is said is a list of clip URLs, generated offline
 * (bingo.traditional.voice, `manage.py build_voice`), played one after another:
 *
 *   HallScreen.screen.voice.say(["/voice/ball-45.wav"]);
 *
 * Browsers refuse to play sound before a person touched the page: the audio screen probes once; if refused,
 * it shows an "Enable sound" control, and a click unlocks it. The choice is remembered in the browser
 * (localStorage), so a screen that had its sound on plays at once whenever the browser lets it (a kiosk
 * started with --autoplay-policy=no-user-gesture-required always does), and asks again only if refused.
 *
 * `HallVoice.log` keeps what was asked and what became of it (played / skipped and why), newest last:
 * for a look from the browser console, and for the browser tests.
 */
(function (global) {
  "use strict";

  var doc = global.document;
  var REMEMBER = "hall.voice.enabled";
  var LOG_MAX = 200;

  var state = {screen: null, audio_screen: null, muted: false, volume: 80};
  var unlocked = false;
  var probing = false;    // the probe below has not answered yet
  var queue = [];
  var player = null;      // the Audio element playing now, or null
  var log = [];

  function note(entry) {
    entry.at = Date.now();
    log.push(entry);
    if (log.length > LOG_MAX) { log.shift(); }
    return entry;
  }

  function isAudioScreen() { return state.screen !== null && state.audio_screen === state.screen; }

  function remembered() {
    try { return global.localStorage.getItem(REMEMBER) === "1"; } catch (err) { return false; }
  }

  function remember() {
    try { global.localStorage.setItem(REMEMBER, "1"); } catch (err) { /* private mode: ask each time */ }
  }

  function control() { return doc.getElementById("voice-enable"); }

  function showState() {
    var body = doc.body;
    body.setAttribute("data-voice", !isAudioScreen() ? "none" : state.muted ? "muted" : unlocked ? "on" : "locked");
    var button = control();
    if (button) { button.hidden = !(isAudioScreen() && !unlocked); }
    var badge = doc.getElementById("voice-badge");
    if (badge) {
      badge.hidden = !isAudioScreen();
      badge.title = state.muted ? gettext("Voice muted") : gettext("Voice on");
    }
  }

  function stop(reason) {
    if (player) {
      player.pause();
      player = null;
    }
    queue.forEach(function (item) { note({src: item, played: false, reason: reason}); });
    queue = [];
    next = null;
  }

  /* The next clip of an announcement, loaded while the one before plays, so it starts the moment that one
     ends (the clips are trimmed of their silences: bingo.traditional.voicefiles). */
  var next = null;        // {src, audio}: the clip loaded ahead, or null

  function preload(src) {
    if (next && next.src === src) { return; }
    var audio = new global.Audio();
    audio.preload = "auto";
    audio.src = src;
    audio.load();
    next = {src: src, audio: audio};
  }

  function take(src) {
    var found = next && next.src === src ? next.audio : new global.Audio(src);
    next = null;
    return found;
  }

  function playNext() {
    if (player || !queue.length) { return; }
    if (!isAudioScreen() || state.muted || !unlocked) {
      stop(!isAudioScreen() ? "not_audio_screen" : state.muted ? "muted" : "locked");
      return;
    }
    var src = queue.shift();
    var entry = note({src: src, played: false, reason: "pending"});
    var audio = take(src);
    audio.volume = Math.max(0, Math.min(1, state.volume / 100));
    if (queue.length) { preload(queue[0]); }   // fetched and decoded while this one plays: no gap to load it
    player = audio;
    var done = function (reason) {
      if (player !== audio) { return; }
      player = null;
      if (reason) { entry.reason = reason; }
      playNext();
    };
    audio.addEventListener("playing", function () { entry.played = true; entry.reason = "playing"; });
    audio.addEventListener("ended", function () { done("ended"); });
    audio.addEventListener("error", function () { done("error"); });
    var started = audio.play();
    if (started && typeof started.catch === "function") {
      started.catch(function (err) {
        if (err && err.name === "NotAllowedError") {
          unlocked = false;   // the browser wants a gesture after all: ask for it
          showState();
        }
        done(err && err.name ? err.name : "refused");
      });
    }
  }

  /* Say these clips in order (after anything still being said). Silent unless this is the audio screen,
     unmuted and unlocked: each clip is then logged as skipped with the reason. */
  function say(urls) {
    (urls || []).forEach(function (url) { queue.push(url); });
    if (player && queue.length && isAudioScreen() && !state.muted) { preload(queue[0]); }
    playNext();
  }

  function apply(voice) {
    if (!voice) { return; }
    ["screen", "audio_screen", "muted", "volume"].forEach(function (key) {
      if (voice[key] !== undefined) { state[key] = voice[key]; }
    });
    if (player) { player.volume = Math.max(0, Math.min(1, state.volume / 100)); }
    if (state.muted || !isAudioScreen()) { stop(state.muted ? "muted" : "not_audio_screen"); }
    showState();
    if (isAudioScreen() && !unlocked) { probe(); }
  }

  /* May this page play sound without a gesture? An unmuted play of an empty clip at volume 0 tells (a
     muted one would not: browsers always let muted media play), and makes no sound. */
  function probe() {
    if (probing || unlocked) { return; }
    probing = true;
    var audio = new global.Audio();
    audio.volume = 0;
    // A tiny silent WAV: 44-byte header, no samples.
    audio.src = "data:audio/wav;base64,UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";
    var result = audio.play();
    var settle = function (ok) {
      probing = false;
      if (ok) { unlocked = true; }
      showState();
      playNext();
    };
    if (result && typeof result.then === "function") {
      result.then(function () { settle(true); }, function (err) {
        // NotAllowedError: locked until a gesture. Anything else (the empty clip would not decode) means
        // playing itself was allowed.
        settle(!(err && err.name === "NotAllowedError"));
      });
    } else {
      settle(true);
    }
  }

  function enable() {
    unlocked = true;
    remember();
    var audio = new global.Audio();   // played inside the click: the browser now lets this page speak
    audio.volume = 0;
    audio.src = "data:audio/wav;base64,UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";
    var result = audio.play();
    if (result && typeof result.catch === "function") { result.catch(function () { /* nothing to hear */ }); }
    showState();
    playNext();
  }

  function start() {
    var button = control();
    if (button) { button.addEventListener("click", enable); }
    showState();
  }

  var api = {
    say: say,
    apply: apply,
    state: function () {
      return Object.assign({unlocked: unlocked, probing: probing, audio: isAudioScreen()}, state);
    },
    remembered: remembered,
    log: log
  };
  global.HallVoice = api;
  if (global.HallScreen) { global.HallScreen.screen.voice = api; }
  doc.addEventListener("DOMContentLoaded", start);
})(window);
