/*
 * The winner's identification at the till (the cage, anti-money-laundering): the form's fields (document,
 * number, issuing country, full name, date of birth, nationality, the scan's reference), and the call that
 * records it (POST /api/cage/venues/<venue>/identifications/) answering the identification's id, which a
 * payout then names. `offer` shows the form under a refusal `identification_required` (a ticket redeemed in
 * cash, a card cashed out) and, once the winner is identified, calls the caller's retry with the id.
 */
(function (global) {
  "use strict";

  var ui = global.HallUi;
  var api = global.HallApi;
  var el = ui.el;
  var NAMES = ["kind", "number", "country", "full_name", "birth_date", "nationality", "scan_reference"];
  var DOCUMENTS = [
    ["DNI", function () { return gettext("DNI"); }],
    ["NIE", function () { return gettext("NIE"); }],
    ["PASSPORT", function () { return gettext("Passport"); }],
    ["ID_CARD", function () { return gettext("EU identity card"); }]
  ];

  function path(venueId) { return "/api/cage/venues/" + venueId + "/identifications/"; }

  /* The fieldset (data-identify=`key`); its inputs are named as the API's fields. */
  function fields(key) {
    function field(name, label, input) {
      input.setAttribute("name", name);
      input.id = "id-" + name + "-" + key;
      return el("label", {class: "field"}, label, input);
    }
    var kind = el("select", {required: true}, DOCUMENTS.map(function (d) {
      return el("option", {value: d[0], text: d[1]()});
    }));
    return el("fieldset", {class: "till-identify", "data-identify": key},
      el("legend", {text: gettext("Identify the winner (anti-money-laundering)")}),
      field("kind", gettext("Document"), kind),
      field("number", gettext("Number"), el("input", {type: "text", required: true, maxlength: 40, autocomplete: "off"})),
      field("country", gettext("Issuing country"), el("input", {type: "text", maxlength: 3, placeholder: "ES",
        autocomplete: "off"})),
      field("full_name", gettext("Full name"), el("input", {type: "text", required: true, maxlength: 150,
        autocomplete: "off"})),
      field("birth_date", gettext("Date of birth"), el("input", {type: "date", required: true})),
      field("nationality", gettext("Nationality"), el("input", {type: "text", required: true, maxlength: 3,
        value: "ES", autocomplete: "off"})),
      field("scan_reference", gettext("Scan reference"), el("input", {type: "text", required: true, maxlength: 200,
        autocomplete: "off"})));
  }

  /* Record the identification typed in `fieldset`; resolves to its id. */
  function identify(venueId, fieldset) {
    var body = {};
    NAMES.forEach(function (n) { body[n] = fieldset.querySelector("[name=" + n + "]").value.trim(); });
    return api.post(path(venueId), body).then(function (response) { return response.data.identification; });
  }

  /*
   * After `box` reported `err`: when the payout waits for the winner's identification, a form under the box
   * to identify them; submitted, the identification is recorded and `retry(id)` pays naming it. Answers
   * whether the form was offered.
   */
  function offer(box, err, venueId, retry) {
    if (err && err.quiet) { return false; }   // a second click while busy: the form offered stays
    clear(box);
    if (!err || err.code !== "identification_required") { return false; }
    var key = (box.id || "offer");
    var msg = el("div", {class: "msg", hidden: true, id: key + "-identify-msg"});
    var set = fields(key);
    var form = el("form", {class: "till-identify-form", "data-identify-offer": key, autocomplete: "off"}, set,
      el("button", {type: "submit", class: "btn-go", text: gettext("Identify the winner and pay")}), msg);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      ui.busy(form.querySelector("button[type=submit]"), function () { return identify(venueId, set); },
        gettext("Identifying…"))
        .then(function (id) {
          if (form.parentNode) { form.parentNode.removeChild(form); }
          retry(id);
        }, function (error) { ui.report(msg, error); });
    });
    box.insertAdjacentElement("afterend", form);
    set.querySelector("[name=number]").focus();
    return true;
  }

  /* Take away the form offered under `box` (the payout went through, or another one is on the form). */
  function clear(box) {
    var old = box.parentNode ? box.parentNode.querySelector("[data-identify-offer]") : null;
    if (old) { old.parentNode.removeChild(old); }
  }

  global.HallIdentify = {fields: fields, identify: identify, offer: offer, clear: clear};
})(window);
