// The playground page: renders the emulator's chats as a Telegram client would and acts as the
// demo people (send, tap, Start, language) through the page's /api routes.
"use strict";

const COLORS = ["#e17076", "#3fa83a", "#4a95d6", "#f0a04b"];
const state = {head: null, chats: {}, actor: null};
const panes = new Map();          // chat id (string) -> pane
let pendingStart = new Map();     // person id -> payload of a t.me/<bot>?start= link

// ------------------------------------------------------------------ helpers
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "style") node.style.cssText = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function person(id) { return state.head.people.find(p => p.id === Number(id)); }
function colorOf(id) {
  const i = state.head.people.findIndex(p => p.id === Number(id));
  return i < 0 ? "#8e9aa6" : COLORS[i % COLORS.length];
}
function languageOf(p) { return (p && p.language) || navigator.language || "en"; }

async function post(path, body) {
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  let data;
  try { data = await r.json(); } catch (e) { data = {ok: false, description: await r.text()}; }
  if (!r.ok && data.ok === undefined) data.ok = false;
  return data;
}

function botLink(url) {
  // a t.me/<bot> link opens the bot's private chat; with ?start=<payload>, Telegram shows a Start
  // button that sends "/start <payload>"
  const m = /^(?:https?:\/\/)?(?:t|telegram)\.me\/([A-Za-z0-9_]+)\/?(?:\?start=([A-Za-z0-9_-]+))?$/i.exec(url || "");
  if (!m || m[1].toLowerCase() !== state.head.bot.username.toLowerCase()) return null;
  return {payload: m[2] || null};
}

// ------------------------------------------------------------- formatted text
// Telegram's entities (offsets in UTF-16 units, as JavaScript strings count) to HTML elements.
function renderText(text, entities, lang) {
  const ents = (entities || []).slice().sort((a, b) => a.offset - b.offset || b.length - a.length);
  const frag = document.createDocumentFragment();
  build(frag, text, ents, 0, text.length, lang);
  return frag;
}

function build(parent, text, ents, start, end, lang) {
  let pos = start;
  let i = 0;
  while (i < ents.length) {
    const e = ents[i];
    if (e.offset >= end) break;
    const eEnd = Math.min(e.offset + e.length, end);
    if (e.offset < pos) { i++; continue; }
    if (e.offset > pos) parent.append(text.slice(pos, e.offset));
    const inner = [];
    let j = i + 1;
    while (j < ents.length && ents[j].offset < eEnd) { inner.push(ents[j]); j++; }
    const node = entityNode(e, text.slice(e.offset, eEnd), lang);
    if (e.type !== "date_time") build(node, text, inner, e.offset, eEnd, lang);
    parent.append(node);
    pos = eEnd;
    i = j;
  }
  if (pos < end) parent.append(text.slice(pos, end));
}

function entityNode(e, content, lang) {
  switch (e.type) {
    case "bold": return el("b");
    case "italic": return el("i");
    case "underline": return el("u");
    case "strikethrough": return el("s");
    case "code": return el("code");
    case "pre": return el("pre");
    case "blockquote": case "expandable_blockquote": return el("blockquote");
    case "spoiler": return el("span", {class: "spoiler", title: "spoiler: click to show", onclick: ev => ev.currentTarget.classList.add("shown")});
    case "text_link": return el("a", {href: e.url, target: "_blank", rel: "noopener"});
    case "url": return el("a", {href: /^https?:/i.test(content) ? content : "https://" + content, target: "_blank", rel: "noopener"});
    case "date_time": {
      const node = el("span", {class: "tg-time", "data-unix": e.unix_time, "data-format": e.date_time_format || "", "data-lang": lang, title: content});
      node.textContent = formatTime(e.unix_time, e.date_time_format || "", lang) || content;
      return node;
    }
    default: return el("span", {class: "entity-" + e.type});
  }
}

// <tg-time>: each reader's client shows the moment in their own language and time zone;
// format "r" counts down (or up) live.
function formatTime(unix, format, lang) {
  const at = new Date(unix * 1000);
  try {
    if (format === "r") {
      const diff = Math.round((at.getTime() - Date.now()) / 1000);
      const rtf = new Intl.RelativeTimeFormat(lang, {numeric: "auto"});
      const abs = Math.abs(diff);
      if (abs < 60) return rtf.format(diff, "second");
      if (abs < 3600) return rtf.format(Math.trunc(diff / 60), "minute");
      if (abs < 86400) return rtf.format(Math.trunc(diff / 3600), "hour");
      return rtf.format(Math.trunc(diff / 86400), "day");
    }
    const opts = {};
    if (format.includes("w")) opts.weekday = "long";
    if (format.includes("d")) Object.assign(opts, {day: "numeric", month: "numeric", year: "numeric"});
    if (format.includes("D")) Object.assign(opts, {day: "numeric", month: "long", year: "numeric"});
    if (format.includes("t")) Object.assign(opts, {hour: "2-digit", minute: "2-digit"});
    if (format.includes("T")) Object.assign(opts, {hour: "2-digit", minute: "2-digit", second: "2-digit"});
    if (!Object.keys(opts).length) return null;  // no format: the text as sent
    return new Intl.DateTimeFormat(lang, opts).format(at);
  } catch (e) {
    return null;
  }
}

