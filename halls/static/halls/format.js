/*
 * Numbers, money and times as the page's language writes them: the one formatter of the JavaScript side.
 * The language is the djangojs catalogue's, loaded just before (halls/templatetags/hall_js.py), so the
 * words and the figures of a page always agree: es "1.234,50 €", en "€1,234.50".
 *
 *   HallFormat.money("1234.5", "EUR")   // "1.234,50 €"; null or "" -> "—"
 *   HallFormat.number(1234)             // "1.234"
 *   HallFormat.time(iso)                // "20:05:09" (a 24-hour clock in every language)
 *   HallFormat.date(iso)                // es "06/12/2026", en "2026-12-06" (config/formats/<language>)
 *   HallFormat.dateTime(iso)            // es "06/12/2026 20:05:09", en "2026-12-06 20:05:09"
 *   HallFormat.clock(date)              // "20:05": a wall clock
 *   HallFormat.cents("1.50")            // 150: exact, from the decimal string (never a float's rounding)
 *   HallFormat.decimal(450)             // "4.50": whole cents back to a decimal string
 *   HallFormat.parseAmount("12,5")      // "12.50": what a person typed, with a comma or a point; null if
 *                                       // it is not an amount in cents ("1.234,50" and "1,234.50" both work)
 *   HallFormat.readAmount("1.234,56")   // {amount: "1234.56", problem: ""}; refused: {amount: null, problem:
 *                                       // what is wrong, in the page's language} (every money input's reader)
 *   HallFormat.decimalMark              // "," or ".": the page language's
 */
