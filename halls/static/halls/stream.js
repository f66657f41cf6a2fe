/*
 * The screen-stream client of a hall display (DESIGN §4 "Screens can always recover").
 *
 *   1. open the WebSocket /ws/screens/<token>/?snapshot=1 and buffer what arrives;
 *   2. the socket's first frame is the snapshot ("stream.snapshot": state + the stream's seq, from the web
 *      process's cache: issue 30, a reconnect storm); a server that sends none within a few seconds: load
 *      the snapshot /screens/<token>/snapshot/ over HTTP (as on a gap);
 *   3. apply the buffered and following events in seq order, dropping those the snapshot already holds;
 *   4. on a gap in seq, reload the snapshot; on a close, reconnect with backoff and reload it (jittered:
 *      a random delay up to a ceiling that doubles, so a hall's screens do not all come back at once; a
 *      web process going away says "stream.restart" {within: s} and closes 1012: the screen comes back at
 *      a random moment within those seconds, to a sibling; a process that cannot take it yet closes 1013
 *      with the reason "retry-after=S": it comes back at a random moment within S seconds, without
 *      doubling its back-off). Meanwhile it keeps showing its last frame;
 *      after a few seconds a small "Reconnecting…" banner says so (halls/screen.js);
 *   5. the server sends the stream's head now and then (`{"type": "stream.head", "head": seq, "every": s}`,
 *      every 10 s, halls.fanout): a seq still behind the head a moment later means a lost event, even a
 *      lost *last* one, and reloads the snapshot. No snapshot is fetched on a timer. Heads also show the
 *      socket is alive: a socket silent for three heads' time is closed and reopened.
 *
 * The channel layer delivers at most once: correctness never depends on one message arriving.
 *
 *   6. once an event is applied (or a snapshot shown), the screen acknowledges it on the socket (issue 28):
 *      its seq, when it rendered and the digest of what it showed (halls/ack.js, when the page loads it);
 *      a reconnect's snapshot acknowledges the seq and the balls it showed. A page that shows no balls can
 *      name what its snapshot shows (options.shownInSnapshot).
 *
 *   var stream = new HallStream({token: "...", onSnapshot: fn(snapshot), onEvent: fn(event),
 *                                onStatus: fn(status)});   // status: connecting|syncing|live|offline
 *   stream.start();
 *   stream.resync();   // a section that finds its state inconsistent asks for a fresh snapshot
 */
