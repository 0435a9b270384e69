// The account panel of the lobby: sign up (keeping the guest's rating), log in, log out, and a
// link to your player page. It works beside app.js through the identity app.js keeps in
// localStorage (api.js's "hearts.guest" key): a sign-up or log-in answer has the same shape
// ({player, name, token}, plus account: true), so storing it and reloading is all it takes
// for app.js to connect as the account.

import { forgetGuest, savedGuest } from "./api.js";

const IDENTITY_KEY = "hearts.guest"; // api.js's key: the one identity the page runs as
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
}

async function post(path, body, token = null) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.message || `HTTP ${response.status}`);
  return answer;
}

function signedIn(answer) {
  localStorage.setItem(IDENTITY_KEY, JSON.stringify(answer));
  location.reload();
}

function credentialsForm(id, title, submitText, onSubmit) {
  const name = el("input", { id: `${id}-name`, name: "username", maxlength: "24", required: "", autocomplete: "username", placeholder: "Name" });
  const password = el("input", {
    id: `${id}-password`, name: "password", type: "password", minlength: "8", maxlength: "256", required: "",
    autocomplete: id === "signup" ? "new-password" : "current-password", placeholder: "Password",
  });
  const error = el("p", { class: "account-error", role: "alert" });
  const button = el("button", { class: "btn", type: "submit", id: `${id}-submit`, text: submitText });
  const form = el("form", { id: `${id}-form`, class: "account-form" },
    el("h3", { text: title }),
    el("label", { for: name.id, class: "visually-hidden", text: "Name" }), name,
    el("label", { for: password.id, class: "visually-hidden", text: "Password" }), password,
    button, error);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.textContent = "";
    try {
      signedIn(await onSubmit(name.value, password.value));
    } catch (err) {
      error.textContent = err.message;
      button.disabled = false;
    }
  });
  return form;
}

function render(panel) {
  const me = savedGuest();
  const parts = [el("h2", { text: "Account" })];
  if (me && me.account) {
    const logout = el("button", { class: "btn ghost small", type: "button", id: "logout-btn", text: "Log out" });
    logout.addEventListener("click", async () => {
      logout.disabled = true;
      await post("/api/logout", {}, me.token).catch(() => null);
      forgetGuest();
      location.reload();
    });
    parts.push(el("p", { class: "row" },
      el("span", {}, "Signed in as ", el("strong", { text: me.name })),
      el("a", { href: `/p/${encodeURIComponent(me.player)}`, id: "my-page", text: "Your page" }),
      logout));
  } else {
    parts.push(el("p", { class: "muted", text: me
      ? "You play as a guest: sign up to keep your rating on any device and appear on the ladder."
      : "Sign up or log in to keep your rating on any device and appear on the ladder." }));
    parts.push(el("div", { class: "account-forms" },
      credentialsForm("signup", "Sign up", me ? "Sign up and keep my rating" : "Sign up",
        // The guest of the moment (it may have picked its name after this panel was drawn).
        (name, password) => post("/api/signup", { name, password, guest_token: savedGuest()?.token ?? null })),
      credentialsForm("login", "Log in", "Log in",
        (name, password) => post("/api/login", { name, password }))));
    if (me) parts.push(el("p", {}, el("a", { href: `/p/${encodeURIComponent(me.player)}`, id: "my-page", text: "Your page" })));
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
