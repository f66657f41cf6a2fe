/*
 * The player terminal's stream client: as the hall screens' (halls/stream.js), for the TWO streams a terminal
 * follows on one socket (ws/electronic/terminal/?device=<id>&token=<token>): its room's and its own.
 *
 *   1. open the socket and buffer what arrives;
 *   2. a socket URL with "snapshot=1": the socket's first frame is the speciality's snapshot ("stream.snapshot",
 *      "part": "speciality": what every terminal of the speciality shows, with the room stream's seq, from the
 *      web process's cache: issue 30, a reconnect storm): shown at once, the room's events applied from it;
 *      then, a moment later (spread over OWN_SPREAD_MS after a reconnect), the terminal's own part through the
 *      terminal API (a POST: the inserted card's number stays out of URLs and logs); meanwhile the events of
 *      the terminal's own stream wait. No POST when the own part shown is at the own stream's cursor the
 *      frame names ("own_seq": nothing of it missed while away). A server that sends no snapshot frame
 *      within SOCKET_SNAPSHOT_MS, or a socket URL without "snapshot=1": once it is open, load the whole
 *      snapshot (the terminal API's, with the seq of each stream);
 *   3. apply the buffered and following events of each stream in seq order, dropping what the snapshot holds;
 *   4. on a gap in either stream's seq, reload the snapshot; on a close, reconnect with backoff and reload
 *      (jittered as the screens': a random delay below a doubling ceiling; after a web process's
 *      "stream.restart" {within: s} and its 1012 close, a random moment within those seconds; after a
 *      1013 "retry-after=S", a random moment within S seconds, without doubling);
 *   5. the hub's heads ({"type": "stream.head", "stream", "head", "every"}) of a stream still ahead of it a
 *      moment later mean a lost event: reload. A socket silent for three heads' time is reopened.
 *
 * Delivery is at most once: nothing depends on one message arriving.
 *
 * The page buys over the same socket (bingo/electronic/purchase_frames.py): `request(frame, ms)` sends a
 * purchase frame and resolves with the answer frame of the same key (rejects if the socket is not open, or
 * closes, or no answer comes in time: the page may send it again under its key, a retry writes nothing).
 *
 *   var stream = new TerminalStream({socketUrl: "...", loadSnapshot: fn() -> Promise(snapshot),
 *                                    onSnapshot: fn(snapshot), onEvent: fn(event), onStatus: fn(status),
 *                                    onRefused: fn(code)});
 *   stream.start(); stream.resync();
 */
