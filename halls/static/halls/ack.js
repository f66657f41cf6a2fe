/*
 * Display acknowledgements (issue 28): what a screen or terminal says it put on the glass, and the short
 * SHA-256 of it (halls/acks.py computes the same digest in Python: keep them in step).
 *
 *   HallAck.canonical(frame, data)   the canonical text of what a frame showed
 *   HallAck.digest(text)             the first 16 hex digits of its SHA-256 (synchronous: crypto.subtle is
 *                                    async and missing on a plain-http hall network)
 *   HallAck.forEvent(event)          the ack of one applied event: {type, seq, at, hash, frame, game, balls}
 *   HallAck.forSnapshot(seq, shown)  the ack of a loaded snapshot: shown = {game, balls}
 *   HallAck.shownInSnapshot(snapshot)  the game and balls a hall screen's snapshot shows
 */
(function (global) {
  "use strict";

  var BALL_FRAMES = {"ball.drawn": "ball", "egame.ball": "ball"};
  var DIGEST_HEX = 16;

  /* --- SHA-256 (FIPS 180-4) over UTF-8 --------------------------------------------------------------- */

  var K = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
  ];

  function utf8(text) {
    if (global.TextEncoder) { return new global.TextEncoder().encode(text); }
    var s = unescape(encodeURIComponent(text));
    var out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i += 1) { out[i] = s.charCodeAt(i); }
    return out;
  }

  function sha256hex(text) {
    var bytes = utf8(text);
    var bitLength = bytes.length * 8;
    var padded = new Uint8Array(((bytes.length + 9 + 63) >> 6) << 6);
    padded.set(bytes);
    padded[bytes.length] = 0x80;
    var view = new DataView(padded.buffer);
    view.setUint32(padded.length - 4, bitLength >>> 0);
    view.setUint32(padded.length - 8, Math.floor(bitLength / 0x100000000));
    var h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    var w = new Array(64);
    for (var off = 0; off < padded.length; off += 64) {
      for (var t = 0; t < 16; t += 1) { w[t] = view.getUint32(off + t * 4); }
      for (t = 16; t < 64; t += 1) {
        var x = w[t - 15], y = w[t - 2];
        var s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
        var s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
        w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
      }
      var a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
      for (t = 0; t < 64; t += 1) {
        var S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
        var ch = (e & f) ^ (~e & g);
        var t1 = (k + S1 + ch + K[t] + w[t]) | 0;
        var S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
        var maj = (a & b) ^ (a & c) ^ (b & c);
        var t2 = (S0 + maj) | 0;
        k = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      h[0] = (h[0] + a) | 0; h[1] = (h[1] + b) | 0; h[2] = (h[2] + c) | 0; h[3] = (h[3] + d) | 0;
      h[4] = (h[4] + e) | 0; h[5] = (h[5] + f) | 0; h[6] = (h[6] + g) | 0; h[7] = (h[7] + k) | 0;
    }
    var hex = "";
    for (var i = 0; i < 8; i += 1) { hex += ("00000000" + (h[i] >>> 0).toString(16)).slice(-8); }
    return hex;
  }

  /* --- canonical content ---------------------------------------------------------------------------- */

  function sorted(value) {
    if (Array.isArray(value)) { return value.map(sorted); }
    if (value && typeof value === "object") {
      var out = {};
      Object.keys(value).sort().forEach(function (key) { out[key] = sorted(value[key]); });
      return out;
    }
    return value;
  }

  function text(value) { return value === null || value === undefined ? "" : String(value); }

  function canonical(frame, data) {
    data = data || {};
    if (BALL_FRAMES[frame]) { return frame + "|" + text(data.game) + "|" + text(data[BALL_FRAMES[frame]]); }
    if (frame === "snapshot") {
      return "snapshot|" + text(data.seq) + "|" + text(data.game) + "|" + (data.balls || []).join(",");
    }
    return frame + "|" + JSON.stringify(sorted(data));
  }

  function digest(canonicalText) { return sha256hex(canonicalText).slice(0, DIGEST_HEX); }

  function positive(value) { return typeof value === "number" && value > 0 ? value : null; }

  function forEvent(event) {
    var data = event.data || {};
    var game = positive(data.game);
    var key = BALL_FRAMES[event.type];
    var balls = key && positive(data[key]) ? [data[key]] : [];
    return {type: "ack", seq: event.seq, at: Date.now(), hash: digest(canonical(event.type, data)),
            frame: event.type, game: game, balls: balls};
  }

  function forSnapshot(seq, shown) {
    shown = shown || {};
    var game = positive(shown.game);
    var balls = (shown.balls || []).filter(function (b) { return positive(b) !== null; });
    return {type: "ack", seq: seq, at: Date.now(),
            hash: digest(canonical("snapshot", {seq: seq, game: game, balls: balls})),
            frame: "snapshot", game: game, balls: balls};
  }

  /* The game and balls a hall screen's snapshot shows: the traditional room's game, else the electronic
     speciality's game drawing. */
  function shownInSnapshot(snapshot) {
    var sections = (snapshot && snapshot.sections) || {};
    var bingo = sections.bingo && sections.bingo.game;
    if (bingo && bingo.id) {
      return {game: bingo.id, balls: (bingo.balls || []).map(function (b) { return b.ball; })};
    }
    var electronic = sections.electronic && sections.electronic.current;
    if (electronic && electronic.game) { return {game: electronic.game, balls: electronic.balls || []}; }
    return {game: null, balls: []};
  }

  /* A device's acks, sent a few at a time: at once when one shows balls (a ball, a snapshot: the caller's
     console waits for those), else within FLUSH_MS (meters, prizes...). One WebSocket message per ack cost
     the server more than the ack itself. `send(text)` writes on the socket; false when it is not open. */
  var FLUSH_MS = 1000;
  var MAX_ACKS = 64;  // halls/acks.py MAX_ACKS

  function Outbox(send) {
    this.send = send;
    this.pending = [];
    this.timer = null;
  }

  Outbox.prototype.add = function (ack, stream) {
    var row = [ack.seq, ack.at, ack.hash, ack.frame, ack.game, ack.balls];
    if (stream) { row.push(stream); }
    this.pending.push(row);
    if (ack.balls.length || this.pending.length >= MAX_ACKS) { this.flush(); return; }
    if (!this.timer) {
      var self = this;
      this.timer = global.setTimeout(function () { self.flush(); }, FLUSH_MS);
    }
  };

  Outbox.prototype.flush = function () {
    if (this.timer) { global.clearTimeout(this.timer); this.timer = null; }
    if (!this.pending.length) { return; }
    var rows = this.pending;
    this.pending = [];
    // A socket that closed meanwhile: dropped; the next snapshot's ack says what the screen shows.
    this.send(JSON.stringify({type: "acks", acks: rows}));
  };

  global.HallAck = {
    Outbox: Outbox,
    canonical: canonical,
    digest: digest,
    sha256hex: sha256hex,
    forEvent: forEvent,
    forSnapshot: forSnapshot,
    shownInSnapshot: shownInSnapshot
  };
})(window);