setInterval(() => {
  for (const node of document.querySelectorAll(".tg-time[data-format='r']")) {
    const shown = formatTime(Number(node.dataset.unix), "r", node.dataset.lang);
    if (shown && node.textContent !== shown) node.textContent = shown;
  }
}, 1000);

// ------------------------------------------------------------------- panes
function buildPanes() {
  const main = document.getElementById("chats");
  main.textContent = "";
  const head = state.head;
  const names = document.querySelectorAll(".intro .p0, .intro .p1, .intro .p2");
  names.forEach(n => {
    const i = Number(n.className.slice(1));
    if (head.people[i]) { n.textContent = head.people[i].name; n.style.color = COLORS[i]; }
  });
  state.actor = state.actor || head.people[0].id;
  main.append(groupPane());
  for (const p of head.people) main.append(privatePane(p));
}

function avatar(text, color) { return el("div", {class: "avatar", style: `background:${color}`}, text.slice(0, 1)); }

function groupPane() {
  const g = state.head.group;
  const pane = {id: String(g.id), kind: "group", messages: new Map()};
  const who = el("div", {class: "actor"}, el("span", {class: "actor-label"}, "You act here as:"));
  for (const p of state.head.people) {
    who.append(el("button", {
      type: "button", class: "who", "data-person": p.id, style: `--c:${colorOf(p.id)}`,
      onclick: () => { state.actor = p.id; refreshActor(); },
    }, p.name + (g.admins.includes(p.id) ? " (admin)" : "")));
  }
  const creator = person(g.admins[0]) || state.head.people[0];
  pane.hint = el("div", {class: "empty-hint"}, "Nothing here yet. As ", el("b", {}, creator.name),
    ", send ", el("code", {}, "/start_game"), " (or pick it from ☰ Menu) to open a game.");
  pane.node = el("section", {class: "chat group", "data-chat": g.id},
    el("div", {class: "chat-head"}, avatar(g.title, "#5a8fbb"),
      el("div", {class: "titles"}, el("div", {class: "title"}, g.title),
        el("div", {class: "sub"}, `group · ${state.head.people.length} people and @${state.head.bot.username}`))),
    who);
  finishPane(pane);
  panes.set(pane.id, pane);
  return pane.node;
}

function privatePane(p) {
  const pane = {id: String(p.id), kind: "private", person: p.id, messages: new Map()};
  const select = el("select", {class: "language", "aria-label": `${p.name}'s Telegram language`,
    onchange: async ev => {
      const r = await post("/api/language", {user: p.id, language_code: ev.target.value});
      if (!r.ok) toast(pane, r.description || "refused", true);
      else toast(pane, `${p.name}'s Telegram is now in ${state.head.languages[ev.target.value]}: the bot learns it from ${p.name}'s next message or tap.`);
    }});
  for (const [code, name] of Object.entries(state.head.languages)) {
    select.append(el("option", {value: code, selected: code === p.language}, name));
  }
  pane.node = el("section", {class: "chat private", "data-chat": p.id, "data-person": p.id, style: `--c:${colorOf(p.id)}`},
    el("div", {class: "chat-head"}, avatar(state.head.bot.name, "#8a6cd1"),
      el("div", {class: "titles"},
        el("div", {class: "title"}, el("span", {class: "owner", style: `color:${colorOf(p.id)}`}, p.name), " · private chat with the bot"),
        el("div", {class: "sub"}, "only ", p.name, " sees this · Telegram in ", select))));
  finishPane(pane);
  panes.set(pane.id, pane);
  return pane.node;
}

function finishPane(pane) {
  pane.list = el("div", {class: "messages", "data-role": "messages"});
  pane.toasts = el("div", {class: "toasts"});
  pane.input = el("input", {type: "text", name: "text", autocomplete: "off", "aria-label": "message"});
  pane.menu = el("div", {class: "menu-list hidden"});
  pane.startBar = el("div", {class: "start-bar hidden"});
  pane.form = el("form", {class: "composer", onsubmit: ev => { ev.preventDefault(); send(pane, pane.input.value); }},
    el("button", {type: "button", class: "menu-button", title: "the bot's commands", onclick: () => toggleMenu(pane)}, "☰ Menu"),
    pane.input,
    el("button", {type: "submit", class: "send"}, "Send"));
  if (pane.hint) pane.list.append(pane.hint);
  pane.node.append(el("div", {class: "body"}, pane.list, pane.toasts), pane.menu, pane.startBar, pane.form);
  refreshComposer(pane);
}