(function (global) {
  "use strict";

  var MIN_BACKOFF_MS = 1000;   // the first retry's ceiling: a random delay below it ("full jitter")
  var MAX_BACKOFF_MS = 15000;
  var RESTART_WITHIN_S = 3;    // a 1012 close without a "stream.restart" frame: back within this
  var CLOSE_RESTART = 1012;
  var CLOSE_TRY_LATER = 1013;  // "retry-after=S" in the reason: back within S seconds, no doubling
  var HEAD_GRACE_MS = 3000;
  var WATCH_MS = 5000;
  var SILENT_HEADS = 3;
  var REFUSED = {4401: true, 4404: true};  // a wrong token, a retired device: no point retrying fast
  var SOCKET_SNAPSHOT_MS = 5000;  // an open socket without its snapshot frame by then: load it over HTTP
  var OWN_SPREAD_MS = 3000;   // after a reconnect's snapshot frame, the own part's POST within this (random)

  function TerminalStream(options) {
    this.socketUrl = options.socketUrl;
    this.socketSnapshot = /[?&]snapshot=1(&|$)/.test(this.socketUrl);  // the first frame is the snapshot
    this.fetchSnapshot = options.loadSnapshot;
    this.onSnapshot = options.onSnapshot || function () {};
    this.onEvent = options.onEvent || function () {};
    this.onStatus = options.onStatus || function () {};
    this.onRefused = options.onRefused || function () {};
    this.seqs = null;          // stream -> last seq applied (null until the first snapshot)
    this.socket = null;
    this.buffer = [];
    this.loading = false;      // a snapshot is awaited (the socket's first frame, or the whole one over HTTP)
    this.fetching = false;     // the whole snapshot's request is in flight (a socket frame meanwhile: not taken)
    this.reloadAgain = false;
    this.ownStream = null;     // the terminal's own stream, while its seq waits for the own part's POST
    this.ownBuffer = [];       // its events meanwhile
    this.ownLoading = null;    // the socket whose own part's POST is in flight
    this.ownTimer = null;
    this.attempt = 0;
    this.reconnectTimer = null;
    this.restartWithin = null; // seconds the server asked to spread this reconnect over (stream.restart)
    this.retryAfter = null;    // seconds a refusing server (1013) named: the next attempt within them
    this.lastDelay = null;     // the last reconnect's delay (ms)
    this.status = "";
    this.headEvery = null;
    this.heardAt = 0;
    this.stats = {snapshots: 0, events: 0, gaps: 0, reconnects: 0, heads: 0};
    this.asked = {};           // key -> {resolve, reject, timer}: purchase frames waiting for their answer
  }

  TerminalStream.prototype.start = function () {
    var self = this;
    this.connect();
    global.setInterval(function () { self.checkAlive(); }, WATCH_MS);
    global.document.addEventListener("visibilitychange", function () {
      if (!global.document.hidden) { self.checkAlive(); }
    });
  };

  TerminalStream.prototype.setStatus = function (status) {
    if (status === this.status) { return; }
    this.status = status;
    global.document.body.setAttribute("data-stream", status);
    try { this.onStatus(status); } catch (err) { console.error(err); }
  };

  TerminalStream.prototype.connect = function () {
    var self = this;
    this.reconnectTimer = null;
    this.setStatus(this.seqs === null ? "connecting" : "offline");
    var socket;
    try {
      socket = new global.WebSocket(this.socketUrl);
    } catch (err) {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    this.buffer = [];
    this.ownBuffer = [];
    this.ownLoading = null;
    if (this.ownTimer) { global.clearTimeout(this.ownTimer); this.ownTimer = null; }
    socket.onopen = function () {
      if (socket !== self.socket) { return; }
      self.heardAt = Date.now();
      if (self.socketSnapshot) {
        // The snapshot is the socket's first frame; none by SOCKET_SNAPSHOT_MS: the whole one over HTTP.
        self.loading = true;
        self.setStatus("syncing");
        global.setTimeout(function () {
          if (socket === self.socket && self.loading && !self.fetching) {
            self.loading = false;
            self.loadSnapshot();
          }
        }, SOCKET_SNAPSHOT_MS);
        return;
      }
      // Both streams are followed before the socket opens: nothing is missed now. After a turn of the loop:
      // a process that refuses it for now (1013, right after the opening) costs no snapshot.
      global.setTimeout(function () { if (socket === self.socket) { self.loadSnapshot(); } }, 0);
    };
    socket.onmessage = function (message) {
      if (socket !== self.socket) { return; }
      self.heardAt = Date.now();
      var event;
      try { event = JSON.parse(message.data); } catch (err) { return; }
      if (event.type === "stream.head") { self.onHead(event); return; }
      if (event.type === "stream.restart") {
        if (typeof event.within === "number" && event.within >= 0) { self.restartWithin = event.within; }
        return;
      }
      if (event.type === "purchase.answer") { self.answered(event); return; }
      if (event.type === "stream.snapshot") {
        if (!self.fetching) { self.takeSpeciality(event, socket); }
        return;
      }
      if (typeof event.seq !== "number" || typeof event.stream !== "string") { return; }
      if (self.loading || self.seqs === null) { self.buffer.push(event); } else { self.apply(event); }
    };
    socket.onclose = function (closed) {
      if (socket !== self.socket) { return; }
      self.socket = null;
      self.dropAsked();
      if (closed.code === CLOSE_RESTART && self.restartWithin === null) { self.restartWithin = RESTART_WITHIN_S; }
      self.retryAfter = TerminalStream.retryAfter(closed);
      if (REFUSED[closed.code]) {
        try { self.onRefused(closed.code); } catch (err) { console.error(err); }
      }
      self.scheduleReconnect(REFUSED[closed.code] ? MAX_BACKOFF_MS : 0);
    };
    socket.onerror = function () { /* onclose follows */ };
  };

  /* Send `frame` (with a string "key") and resolve with its answer frame; reject when it cannot be sent, the
     socket closes, or `ms` pass without an answer. */
  TerminalStream.prototype.request = function (frame, ms) {
    var self = this;
    var socket = this.socket;
    return new Promise(function (resolve, reject) {
      if (!socket || socket.readyState !== global.WebSocket.OPEN) { reject(new Error("socket not open")); return; }
      var key = String(frame.key);
      if (self.asked[key]) { global.clearTimeout(self.asked[key].timer); self.asked[key].reject(new Error("resent")); }
      var timer = global.setTimeout(function () {
        delete self.asked[key];
        reject(new Error("no answer"));
      }, ms);
      self.asked[key] = {resolve: resolve, reject: reject, timer: timer};
      try { socket.send(JSON.stringify(frame)); } catch (err) {
        global.clearTimeout(timer);
        delete self.asked[key];
        reject(err);
      }
    });
  };

  TerminalStream.prototype.answered = function (frame) {
    var waiting = this.asked[String(frame.key)];
    if (!waiting) { return; }
    delete this.asked[String(frame.key)];
    global.clearTimeout(waiting.timer);
    waiting.resolve(frame);
  };

  TerminalStream.prototype.dropAsked = function () {
    var asked = this.asked;
    this.asked = {};
    Object.keys(asked).forEach(function (key) {
      global.clearTimeout(asked[key].timer);
      asked[key].reject(new Error("socket closed"));
    });
  };

  TerminalStream.prototype.scheduleReconnect = function (atLeast) {
    if (this.reconnectTimer) { return; }
    var self = this;
    this.setStatus(this.seqs === null ? "connecting" : "offline");
    var delay = TerminalStream.backoff(this.attempt, this.restartWithin, Math.random(), this.retryAfter);
    this.lastDelay = Math.max(atLeast || 0, delay);
    this.restartWithin = null;
    if (this.retryAfter === null) { this.attempt += 1; }  // refused for now (1013): not a failure to back off from
    this.retryAfter = null;
    this.stats.reconnects += 1;
    this.reconnectTimer = global.setTimeout(function () { self.connect(); }, this.lastDelay);
  };

  TerminalStream.prototype.loadSnapshot = function () {
    var self = this;
    if (this.loading) { this.reloadAgain = true; return; }
    this.loading = true;
    this.fetching = true;
    this.setStatus("syncing");
    this.fetchSnapshot().then(function (snapshot) {
      self.loading = false;
      self.fetching = false;
      self.attempt = 0;
      self.stats.snapshots += 1;
      self.seqs = {};
      Object.keys(snapshot.seqs || {}).forEach(function (stream) { self.seqs[stream] = snapshot.seqs[stream]; });
      // The whole snapshot holds the own part: the own stream's waiting events join the others.
      self.ownStream = null;
      self.buffer = self.buffer.concat(self.ownBuffer);
      self.ownBuffer = [];
      global.document.body.setAttribute("data-snapshots", String(self.stats.snapshots));
      try { self.onSnapshot(snapshot); } catch (err) { console.error(err); }
      self.acknowledgeSnapshot(snapshot, Object.keys(self.seqs));
      if (self.reloadAgain) { self.reloadAgain = false; self.loadSnapshot(); return; }
      self.drain();
      if (!self.loading) { self.setStatus(self.socket ? "live" : "offline"); }
    }).catch(function (err) {
      self.loading = false;
      self.fetching = false;
      self.failed(err);
    });
  };

  /* The socket's first frame: the speciality's snapshot (no terminal's own part). Shown, the room's events
     applied from its seq; the own stream's events wait for the own part (`loadOwn`), asked a moment later. */
  TerminalStream.prototype.takeSpeciality = function (frame, socket) {
    var streams = frame.streams || {};
    if (typeof streams.room !== "string" || typeof streams.terminal !== "string" || !frame.seqs ||
        typeof frame.seqs[streams.room] !== "number") { return; }
    var first = this.seqs === null;
    var had = first ? undefined : this.seqs[streams.terminal];
    // The own part shown is current when its seq is the own stream's cursor the connect read (`own_seq`):
    // kept, no POST. Else (or not said) its seq is unknown until the own part's POST (events were missed).
    var current = typeof had === "number" && had === frame.own_seq;
    this.loading = false;
    this.attempt = 0;
    this.stats.snapshots += 1;
    var seqs = {};
    seqs[streams.room] = frame.seqs[streams.room];
    if (current) { seqs[streams.terminal] = had; }
    this.seqs = seqs;
    this.ownStream = current ? null : streams.terminal;
    global.document.body.setAttribute("data-snapshots", String(this.stats.snapshots));
    try { this.onSnapshot(frame); } catch (err) { console.error(err); }
    this.acknowledgeSnapshot(frame, [streams.room]);
    if (this.reloadAgain) { this.reloadAgain = false; this.loadSnapshot(); return; }
    this.drain();
    if (!this.loading) { this.setStatus("live"); }
    if (current) { return; }
    var self = this;
    // Off the path of showing the ball: on a reconnect (a storm) spread over a few seconds.
    this.ownTimer = global.setTimeout(function () {
      self.ownTimer = null;
      if (socket === self.socket) { self.loadOwn(socket); }
    }, first ? 0 : Math.random() * OWN_SPREAD_MS);
  };

  /* The terminal's own part (its row, its cards, the inserted card's: the terminal API's POST). Its room part
     is taken too when at or past what is shown; else only the own part ("part": "terminal"). */
  TerminalStream.prototype.loadOwn = function (socket) {
    var self = this;
    if (this.ownLoading === socket || this.fetching || this.ownStream === null) { return; }
    this.ownLoading = socket;
    this.fetchSnapshot().then(function (snapshot) {
      if (self.ownLoading !== socket) { return; }  // another socket since, or a whole snapshot took its place
      self.ownLoading = null;
      var own = self.ownStream;
      if (own === null || self.fetching || !snapshot.seqs || typeof snapshot.seqs[own] !== "number") { return; }
      var room = Object.keys(self.seqs).filter(function (stream) { return stream !== own; })[0];
      var whole = room !== undefined && typeof snapshot.seqs[room] === "number" &&
        snapshot.seqs[room] >= self.seqs[room];
      self.seqs[own] = snapshot.seqs[own];  // the same snapshot completed (data-snapshots: not one more)
      if (whole) { self.seqs[room] = snapshot.seqs[room]; }
      self.ownStream = null;
      var waiting = self.ownBuffer;
      self.ownBuffer = [];
      try {
        self.onSnapshot(whole ? snapshot : Object.assign({}, snapshot, {part: "terminal"}));
      } catch (err) { console.error(err); }
      self.acknowledgeSnapshot(snapshot, whole ? Object.keys(self.seqs) : [own]);
      self.buffer = self.buffer.concat(waiting);
      if (!self.loading) { self.drain(); }
    }).catch(function (err) {
      if (self.ownLoading !== socket) { return; }
      self.ownLoading = null;
      self.failed(err);
    });
  };

  /* A snapshot's request failed: start over (a fresh socket and snapshot, with backoff). */
  TerminalStream.prototype.failed = function (err) {
    var self = this;
    console.error("terminal stream: snapshot failed", err);
    if (this.socket) {
      var socket = this.socket;
      this.socket = null;
      try { socket.close(); } catch (ignored) { /* already closed */ }
    }
    if (err && (err.status === 401 || err.status === 403)) {
      try { self.onRefused(err.status); } catch (ignored) { /* the page's */ }
    }
    this.scheduleReconnect(err && (err.status === 401 || err.status === 403) ? MAX_BACKOFF_MS : 0);
  };

  TerminalStream.prototype.drain = function () {
    var pending = this.buffer.sort(function (a, b) { return a.seq - b.seq; });
    this.buffer = [];
    for (var i = 0; i < pending.length; i += 1) {
      this.apply(pending[i]);
      if (this.loading) {
        this.buffer = this.buffer.concat(pending.slice(i + 1));
        return;
      }
    }
  };

  TerminalStream.prototype.apply = function (event) {
    if (!(event.stream in this.seqs)) {
      if (event.stream === this.ownStream) { this.ownBuffer.push(event); }  // waits for the own part
      return;                                                 // else not a stream of this terminal
    }
    var last = this.seqs[event.stream];
    if (event.seq <= last) { return; }                        // in the snapshot already, or a duplicate
    if (event.seq !== last + 1) {                             // a message was lost: the snapshot knows
      this.stats.gaps += 1;
      global.document.body.setAttribute("data-gaps", String(this.stats.gaps));
      this.buffer.push(event);
      this.loadSnapshot();
      return;
    }
    this.seqs[event.stream] = event.seq;
    this.stats.events += 1;
    try { this.onEvent(event); } catch (err) {
      console.error("terminal stream: could not apply", event.type, err);
      this.resync();
      return;
    }
    if (global.HallAck) { this.acknowledge(event.stream, global.HallAck.forEvent(event)); }
  };

  /* Tell the server what the terminal put on the glass (issue 28, halls/ack.js): each applied event of
     either stream, and what a (re)loaded snapshot showed: each stream's seq, with the drawing game's balls
     on the room stream. */
  TerminalStream.prototype.acknowledge = function (stream, ack) {
    var socket = this.socket;
    if (!ack || !(ack.seq > 0) || !socket || socket.readyState !== global.WebSocket.OPEN) { return; }
    var self = this;
    if (!this.outbox) {
      this.outbox = new global.HallAck.Outbox(function (text) {
        var open = self.socket;
        if (!open || open.readyState !== global.WebSocket.OPEN) { return; }
        try { open.send(text); } catch (err) { /* closing: its onclose follows */ }
      });
    }
    this.outbox.add(ack, stream);
  };

  TerminalStream.prototype.acknowledgeSnapshot = function (snapshot, streams) {
    if (!global.HallAck) { return; }
    var self = this;
    var drawing = snapshot.drawing || null;
    streams.forEach(function (stream) {
      var shown = stream.indexOf("terminal.") === 0 || !drawing ? {} : {game: drawing.game, balls: drawing.balls};
      self.acknowledge(stream, global.HallAck.forSnapshot(self.seqs[stream], shown));
    });
  };

  TerminalStream.prototype.resync = function () {
    if (this.socket && this.socket.readyState === global.WebSocket.OPEN) { this.loadSnapshot(); }
  };

  TerminalStream.prototype.onHead = function (head) {
    var self = this;
    this.stats.heads += 1;
    if (typeof head.every === "number" && head.every > 0) { this.headEvery = head.every; }
    if (typeof head.head !== "number" || this.seqs === null || this.loading) { return; }
    if (!(head.stream in this.seqs) || head.head <= this.seqs[head.stream]) { return; }
    global.setTimeout(function () {
      if (self.seqs !== null && !self.loading && self.seqs[head.stream] < head.head) {
        self.stats.gaps += 1;
        self.loadSnapshot();
      }
    }, HEAD_GRACE_MS);
  };

  TerminalStream.prototype.checkAlive = function () {
    var socket = this.socket;
    if (!socket || !this.headEvery || socket.readyState !== global.WebSocket.OPEN) { return; }
    if (Date.now() - this.heardAt <= SILENT_HEADS * this.headEvery * 1000) { return; }
    this.socket = null;
    try { socket.close(); } catch (ignored) { /* already closed */ }
    this.scheduleReconnect();
  };

  /* The delay (ms) before reconnect attempt `attempt`, as the screens' (halls/stream.js HallStream.backoff):
     a random share `random` of a ceiling doubling from MIN_BACKOFF_MS to MAX_BACKOFF_MS; of the seconds of a
     restart notice (first attempt), or of a 1013's "retry-after=S" (any attempt) instead. */
  TerminalStream.backoff = function (attempt, restartWithin, random, retryAfter) {
    if (typeof retryAfter === "number") { return random * retryAfter * 1000; }
    if (typeof restartWithin === "number" && attempt === 0) { return random * restartWithin * 1000; }
    return random * Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * Math.pow(2, attempt));
  };

  /* The seconds a close 1013 named in its reason ("retry-after=S"), or null. */
  TerminalStream.retryAfter = function (closed) {
    if (!closed || closed.code !== CLOSE_TRY_LATER) { return null; }
    var found = /^retry-after=([0-9]+(?:\.[0-9]+)?)$/.exec(closed.reason || "");
    var seconds = found ? parseFloat(found[1]) : NaN;
    return seconds >= 0 && seconds <= 60 ? seconds : null;
  };

  global.TerminalStream = TerminalStream;
})(window);