(function (global) {
  "use strict";

  var django = global.django;
  var code = django && django.get_format ? django.get_format("LANGUAGE_CODE") : "";
  var language = code && code !== "LANGUAGE_CODE" ? code : global.document.documentElement.lang || "es";
  var moneyFormats = {};
  var numberFormat = null;

  function money(amount, currency) {
    if (amount === null || amount === undefined || amount === "") { return "—"; }
    currency = currency || "EUR";
    if (!moneyFormats[currency]) {
      try {
        moneyFormats[currency] = new Intl.NumberFormat(language, {
          style: "currency", currency: currency, minimumFractionDigits: 2, maximumFractionDigits: 2,
          useGrouping: "always"   // "1.234,50 €": Spanish alone leaves four digits ungrouped
        });
      } catch (err) {
        moneyFormats[currency] = {format: function (v) { return Number(v).toFixed(2) + " " + currency; }};
      }
    }
    // A decimal string is formatted as the exact decimal it is (Intl takes strings), never through a float.
    var value = typeof amount === "string" ? amount.trim() : amount;
    if (!isFinite(Number(value))) { return String(amount); }
    return moneyFormats[currency].format(value);
  }

  function number(value) {
    if (value === null || value === undefined || value === "") { return "—"; }
    if (!isFinite(Number(value))) { return String(value); }
    if (!numberFormat) { numberFormat = new Intl.NumberFormat(language, {useGrouping: "always"}); }
    return numberFormat.format(value);
  }

  /* Dates and times as the server's templates write them in the same language (config/formats/<language>):
     es "06/12/2026 20:05:09", en "2026-12-06 20:05:09"; a 24-hour clock in both. One format per language. */
  var DATE_ORDER = {es: ["day", "month", "year"], en: ["year", "month", "day"]};
  var DATE_MARK = {es: "/", en: "-"};

  function parts(value) {
    if (value === null || value === undefined || value === "") { return null; }
    var at = value instanceof Date ? value : new Date(value);
    if (isNaN(at.getTime())) { return null; }
    var two = function (n) { return String(n).padStart(2, "0"); };
    return {day: two(at.getDate()), month: two(at.getMonth() + 1), year: String(at.getFullYear()),
      hours: two(at.getHours()), minutes: two(at.getMinutes()), seconds: two(at.getSeconds())};
  }

  function date(value) {
    var p = parts(value);
    if (!p) { return value ? String(value) : ""; }
    var order = DATE_ORDER[language] || DATE_ORDER.es;
    return order.map(function (k) { return p[k]; }).join(DATE_MARK[language] || DATE_MARK.es);
  }

  function time(value) {
    var p = parts(value);
    if (!p) { return value ? String(value) : ""; }
    return p.hours + ":" + p.minutes + ":" + p.seconds;
  }

  /* "20:05": a wall clock (the hall screens' head). */
  function clock(value) {
    var p = parts(value);
    return p ? p.hours + ":" + p.minutes : "--:--";
  }

  function dateTime(value) {
    var p = parts(value);
    return p ? date(value) + " " + time(value) : (value ? String(value) : "");
  }

  /* "12.3" -> 1230, "-0.05" -> -5: whole cents from a decimal string (or a number), rounded half up. */
  function cents(amount) {
    var text = String(amount).trim();
    var match = /^(-?)(\d*)(?:\.(\d*))?$/.exec(text);
    if (!match) { return Math.round(Number(text) * 100); }
    var fraction = (match[3] || "") + "000";
    var whole = Number(match[2] || "0") * 100 + Number(fraction.slice(0, 2)) + (Number(fraction[2]) >= 5 ? 1 : 0);
    return match[1] ? -whole : whole;
  }

  function decimal(wholeCents) {
    var sign = wholeCents < 0 ? "-" : "";
    var abs = Math.abs(wholeCents);
    return sign + Math.floor(abs / 100) + "." + ("0" + (abs % 100)).slice(-2);
  }

  /* The page language's decimal separator: "," in Spanish, "." in English. */
  var decimalMark = (function () {
    try { return (1.5).toLocaleString(language).replace(/\d/g, "").charAt(0) || "."; } catch (err) { return "."; }
  })();

  /*
   * A typed amount to a decimal string in cents, or null. A comma or a point may be the decimal mark
   * ("12,5" and "12.50" both work). The last mark followed by one or two digits is the decimal one, any
   * other mark groups thousands ("1.234,50", "1,234.50"). A lone mark followed by three digits groups
   * thousands unless it is the page language's decimal mark: "12,345" is refused in Spanish (not cents),
   * "1.234" is 1234 there.
   */
  function parseAmount(typed) {
    var text = String(typed === null || typed === undefined ? "" : typed).replace(/[\s\u00a0\u202f€]/g, "");
    if (!/^\d[\d.,]*$/.test(text) || /[.,]$/.test(text)) { return null; }
    var fraction = "";
    var decimal = /^(.*\d)([.,])(\d{1,2})$/.exec(text);
    if (decimal) {
      text = decimal[1];
      fraction = decimal[3];
      if (text.indexOf(decimal[2]) >= 0) { return null; }   // "1,234,5": the decimal mark twice
    }
    var marks = text.replace(/\d/g, "");
    if (marks) {
      if (!/^(.)\1*$/.test(marks)) { return null; }          // grouped with both marks
      if (!/^[1-9]\d{0,2}(?:[.,]\d{3})+$/.test(text)) { return null; }   // "0,001": no group
      if (!decimal && marks.length === 1 && marks === decimalMark) { return null; }
    }
    var whole = text.replace(/[.,]/g, "").replace(/^0+(?=\d)/, "");
    return whole + "." + (fraction + "00").slice(0, 2);
  }

  /*
   * A typed amount read for an API: {amount: "1234.56", problem: ""}, or {amount: null, problem: what is wrong,
   * in the page's language}. Empty is {amount: ""}, its problem said only when `required`. Every
   * money input of the pages reads its amount here, so "1.234,56", "1234,56", "1234.56" and "12,5" mean the
   * same everywhere and the API always gets a decimal string (never a float).
   */
  function readAmount(typed, required) {
    var text = String(typed === null || typed === undefined ? "" : typed).trim();
    var gettext = global.gettext || function (msg) { return msg; };
    var example = decimalMark === "," ? "1.234,50" : "1,234.50";
    if (!text) {
      return {amount: "", problem: required ? gettext("Type an amount, like %(example)s.").replace("%(example)s", example) : ""};
    }
    var parsed = parseAmount(text);
    if (parsed !== null) { return {amount: parsed, problem: ""}; }
    var compact = text.replace(/[\s\u00a0\u202f€]/g, "");
    // "12,345" in Spanish, "1.234" in English: thousands or cents past the second? Not guessed.
    var ambiguous = /^[1-9]\d{0,2}[.,]\d{3}$/.test(compact);
    var message = ambiguous
      ? gettext("“%(typed)s” is ambiguous: write thousands with “%(group)s” and cents with “%(mark)s”, like %(example)s.")
      : gettext("“%(typed)s” is not an amount: type euros and cents, like %(example)s.");
    var values = {typed: text, example: example, mark: decimalMark, group: decimalMark === "," ? "." : ","};
    var problem = global.interpolate ? global.interpolate(message, values, true)
      : message.replace(/%\((\w+)\)s/g, function (all, key) { return values[key]; });
    return {amount: null, problem: problem};
  }

  global.HallFormat = {language: language, money: money, number: number, time: time, date: date, dateTime: dateTime,
    clock: clock, cents: cents, decimal: decimal,
    parseAmount: parseAmount, readAmount: readAmount, decimalMark: decimalMark};
})(window);