function actorOf(pane) { return pane.kind === "group" ? state.actor : pane.person; }

function refreshActor() {
  const pane = panes.get(String(state.head.group.id));
  for (const b of pane.node.querySelectorAll(".who")) b.classList.toggle("active", Number(b.dataset.person) === state.actor);
  pane.node.style.setProperty("--c", colorOf(state.actor));
  refreshComposer(pane);
  renderChat(pane, true);
}

function refreshComposer(pane) {
  const p = person(actorOf(pane));
  pane.input.placeholder = pane.kind === "group" ? `Write in the group as ${p.name}…` : `Write to the bot as ${p.name}…`;
  pane.form.querySelector(".send").style.background = colorOf(p.id);
  // a private chat nobody started yet (or a t.me start link just followed): Telegram's Start button
  if (pane.kind === "private") {
    const payload = pendingStart.get(p.id);
    const show = !p.started || p.blocked || payload !== undefined;
    pane.startBar.classList.toggle("hidden", !show);
    pane.form.classList.toggle("hidden", show);
    pane.startBar.textContent = "";
    if (show) {
      pane.startBar.append(
        el("div", {class: "start-note"}, payload ? `Telegram opened ${p.name}'s chat with the bot from a link.` : `${p.name} has not started the bot yet.`),
        el("button", {type: "button", class: "start", onclick: async () => {
          pendingStart.delete(p.id);
          const r = await post("/api/start", {user: p.id, payload: payload || null});
          if (!r.ok) toast(pane, r.description || "refused", true);
          refreshComposer(pane);
        }}, "START"));
    }
  }
}

function toggleMenu(pane) {
  const p = person(actorOf(pane));
  const commands = p.menus[pane.kind] || [];
  pane.menu.textContent = "";
  if (!commands.length) pane.menu.append(el("div", {class: "menu-empty"}, "The bot has set no commands yet."));
  for (const c of commands) {
    pane.menu.append(el("button", {type: "button", class: "menu-item", onclick: () => { pane.menu.classList.add("hidden"); send(pane, "/" + c.command); }},
      el("span", {class: "cmd"}, "/" + c.command), el("span", {class: "desc"}, c.description)));
  }
  pane.menu.classList.toggle("hidden");
}

async function send(pane, text) {
  text = text.trim();
  if (!text) return;
  const user = actorOf(pane);
  pane.input.value = "";
  const r = await post("/api/send", {user, chat: Number(pane.id), text});
  if (!r.ok) toast(pane, `Telegram would not let ${person(user).name} send this: ${r.description}`, true);
}

async function tap(pane, message, button, node) {
  const user = actorOf(pane);
  if (button.url !== undefined) {
    const link = botLink(button.url);
    if (link) openPrivate(user, link.payload);
    else window.open(button.url, "_blank", "noopener");
    return;
  }
  node.classList.add("loading");
  const r = await post("/api/tap", {user, chat: Number(pane.id), message_id: message.id, data: button.callback_data});
  node.classList.remove("loading");
  if (!r.ok) { toast(pane, `${person(user).name} cannot tap this: ${r.description}`, true); return; }
  if (!r.answered) { toast(pane, "The bot did not answer the tap (Telegram stops the button's spinner after a while).", true); return; }
  const a = r.answer || {};
  if (a.text && a.show_alert) alertBox(person(user).name, a.text);
  else if (a.text) toast(pane, a.text, false, pane.kind === "group" ? user : null);
  if (a.url) {
    const link = botLink(a.url);
    if (link) openPrivate(user, link.payload);
  }
}

function openPrivate(user, payload) {
  // what Telegram's app does with a link to the bot: it opens the person's private chat with it
  const pane = panes.get(String(user));
  if (payload) pendingStart.set(user, payload);
  refreshComposer(pane);
  pane.node.scrollIntoView({behavior: "smooth", block: "nearest", inline: "nearest"});
  pane.node.classList.remove("opened");
  void pane.node.offsetWidth;
  pane.node.classList.add("opened");
}

function toast(pane, text, error = false, forPerson = null) {
  // a tap's answer is shown to the one who tapped: in the shared group, say who that is
  const who = forPerson === null ? null : el("span", {class: "toast-who", style: `color:${colorOf(forPerson)}`}, `${person(forPerson).name} sees: `);
  const t = el("div", {class: "toast" + (error ? " error" : ""), role: "status"}, who, text);
  pane.toasts.append(t);
  while (pane.toasts.children.length > 2) pane.toasts.firstChild.remove();  // the newest two
  setTimeout(() => t.classList.add("gone"), error ? 6000 : 3500);
  setTimeout(() => t.remove(), error ? 6600 : 4100);
}