(function (global) {
  "use strict";

  var MIN_BACKOFF_MS = 1000;   // the first retry's ceiling: a random delay below it ("full jitter")
  var MAX_BACKOFF_MS = 15000;
  var RESTART_WITHIN_S = 3;    // a 1012 close without a "stream.restart" frame: back within this
  var CLOSE_RESTART = 1012;
  var CLOSE_TRY_LATER = 1013;  // "retry-after=S" in the reason: back within S seconds, no doubling
  var HEAD_GRACE_MS = 3000;   // an event already on its way when the head was read arrives within this
  var WATCH_MS = 5000;        // how often the socket's silence is checked
  var SILENT_HEADS = 3;       // a socket silent for this many heads' time is taken for dead
  var SOCKET_SNAPSHOT_MS = 5000;  // an open socket without its snapshot frame by then: load it over HTTP

  function HallStream(options) {
    this.token = options.token;
    // A page may name another snapshot of the same stream (a table-side meter page: body data-snapshot-url):
    // it loads that one over HTTP; a hall screen takes its own from its socket's first frame.
    var other = options.snapshotUrl || global.document.body.getAttribute("data-snapshot-url");
    this.snapshotUrl = other || "/screens/" + encodeURIComponent(this.token) + "/snapshot/";
    this.socketSnapshot = !other && !options.socketUrl;
    var scheme = global.location.protocol === "https:" ? "wss://" : "ws://";
    this.socketUrl = options.socketUrl || scheme + global.location.host + "/ws/screens/" +
      encodeURIComponent(this.token) + "/" + (this.socketSnapshot ? "?snapshot=1" : "");
    this.onSnapshot = options.onSnapshot || function () {};
    this.onEvent = options.onEvent || function () {};
    this.onStatus = options.onStatus || function () {};
    this.shownInSnapshot = options.shownInSnapshot ||
      (global.HallAck ? global.HallAck.shownInSnapshot : function () { return {}; });
    this.acks = options.acks !== false && !!global.HallAck;  // acknowledge what was shown (issue 28)

    this.seq = null;          // last sequence number applied (null until the first snapshot)
    this.stream = null;       // e.g. "room.7", from the snapshot
    this.socket = null;
    this.buffer = [];         // events received while a snapshot is loading
    this.loading = false;     // a snapshot is awaited (the socket's first frame, or a request in flight)
    this.fetching = false;    // a snapshot request is in flight
    this.reloadAgain = false; // a gap was seen while loading: load once more afterwards
    this.attempt = 0;         // consecutive failed connections, for the backoff
    this.reconnectTimer = null;
    this.restartWithin = null; // seconds the server asked to spread this reconnect over (stream.restart)
    this.retryAfter = null;    // seconds a refusing server (1013) named: the next attempt within them
    this.lastDelay = null;     // the last reconnect's delay (ms): what the page and its tests can see
    this.status = "";
    this.headEvery = null;    // seconds between the server's heads (null until the first head)
    this.heardAt = 0;         // when the socket last brought anything (ms)
    this.stats = {snapshots: 0, events: 0, gaps: 0, reconnects: 0, heads: 0, acks: 0, refused: 0};
  }

  HallStream.prototype.start = function () {
    var self = this;
    this.connect();
    global.setInterval(function () { self.checkAlive(); }, WATCH_MS);
    // A display woken from sleep or a tab made visible again: a dead socket is replaced at once.
    global.document.addEventListener("visibilitychange", function () {
      if (!global.document.hidden) { self.checkAlive(); }
    });
  };

  HallStream.prototype.setStatus = function (status) {
    if (status === this.status) { return; }
    this.status = status;
    global.document.body.setAttribute("data-stream", status);
    try { this.onStatus(status); } catch (err) { console.error(err); }
  };

  HallStream.prototype.connect = function () {
    var self = this;
    this.reconnectTimer = null;
    this.setStatus(this.seq === null ? "connecting" : "offline");
    var socket;
    try {
      socket = new global.WebSocket(this.socketUrl);
    } catch (err) {
      console.error("screen stream: cannot open the socket", err);
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    this.buffer = [];
    socket.onopen = function () {
      if (socket !== self.socket) { return; }
      self.heardAt = Date.now();
      // Joined the group before this fired: from now on no event is missed. The snapshot is the socket's
      // first frame; a server that sends none (a page given another socketUrl): over HTTP.
      if (!self.socketSnapshot) { self.loadSnapshot(); return; }
      self.loading = true;
      self.setStatus("syncing");
      global.setTimeout(function () {
        if (socket === self.socket && self.loading && !self.fetching) {
          self.loading = false;
          self.loadSnapshot();
        }
      }, SOCKET_SNAPSHOT_MS);
    };
    socket.onmessage = function (message) {
      if (socket !== self.socket) { return; }
      self.heardAt = Date.now();
      var event;
      try { event = JSON.parse(message.data); } catch (err) { return; }
      if (event.type === "stream.head") { self.onHead(event); return; }
      if (event.type === "stream.snapshot") {
        if (!self.fetching) { self.loading = false; self.takeSnapshot(event); }
        return;
      }
      if (event.type === "stream.restart") {
        if (typeof event.within === "number" && event.within >= 0) { self.restartWithin = event.within; }
        return;
      }
      if (event.type === "ack.refused") {
        self.stats.refused += 1;
        console.warn("screen stream: ack refused", event.seq, event.error);
        return;
      }
      if (typeof event.seq !== "number") { return; }
      if (self.loading || self.seq === null) {
        self.buffer.push(event);
      } else {
        self.apply(event);
      }
    };
    socket.onclose = function (closed) {
      if (socket !== self.socket) { return; }
      self.socket = null;
      if (closed && closed.code === CLOSE_RESTART && self.restartWithin === null) {
        self.restartWithin = RESTART_WITHIN_S;
      }
      self.retryAfter = HallStream.retryAfter(closed);
      self.scheduleReconnect();
    };
    socket.onerror = function () { /* onclose follows */ };
  };

  HallStream.prototype.scheduleReconnect = function () {
    if (this.reconnectTimer) { return; }
    var self = this;
    this.setStatus(this.seq === null ? "connecting" : "offline");
    this.lastDelay = HallStream.backoff(this.attempt, this.restartWithin, Math.random(), this.retryAfter);
    this.restartWithin = null;
    if (this.retryAfter === null) { this.attempt += 1; }  // refused for now (1013): not a failure to back off from
    this.retryAfter = null;
    this.stats.reconnects += 1;
    this.reconnectTimer = global.setTimeout(function () { self.connect(); }, this.lastDelay);
  };

  HallStream.prototype.loadSnapshot = function () {
    var self = this;
    if (this.loading) {
      this.reloadAgain = true;
      return;
    }
    this.loading = true;
    this.fetching = true;     // over HTTP (a socket's snapshot frame meanwhile is not taken)
    this.setStatus("syncing");
    global.fetch(this.snapshotUrl, {cache: "no-store", credentials: "same-origin"})
      .then(function (response) {
        if (!response.ok) { throw new Error("snapshot answered " + response.status); }
        return response.json();
      })
      .then(function (snapshot) {
        self.loading = false;
        self.fetching = false;
        self.takeSnapshot(snapshot);
      })
      .catch(function (err) {
        self.loading = false;
        self.fetching = false;
        console.error("screen stream: snapshot failed", err);
        // Start over: a fresh socket and a fresh snapshot, with backoff.
        if (self.socket) {
          var socket = self.socket;
          self.socket = null;
          try { socket.close(); } catch (ignored) { /* already closed */ }
        }
        self.scheduleReconnect();
      });
  };

  /* A snapshot (the socket's first frame, or loaded over HTTP): shown, then the events buffered meanwhile. */
  HallStream.prototype.takeSnapshot = function (snapshot) {
    this.attempt = 0;
    this.stats.snapshots += 1;
    this.stream = snapshot.stream;
    this.seq = snapshot.seq;
    global.document.body.setAttribute("data-seq", String(this.seq));
    try {
      this.onSnapshot(snapshot);
      this.acknowledge(global.HallAck && global.HallAck.forSnapshot(snapshot.seq, this.shownInSnapshot(snapshot)));
    } catch (err) { console.error(err); }
    if (this.reloadAgain) {
      this.reloadAgain = false;
      this.loadSnapshot();
      return;
    }
    this.drain();
    if (!this.loading) { this.setStatus(this.socket ? "live" : "offline"); }
  };

  HallStream.prototype.drain = function () {
    var pending = this.buffer.sort(function (a, b) { return a.seq - b.seq; });
    this.buffer = [];
    for (var i = 0; i < pending.length; i += 1) {
      this.apply(pending[i]);
      if (this.loading) {
        // A gap: keep the rest for after the next snapshot.
        this.buffer = this.buffer.concat(pending.slice(i + 1));
        return;
      }
    }
  };

  HallStream.prototype.apply = function (event) {
    if (this.stream && event.stream && event.stream !== this.stream) { return; }
    if (event.seq <= this.seq) { return; }           // already in the snapshot, or a duplicate
    if (event.seq !== this.seq + 1) {                // a message was lost: the snapshot knows
      this.stats.gaps += 1;
      this.buffer.push(event);
      this.loadSnapshot();
      return;
    }
    this.seq = event.seq;
    this.stats.events += 1;
    global.document.body.setAttribute("data-seq", String(this.seq));
    try { this.onEvent(event); } catch (err) {
      console.error("screen stream: could not apply", event.type, err);
      this.resync();
      return;
    }
    if (this.acks) { this.acknowledge(global.HallAck.forEvent(event)); }
  };

  /* Tell the server what was put on the glass (an ack of halls/ack.js); a closed socket: the next snapshot's
     ack says it. */
  HallStream.prototype.acknowledge = function (ack) {
    if (!this.acks || !ack || !this.socket || this.socket.readyState !== global.WebSocket.OPEN) { return; }
    if (!(ack.seq > 0)) { return; }  // a stream with no event yet: nothing to acknowledge
    var self = this;
    if (!this.outbox) {
      this.outbox = new global.HallAck.Outbox(function (text) {
        var socket = self.socket;
        if (!socket || socket.readyState !== global.WebSocket.OPEN) { return; }
        try { socket.send(text); } catch (err) { /* the socket is closing: its onclose follows */ }
      });
    }
    this.outbox.add(ack);
    this.stats.acks += 1;
  };

  /* Reload the snapshot now (a section found its state inconsistent). */
  HallStream.prototype.resync = function () {
    if (this.socket && this.socket.readyState === global.WebSocket.OPEN) {
      this.loadSnapshot();
    }
  };

  /* The server's head of the stream: behind it, and still behind a moment later, means a lost event. */
  HallStream.prototype.onHead = function (head) {
    var self = this;
    this.stats.heads += 1;
    if (typeof head.every === "number" && head.every > 0) { this.headEvery = head.every; }
    if (typeof head.head !== "number" || this.seq === null || this.loading) { return; }
    if (this.stream && head.stream && head.stream !== this.stream) { return; }
    if (head.head <= this.seq) { return; }
    global.setTimeout(function () {
      if (self.seq !== null && !self.loading && self.seq < head.head) {
        self.stats.gaps += 1;
        self.loadSnapshot();
      }
    }, HEAD_GRACE_MS);
  };

  /* A socket that brought nothing for several heads' time is dead without knowing it: start over. */
  HallStream.prototype.checkAlive = function () {
    var socket = this.socket;
    if (!socket || !this.headEvery || socket.readyState !== global.WebSocket.OPEN) { return; }
    if (Date.now() - this.heardAt <= SILENT_HEADS * this.headEvery * 1000) { return; }
    this.socket = null;
    try { socket.close(); } catch (ignored) { /* already closed */ }
    this.scheduleReconnect();
  };

  /* The delay (ms) before reconnect attempt `attempt` (0 for the first after a close): a random share
     `random` (0..1) of a ceiling that doubles from MIN_BACKOFF_MS up to MAX_BACKOFF_MS; after a server's
     restart notice, of the seconds it named instead; after a refusal for now (1013, "retry-after=S"), of
     those S seconds, whatever the attempt (the server is up and admitting: doubling would only leave the
     screen dark longer). */
  HallStream.backoff = function (attempt, restartWithin, random, retryAfter) {
    if (typeof retryAfter === "number") { return random * retryAfter * 1000; }
    if (typeof restartWithin === "number" && attempt === 0) { return random * restartWithin * 1000; }
    var ceiling = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * Math.pow(2, attempt));
    return random * ceiling;
  };

  /* The seconds a close 1013 named in its reason ("retry-after=S"), or null (another close, no hint). */
  HallStream.retryAfter = function (closed) {
    if (!closed || closed.code !== CLOSE_TRY_LATER) { return null; }
    var found = /^retry-after=([0-9]+(?:\.[0-9]+)?)$/.exec(closed.reason || "");
    var seconds = found ? parseFloat(found[1]) : NaN;
    return seconds >= 0 && seconds <= 60 ? seconds : null;
  };

  global.HallStream = HallStream;
})(window);
