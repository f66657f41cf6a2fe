/*
 * What the staff pages share: calls to the REST API (session cookie + CSRF token, errors as ApiError with
 * the server's code and message) and a few DOM helpers. No framework, no build step. Texts go through
 * the djangojs catalogue (gettext, interpolate) and figures through HallFormat (halls/format.js).
 *
 *   HallApi.get("/api/games/7/").then(function (game) { ... })
 *   HallApi.post("/api/games/7/balls/", {number: 17, ordinal: 3}).then(...).catch(function (err) {
 *     HallUi.report(box, err);   // err.code, err.message, err.status
 *   });
 */
(function (global) {
  "use strict";

  var doc = global.document;

  function cookie(name) {
    var parts = doc.cookie ? doc.cookie.split(";") : [];
    for (var i = 0; i < parts.length; i += 1) {
      var part = parts[i].trim();
      if (part.indexOf(name + "=") === 0) { return decodeURIComponent(part.slice(name.length + 1)); }
    }
    return "";
  }

  function csrfToken() {
    var token = cookie("csrftoken");
    if (token) { return token; }
    var meta = doc.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  function ApiError(status, code, message, details) {
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.message = message;
    this.details = details || null;
  }
  ApiError.prototype = Object.create(Error.prototype);
  ApiError.prototype.constructor = ApiError;

  function request(method, url, body) {
    var headers = {"Accept": "application/json"};
    var options = {method: method, headers: headers, credentials: "same-origin", cache: "no-store"};
    if (method !== "GET") { headers["X-CSRFToken"] = csrfToken(); }
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    return global.fetch(url, options).then(
      function (response) {
        return response.text().then(function (text) {
          var data = null;
          if (text) {
            try { data = JSON.parse(text); } catch (err) { data = null; }
          }
          if (response.ok) { return {status: response.status, data: data}; }
          var error = data && data.error ? data.error : null;
          if (response.status === 401 || (response.status === 403 && error && error.code === "not_authenticated")) {
            throw new ApiError(response.status, "not_authenticated",
              gettext("Your login has expired: reload the page and log in again."));
          }
          if (error) {
            throw new ApiError(response.status, error.code || "error", error.message || gettext("Refused."),
              error.details || error.fields);
          }
          throw new ApiError(response.status, "http_" + response.status,
            interpolate(gettext("The server answered %(status)s %(reason)s."),
              {status: response.status, reason: response.statusText}, true));
        });
      },
      function () {
        throw new ApiError(0, "network", gettext("The server cannot be reached: check the connection and try again."));
      }
    );
  }

  var HallApi = {
    request: request,
    get: function (url) { return request("GET", url).then(function (r) { return r.data; }); },
    post: function (url, body) { return request("POST", url, body === undefined ? {} : body); },
    ApiError: ApiError
  };

  /* --- DOM helpers ------------------------------------------------------------------------------- */

  function el(tag, attrs) {
    var node = doc.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var value = attrs[key];
        if (value === null || value === undefined || value === false) { return; }
        if (key === "text") { node.textContent = String(value); }
        else if (key === "class") { node.className = value; }
        else if (key.indexOf("on") === 0) { node.addEventListener(key.slice(2), value); }
        else { node.setAttribute(key, value === true ? "" : String(value)); }
      });
    }
    for (var i = 2; i < arguments.length; i += 1) {
      var child = arguments[i];
      if (child === null || child === undefined || child === false) { continue; }
      if (Array.isArray(child)) {
        child.forEach(function (c) { if (c) { node.appendChild(typeof c === "string" ? doc.createTextNode(c) : c); } });
      } else {
        node.appendChild(typeof child === "string" || typeof child === "number"
          ? doc.createTextNode(String(child)) : child);
      }
    }
    return node;
  }

  function fill(node) {
    while (node.firstChild) { node.removeChild(node.firstChild); }
    for (var i = 1; i < arguments.length; i += 1) {
      var child = arguments[i];
      if (child === null || child === undefined || child === false) { continue; }
      if (Array.isArray(child)) {
        child.forEach(function (c) { if (c) { node.appendChild(c); } });
      } else {
        node.appendChild(typeof child === "string" ? doc.createTextNode(child) : child);
      }
    }
    return node;
  }

  /* A fresh idempotency key: random hex (crypto.randomUUID needs a secure context; this does not). */
  function newKey(prefix) {
    var bytes = new Uint8Array(16);
    global.crypto.getRandomValues(bytes);
    var hex = Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
    return (prefix ? prefix + "-" : "") + hex;
  }

  /*
   * One key per intended operation: the same values keep their key until the server has answered them,
   * so a double click or a retry after a network error replays instead of acting twice.
   */
  function KeyedIntent(prefix) {
    this.prefix = prefix;
    this.signature = null;
    this.key = null;
  }
  KeyedIntent.prototype.keyFor = function (values) {
    var signature = JSON.stringify(values);
    if (signature !== this.signature || !this.key) {
      this.signature = signature;
      this.key = newKey(this.prefix);
    }
    return this.key;
  };
  KeyedIntent.prototype.done = function () {
    this.signature = null;
    this.key = null;
  };

  /* Show an API error (or a plain message) in a message box; `kind` is error|ok|info. A person reads the
     error's message (the server's, in the page's language), never its code: the code stays on the box as
     data-code, for scripts and tests. */
  function report(box, error, kind) {
    if (!box) { return; }
    if (error && error.quiet) { return; }
    global.clearTimeout(box._hallTimer);
    if (!error) {
      box.hidden = true;
      box.textContent = "";
      box.removeAttribute("data-code");
      return;
    }
    var message = typeof error === "string" ? error : error.message;
    kind = kind || (typeof error === "string" ? "info" : "error");
    box.className = "msg msg--" + kind;
    if (error && error.code && kind === "error") { box.setAttribute("data-code", error.code); }
    else { box.removeAttribute("data-code"); }
    fill(box,
      el("span", {class: "msg__text", text: message}),
      el("button", {type: "button", class: "msg__close", "aria-label": gettext("Dismiss"), text: "×",
        onclick: function () { report(box, null); }}));
    box.hidden = false;
    if (kind !== "error") {
      box._hallTimer = global.setTimeout(function () { report(box, null); }, 8000);
    }
  }

  /* Run `action` (a promise factory) with `button` disabled meanwhile: no double submit. A second
     submit while the first runs is refused with a quiet error that report() does not show (a page that
     wants it seen reports BUSY's message itself: its code is "busy"). `label`, if given, is the button's
     text meanwhile ("Selling…"), so a slow answer shows as work in progress. */
  var BUSY = new ApiError(0, "busy", gettext("Still working on the previous request."));
  BUSY.quiet = true;

  function busy(button, action, label) {
    if (button && (button.disabled || button.classList.contains("is-busy"))) { return Promise.reject(BUSY); }
    var text = button ? button.textContent : "";
    if (button) {
      button.disabled = true;
      button.classList.add("is-busy");
      if (label) { button.textContent = label; }
    }
    var release = function () {
      if (button) {
        button.disabled = false;
        button.classList.remove("is-busy");
        if (label) { button.textContent = text; }
      }
    };
    return Promise.resolve().then(action).then(
      function (value) { release(); return value; },
      function (err) { release(); throw err; }
    );
  }

  /* A 3×9 master card: numbers drawn marked, the winning row (0-based) outlined. */
  function masterCard(grid, drawn, winningRow) {
    var table = el("div", {class: "mcard"});
    (grid || []).forEach(function (row, r) {
      var rowNode = el("div", {class: "mcard__row" + (r === winningRow ? " is-winning" : "")});
      row.forEach(function (n) {
        var cls = "mcard__cell" + (!n ? " is-blank" : drawn[n] ? " is-drawn" : "");
        rowNode.appendChild(el("div", {class: cls, text: n || ""}));
      });
      table.appendChild(rowNode);
    });
    return table;
  }

  /* An element by id. A write control the page left out for a read-only user (the inspector: the
     templates ask halls' may_write, what the API checks a write against) is a detached stand-in, the
     same one each time, so a page's script runs unchanged without it. */
  var absent = {};
  function byId(id) {
    var found = document.getElementById(id);
    if (found) { return found; }
    if (!absent[id]) {
      var standIn = document.createElement("div");
      standIn.value = "";
      // What a script looks up inside the control (a table's body, a row's input) is a stand-in too.
      standIn.querySelector = function (selector) {
        return Element.prototype.querySelector.call(standIn, selector) || byId("\u0000" + id + " " + selector);
      };
      absent[id] = standIn;
    }
    return absent[id];
  }

  /* Whether the page offers its write controls (its #id element's data-can-write, set by the server). */
  function canWrite(id) {
    var root = document.getElementById(id);
    return !root || root.getAttribute("data-can-write") !== "false";
  }

  global.HallApi = HallApi;
  global.HallUi = {
    el: el, fill: fill, newKey: newKey, KeyedIntent: KeyedIntent,
    report: report, busy: busy, masterCard: masterCard, byId: byId, canWrite: canWrite
  };
})(window);