function alertBox(who, text) {
  const modal = document.getElementById("modal");
  modal.querySelector(".modal-who").textContent = `${who} sees:`;
  modal.querySelector(".modal-text").textContent = text;
  modal.classList.remove("hidden");
  modal.querySelector(".modal-ok").focus();
}
document.querySelector("#modal .modal-ok").addEventListener("click", () => document.getElementById("modal").classList.add("hidden"));

// ----------------------------------------------------------------- messages
function messageNode(pane, m) {
  const actor = actorOf(pane);
  const mine = m.from === actor;
  const lang = languageOf(person(actor));
  const bubble = el("div", {class: "bubble"});
  if (pane.kind === "group" && !mine) {
    bubble.append(el("div", {class: "name", style: `color:${m.from === "bot" ? "#8a6cd1" : colorOf(m.from)}`}, m.name));
  }
  if (m.reply_to) bubble.append(el("div", {class: "reply"}, el("b", {}, m.reply_to.name), " ", m.reply_to.text));
  if (m.document) {
    bubble.append(el("a", {class: "document", href: `/api/file/${pane.id}/${m.id}`, download: m.document.name},
      el("span", {class: "doc-icon"}, "⬇"), el("span", {}, el("b", {}, m.document.name), el("br"), `${(m.document.size / 1024).toFixed(1)} KB`)));
  }
  if (m.text) bubble.append(el("div", {class: "text"}, renderText(m.text, m.entities, lang)));
  else if (m.service) bubble.append(el("div", {class: "service"}, m.service.join(", ").replaceAll("_", " ")));
  const time = new Date(m.date * 1000).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"});
  bubble.append(el("div", {class: "meta"}, m.edited ? "edited " : "", time));
  const node = el("div", {class: `msg ${mine ? "out" : "in"}${m.from === "bot" ? " bot" : ""}`, "data-id": m.id}, bubble);
  if (m.buttons.length) {
    const kb = el("div", {class: "keyboard"});
    for (const row of m.buttons) {
      const r = el("div", {class: "kb-row"});
      for (const b of row) {
        const btn = el("button", {type: "button", class: "kb" + (b.style ? " " + b.style : "") + (b.url ? " link" : ""),
          "data-callback": b.callback_data, "data-url": b.url}, b.text);
        btn.addEventListener("click", () => tap(pane, m, b, btn));
        r.append(btn);
      }
      kb.append(r);
    }
    node.append(kb);
  }
  return node;
}

function renderChat(pane, force = false) {
  const messages = state.chats[pane.id] || [];
  const list = pane.list;
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 60;
  const seen = new Set();
  let previous = null;
  for (const m of messages) {
    const key = String(m.id);
    seen.add(key);
    const json = JSON.stringify(m);
    const known = pane.messages.get(key);
    if (known && known.json === json && !force) { previous = known.node; continue; }
    const node = messageNode(pane, m);
    if (known) {
      known.node.replaceWith(node);
      if (known.json !== json && !force) flash(node);
    } else {
      node.classList.add("new");
      if (previous) previous.after(node); else list.prepend(node);
    }
    pane.messages.set(key, {json, node});
    previous = node;
  }
  for (const [key, known] of pane.messages) {
    if (seen.has(key)) continue;
    pane.messages.delete(key);
    known.node.classList.add("deleted");  // Telegram removes a deleted message for everyone
    setTimeout(() => known.node.remove(), 400);
  }
  if (pane.hint) pane.hint.classList.toggle("hidden", messages.length > 0);
  if (atBottom || force) list.scrollTop = list.scrollHeight;
}

function flash(node) {
  node.classList.add("edited-now");
  setTimeout(() => node.classList.remove("edited-now"), 1200);
}

// ------------------------------------------------------------------- events
function connect() {
  const status = document.getElementById("status");
  const source = new EventSource("/api/events");
  source.addEventListener("state", ev => {
    const data = JSON.parse(ev.data);
    const first = state.head === null;
    const languagesChanged = !first && JSON.stringify(state.head.people.map(p => p.language)) !== JSON.stringify(data.head.people.map(p => p.language));
    state.head = data.head;
    Object.assign(state.chats, data.chats);
    if (first || panes.size === 0) { buildPanes(); refreshActor(); }
    for (const pane of panes.values()) {
      if (pane.kind === "private") refreshComposer(pane);
      if (pane.id in data.chats || languagesChanged) renderChat(pane, languagesChanged);
    }
    status.textContent = "● live";
    status.className = "status live";
  });
  source.onerror = () => {
    status.textContent = "disconnected: is the playground still running?";
    status.className = "status down";
  };
}

connect();
