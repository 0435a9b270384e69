// A small element builder shared by the views: h("p", {class: "x"}, "text", child…).
// `style` is an object of properties ({"--i": 3}), set through the CSSOM: the page's CSP
// (style-src 'self') refuses every style="" attribute.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "style") for (const [prop, value] of Object.entries(v)) el.style.setProperty(prop, String(value));
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Set an element's text only when it differs (no needless DOM writes, no lost selection). */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}
