/*
 * The authority's portal pages: each page's changing part ([data-fragment]) is reloaded from the server
 * (the same URL with ?fragment=1) when the node accepts a feed message (the portal's socket, /ws/authority/)
 * and every few seconds besides: the socket delivers at most once, so the poll is what guarantees the page
 * catches up. The server renders every word; this script only swaps the fragment in.
 */
(function () {
  "use strict";

  var script = document.currentScript;
  var pollSeconds = Number(script && script.getAttribute("data-poll")) || 10;
  var fragment = document.querySelector("[data-fragment]");
  var badge = document.getElementById("live-state");
  var pending = null;
  var loading = false;
  var again = false;
  var retry = 1000;
  var lastLoad = 0;
  // At most one reload a second however fast messages arrive (300 installations feeding one node).
  var MIN_GAP = 1000;

  function fragmentUrl() {
    var url = new URL(window.location.href);
    url.searchParams.set("fragment", "1");
    return url.toString();
  }

  function showAlarms(count) {
    var link = document.getElementById("nav-alarms");
    if (!link || count === null) { return; }
    var shown = link.querySelector(".rg-count");
    if (Number(count) > 0) {
      if (!shown) {
        shown = document.createElement("span");
        shown.className = "rg-count";
        link.appendChild(document.createTextNode(" "));
        link.appendChild(shown);
      }
      shown.textContent = count;
      shown.setAttribute("data-open-alarms", count);
    } else if (shown) {
      shown.remove();
    }
  }

  function reload() {
    if (!fragment) { return; }
    if (loading) { again = true; return; }
    loading = true;
    lastLoad = Date.now();
    fetch(fragmentUrl(), {credentials: "same-origin", headers: {"X-Requested-With": "XMLHttpRequest"}})
      .then(function (response) {
        if (!response.ok) { throw new Error(String(response.status)); }
        showAlarms(response.headers.get("X-Open-Alarms"));
        return response.text();
      })
      .then(function (html) { fragment.innerHTML = html; })
      .catch(function () { /* the next poll tries again */ })
      .then(function () {
        loading = false;
        if (again) { again = false; soon(); }
      });
  }

  function soon() {
    if (pending) { return; }
    var wait = Math.max(250, lastLoad + MIN_GAP - Date.now());
    pending = window.setTimeout(function () { pending = null; reload(); }, wait);
  }

  function connect() {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + window.location.host + "/ws/authority/");
    socket.onopen = function () {
      retry = 1000;
      if (badge) { badge.setAttribute("data-state", "live"); }
      soon();  // what arrived while the socket was away
    };
    socket.onmessage = function () { soon(); };
    socket.onclose = function () {
      if (badge) { badge.setAttribute("data-state", "offline"); }
      window.setTimeout(connect, retry);
      retry = Math.min(retry * 2, 30000);
    };
  }

  if (fragment) {
    connect();
    window.setInterval(reload, pollSeconds * 1000);
  }
})();
