/*
 * The caller console's stream client: the hall screens' discipline (halls/static/halls/stream.js,
 * DESIGN §4 "Screens can always recover") for a socket that delivers more than one numbered stream —
 * the room's public stream and the room's staff stream (bingo.traditional.services.console).
 *
 *   1. open the WebSocket /ws/console/rooms/<id>/ and buffer what arrives;
 *   2. once it is open, load the snapshot (state + each stream's seq);
 *   3. apply the buffered and following events in seq order per stream, dropping those the snapshot holds;
 *   4. on a gap in any stream, reload the snapshot; on a close, reconnect with backoff and reload it;
 *   5. every `checkMs` compare the streams' numbers (a tiny answer) with ours: a number we have not
 *      reached a few seconds later means a lost *last* event, and the snapshot is reloaded.
 *
 *   var stream = new ConsoleStream({socketUrl: ..., snapshotUrl: ..., seqUrl: ...,
 *                                   onSnapshot: fn(snapshot), onEvent: fn(event), onStatus: fn(status)});
 *   stream.start();     // status: connecting|syncing|live|offline
 *   stream.resync();    // the page found its state inconsistent: a fresh snapshot
 */
(function (global) {
  "use strict";

  var MIN_BACKOFF_MS = 500;
  var MAX_BACKOFF_MS = 15000;
  var LATE_MS = 3000;   // an event announced by the numbers but not here after this long is lost

  function ConsoleStream(options) {
    this.socketUrl = options.socketUrl;
    this.snapshotUrl = options.snapshotUrl;
    this.seqUrl = options.seqUrl;
    this.onSnapshot = options.onSnapshot || function () {};
    this.onEvent = options.onEvent || function () {};
    this.onStatus = options.onStatus || function () {};
    this.checkMs = options.checkMs || 30000;

    this.seqs = null;         // stream -> last seq applied (null until the first snapshot)
    this.socket = null;
    this.buffer = [];         // events received while a snapshot is loading
    this.loading = false;
    this.reloadAgain = false;
    this.attempt = 0;
    this.reconnectTimer = null;
    this.status = "";
    this.stats = {snapshots: 0, events: 0, gaps: 0, reconnects: 0};
  }

  ConsoleStream.prototype.start = function () {
    var self = this;
    this.connect();
    global.setInterval(function () { self.checkFreshness(); }, this.checkMs);
    global.document.addEventListener("visibilitychange", function () {
      if (!global.document.hidden) { self.checkFreshness(); }
    });
  };

  ConsoleStream.prototype.setStatus = function (status) {
    if (status === this.status) { return; }
    this.status = status;
    global.document.body.setAttribute("data-stream", status);
    try { this.onStatus(status); } catch (err) { console.error(err); }
  };

  ConsoleStream.prototype.connect = function () {
    var self = this;
    this.reconnectTimer = null;
    this.setStatus(this.seqs === null ? "connecting" : "offline");
    var socket;
    try {
      socket = new global.WebSocket(this.socketUrl);
    } catch (err) {
      console.error("console stream: cannot open the socket", err);
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    this.buffer = [];
    socket.onopen = function () {
      if (socket !== self.socket) { return; }
      self.loadSnapshot();   // the consumer joined its groups before accepting: nothing is missed now
    };
    socket.onmessage = function (message) {
      if (socket !== self.socket) { return; }
      var event;
      try { event = JSON.parse(message.data); } catch (err) { return; }
      if (typeof event.seq !== "number" || typeof event.stream !== "string") { return; }
      if (self.loading || self.seqs === null) {
        self.buffer.push(event);
      } else {
        self.apply(event);
      }
    };
    socket.onclose = function () {
      if (socket !== self.socket) { return; }
      self.socket = null;
      self.scheduleReconnect();
    };
    socket.onerror = function () { /* onclose follows */ };
  };

  ConsoleStream.prototype.scheduleReconnect = function () {
    if (this.reconnectTimer) { return; }
    var self = this;
    this.setStatus(this.seqs === null ? "connecting" : "offline");
    var ceiling = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * Math.pow(2, this.attempt));
    var delay = ceiling / 2 + Math.random() * ceiling / 2;
    this.attempt += 1;
    this.stats.reconnects += 1;
    this.reconnectTimer = global.setTimeout(function () { self.connect(); }, delay);
  };

  ConsoleStream.prototype.fetchJson = function (url) {
    return global.fetch(url, {cache: "no-store", credentials: "same-origin",
      headers: {Accept: "application/json"}})
      .then(function (response) {
        if (!response.ok) { throw new Error(url + " answered " + response.status); }
        return response.json();
      });
  };

  ConsoleStream.prototype.loadSnapshot = function () {
    var self = this;
    if (this.loading) {
      this.reloadAgain = true;
      return;
    }
    this.loading = true;
    this.setStatus("syncing");
    this.fetchJson(this.snapshotUrl)
      .then(function (snapshot) {
        self.loading = false;
        self.attempt = 0;
        self.stats.snapshots += 1;
        self.seqs = Object.assign({}, snapshot.streams || {});
        global.document.body.setAttribute("data-seqs", JSON.stringify(self.seqs));
        try { self.onSnapshot(snapshot); } catch (err) { console.error(err); }
        if (self.reloadAgain) {
          self.reloadAgain = false;
          self.loadSnapshot();
          return;
        }
        self.drain();
        if (!self.loading) { self.setStatus(self.socket ? "live" : "offline"); }
      })
      .catch(function (err) {
        self.loading = false;
        console.error("console stream: snapshot failed", err);
        if (self.socket) {
          var socket = self.socket;
          self.socket = null;
          try { socket.close(); } catch (ignored) { /* already closed */ }
        }
        self.scheduleReconnect();
      });
  };

  ConsoleStream.prototype.drain = function () {
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

  ConsoleStream.prototype.apply = function (event) {
    if (!Object.prototype.hasOwnProperty.call(this.seqs, event.stream)) { return; }
    var seq = this.seqs[event.stream];
    if (event.seq <= seq) { return; }                // in the snapshot already, or a duplicate
    if (event.seq !== seq + 1) {                     // a message of this stream was lost
      this.stats.gaps += 1;
      this.buffer.push(event);
      this.loadSnapshot();
      return;
    }
    this.seqs[event.stream] = event.seq;
    this.stats.events += 1;
    global.document.body.setAttribute("data-seqs", JSON.stringify(this.seqs));
    try { this.onEvent(event); } catch (err) {
      console.error("console stream: could not apply", event.type, err);
      this.resync();
    }
  };

  ConsoleStream.prototype.resync = function () {
    if (this.socket && this.socket.readyState === global.WebSocket.OPEN) {
      this.loadSnapshot();
    }
  };

  /* The safety net for a lost last event, without loading the state: the numbers only. */
  ConsoleStream.prototype.checkFreshness = function () {
    var self = this;
    if (this.loading || this.seqs === null || !this.socket) { return; }
    this.fetchJson(this.seqUrl).then(function (answer) {
      var server = answer.streams || {};
      var behind = Object.keys(server).some(function (s) {
        return self.seqs && Object.prototype.hasOwnProperty.call(self.seqs, s) && server[s] > self.seqs[s];
      });
      if (!behind) { return; }
      // Events still on their way arrive within moments; one that has not by then was lost.
      global.setTimeout(function () {
        var lost = Object.keys(server).some(function (s) {
          return self.seqs && Object.prototype.hasOwnProperty.call(self.seqs, s) && server[s] > self.seqs[s];
        });
        if (lost && !self.loading) { self.resync(); }
      }, LATE_MS);
    }).catch(function () { /* the socket's close handler deals with outages */ });
  };

  global.ConsoleStream = ConsoleStream;
})(window);
