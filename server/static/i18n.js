// Every word the client shows, in English, Brazilian Portuguese and Arabic (right to left), and
// the card names a screen reader speaks in each. The language comes from the browser unless
// the player chose one (remembered with the other settings). Texts the server writes (error
// sentences, hint reasons) arrive in English; a catalog may give its own words for an error
// code (`error.<code>`), which then replace the server's sentence.

import { settings } from "./settings.js";
import { catalog as en } from "./lang/en.js";
import { catalog as ptBR } from "./lang/pt-BR.js";
import { catalog as ar } from "./lang/ar.js";

export const LANGUAGES = { en, "pt-BR": ptBR, ar };
const RTL = new Set(["ar"]);

/** The language to use: the player's choice, else the first of the browser's we have. */
export function detectLanguage(wanted = navigator.languages || [navigator.language || "en"]) {
  const chosen = settings().lang;
  if (chosen && LANGUAGES[chosen]) return chosen;
  for (const tag of wanted) {
    const lower = String(tag).toLowerCase();
    if (lower.startsWith("pt")) return "pt-BR"; // the only Portuguese we have
    if (lower.startsWith("ar")) return "ar";
    if (lower.startsWith("en")) return "en";
  }
  return "en";
}

let lang = "en";
let plural = new Intl.PluralRules("en");

export const language = () => lang;

/** Switch language: <html lang dir> and every [data-i18n] element in the page. */
export function useLanguage(code) {
  lang = LANGUAGES[code] ? code : "en";
  plural = new Intl.PluralRules(lang);
  document.documentElement.lang = lang;
  document.documentElement.dir = RTL.has(lang) ? "rtl" : "ltr";
  translatePage();
}

export function translatePage(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const el of root.querySelectorAll("[data-i18n-aria-label]")) el.setAttribute("aria-label", t(el.dataset.i18nAriaLabel));
}

/**
 * The text for `key` with `{name}` placeholders filled from `params`. A key with plural forms
 * is an object ({one, other, …}) chosen by `params.n`. A key missing in a language falls back
 * to English, and a key missing everywhere shows as itself (easy to spot).
 */
export function t(key, params = {}) {
  let text = LANGUAGES[lang][key] ?? en[key] ?? key;
  if (typeof text === "object") {
    const n = Number(params.n);
    text = text[Number.isFinite(n) ? plural.select(n) : "other"] ?? text.other;
  }
  return text.replace(/\{(\w+)\}/g, (_, name) => (params[name] ?? `{${name}}`).toString());
}

/** "queen of spades" in the page's language, for screen readers and hints. */
export function cardName(card) {
  const c = LANGUAGES[lang].cards || en.cards;
  return c.format.replace("{rank}", c.ranks[card[0]]).replace("{suit}", c.suits[card[1]]);
}

export const suitName = (suit) => (LANGUAGES[lang].cards || en.cards).suits[suit];

/**
 * What to tell the player about a refused command: the server's sentence (English), or the
 * page's language's own words for that error code when its catalog has them.
 */
export function errorText(err) {
  const own = LANGUAGES[lang][`error.${err?.code}`];
  return typeof own === "string" ? own : err?.message || err?.code || String(err);
}
