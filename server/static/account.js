// The account panel of the lobby: sign up (keeping the guest's rating), log in, log out, a link
// to your player page, and deleting your account. It works beside app.js through the identity
// app.js keeps in localStorage (api.js's "hearts.guest" key): a sign-up or log-in answer has the
// same shape ({player, name, token}, plus account: true), so storing it and reloading is all it
// takes for app.js to connect as the account. Every word comes from the catalogs (i18n.js);
// each element names its key (data-i18n), so switching the language redraws it in place.

import { forgetGuest, savedGuest } from "./api.js";
import { forgetThisDevice } from "./push.js";
import { errorText, t } from "./i18n.js";

const IDENTITY_KEY = "hearts.guest"; // api.js's key: the one identity the page runs as
const DELETED_KEY = "hearts.account-deleted"; // sessionStorage: say so once, after the reload
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v;
    else if (k === "i18n") { node.dataset.i18n = v; node.textContent = t(v); }
    else if (k === "placeholder") { node.dataset.i18nPlaceholder = v; node.placeholder = t(v); }
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
}

class HttpError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

async function post(path, body, token = null) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new HttpError(answer.code || "http_error", answer.message || `HTTP ${response.status}`);
  return answer;
}

function signedIn(answer) {
  localStorage.setItem(IDENTITY_KEY, JSON.stringify(answer));
  location.reload();
}

function credentialsForm(id, titleKey, submitKey, onSubmit) {
  const name = el("input", { id: `${id}-name`, name: "username", maxlength: "24", required: "", autocomplete: "username", placeholder: "account.name" });
  const password = el("input", {
    id: `${id}-password`, name: "password", type: "password", minlength: "8", maxlength: "256", required: "",
    autocomplete: id === "signup" ? "new-password" : "current-password", placeholder: "account.password",
  });
  const error = el("p", { class: "account-error", role: "alert" });
  const button = el("button", { class: "btn", type: "submit", id: `${id}-submit`, i18n: submitKey });
  const form = el("form", { id: `${id}-form`, class: "account-form" },
    el("h3", { i18n: titleKey }),
    el("label", { for: name.id, class: "visually-hidden", i18n: "account.name" }), name,
    el("label", { for: password.id, class: "visually-hidden", i18n: "account.password" }), password,
    button, error);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.textContent = "";
    try {
      signedIn(await onSubmit(name.value, password.value));
    } catch (err) {
      error.textContent = errorText(err);
      button.disabled = false;
    }
  });
  return form;
}

/** "Delete account…" and the form it opens: the password again, and a box to tick. */
function deleteControl(me) {
  const open = el("button", {
    class: "btn ghost small", type: "button", id: "delete-account-btn", i18n: "account.delete",
    "aria-expanded": "false", "aria-controls": "delete-account-form",
  });
  // The account's name beside the password, for password managers (and Chromium's advice).
  const username = el("input", { type: "text", name: "username", autocomplete: "username", hidden: "", readonly: "" });
  username.value = me.name;
  const password = el("input", {
    id: "delete-password", name: "password", type: "password", maxlength: "256", required: "",
    autocomplete: "current-password",
  });
  const confirmed = el("input", { id: "delete-confirm", type: "checkbox" });
  const submit = el("button", { class: "btn danger", type: "submit", id: "delete-submit", i18n: "account.delete_submit", disabled: "" });
  const cancel = el("button", { class: "btn ghost", type: "button", id: "delete-cancel", i18n: "account.delete_cancel" });
  const error = el("p", { class: "account-error", role: "alert" });
  const form = el("form", { id: "delete-account-form", class: "account-form delete-form", hidden: "" },
    el("h3", { i18n: "account.delete_title" }),
    el("p", { class: "muted", i18n: "account.delete_note" }),
    username,
    el("label", { for: password.id, i18n: "account.delete_password" }), password,
    el("label", { class: "check", for: confirmed.id }, confirmed, el("span", { i18n: "account.delete_confirm" })),
    el("div", { class: "row" }, submit, cancel),
    error);
  const ready = () => { submit.disabled = !(confirmed.checked && password.value.length > 0); };
  password.addEventListener("input", ready);
  confirmed.addEventListener("change", ready);
  const show = (shown) => {
    form.hidden = !shown;
    open.setAttribute("aria-expanded", String(shown));
    if (shown) password.focus();
    else { password.value = ""; confirmed.checked = false; error.textContent = ""; ready(); open.focus(); }
  };
  open.addEventListener("click", () => show(form.hidden));
  cancel.addEventListener("click", () => show(false));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (submit.disabled) return;
    submit.disabled = true;
    error.textContent = "";
    try {
      await post("/api/account/delete", { password: password.value }, me.token);
    } catch (err) {
      error.textContent = err.code === "wrong_credentials" ? t("account.delete_wrong") : errorText(err);
      ready();
      return;
    }
    forgetGuest();
    sessionStorage.setItem(DELETED_KEY, "1");
    location.reload();
  });
  return { open, form };
}

let drawn = null; // the identity the panel shows: redraw only when it changes

function render(panel) {
  const me = savedGuest();
  const identity = JSON.stringify(me && [me.player, me.name, Boolean(me.account)]);
  if (identity === drawn) return; // e.g. app.js rewrote #whoami on a reconnect
  drawn = identity;
  const parts = [el("h2", { i18n: "account.title" })];
  if (sessionStorage.getItem(DELETED_KEY)) {
    sessionStorage.removeItem(DELETED_KEY);
    parts.push(el("p", { class: "banner", id: "account-deleted", role: "status", i18n: "account.deleted" }));
  }
  if (me && me.account) {
    const logout = el("button", { class: "btn ghost small", type: "button", id: "logout-btn", i18n: "account.log_out" });
    logout.addEventListener("click", async () => {
      logout.disabled = true;
      await forgetThisDevice(me.token); // this device's pushes were the player's
      await post("/api/logout", {}, me.token).catch(() => null);
      forgetGuest();
      location.reload();
    });
    const deletion = deleteControl(me);
    parts.push(el("p", { class: "row" },
      el("span", {}, el("span", { i18n: "account.signed_in_as" }), " ", el("strong", { text: me.name })),
      el("a", { href: `/p/${encodeURIComponent(me.player)}`, id: "my-page", i18n: "account.your_page" }),
      logout, deletion.open));
    parts.push(deletion.form);
  } else {
    parts.push(el("p", { class: "muted", i18n: me ? "account.note_guest" : "account.note_anonymous" }));
    parts.push(el("div", { class: "account-forms" },
      credentialsForm("signup", "account.sign_up", me ? "account.sign_up_keep" : "account.sign_up",
        // The guest of the moment (it may have picked its name after this panel was drawn).
        (name, password) => post("/api/signup", { name, password, guest_token: savedGuest()?.token ?? null })),
      credentialsForm("login", "account.log_in", "account.log_in",
        (name, password) => post("/api/login", { name, password }))));
    if (me) parts.push(el("p", {}, el("a", { href: `/p/${encodeURIComponent(me.player)}`, id: "my-page", i18n: "account.your_page" })));
  }
  panel.replaceChildren(...parts);
  panel.hidden = false;
}

const panel = $("#account-panel");
if (panel) {
  render(panel);
  // app.js writes the name it connected as into #whoami: the identity may have changed
  // (a guest picked a name), so draw the panel again for it.
  const whoami = $("#whoami");
  if (whoami) new MutationObserver(() => render(panel)).observe(whoami, { childList: true, characterData: true, subtree: true });
}
