// lovia serve's chat page. Everything from the model, tools or the repository is put
// in the page as text nodes (textContent, createElement): this file never assigns
// innerHTML or outerHTML, so nothing a model or a command prints can become markup.
"use strict";

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
};

const state = {
  session: null, // current session id
  run: null, // run shown (streamed)
  running: false,
  es: null, // EventSource
  cur: null, // the assistant message being streamed: {box, body, text, reasoning}
  tools: new Map(), // call id -> tool element record
  lastInput: 0,
  readOnly: false, // a subagent task is shown
};

// ---- API -----------------------------------------------------------------------
async function api(method, path, body) {
  const opt = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    opt.headers["Content-Type"] = "application/json";
    opt.body = JSON.stringify(body);
  }
  const r = await fetch(path, opt);
  if (r.status === 204) return null;
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.error || r.status + " " + r.statusText);
  return data;
}

function notice(text, err) {
  const n = el("div", "notice" + (err ? " err" : ""), text);
  append(n);
}

function append(node) {
  const log = $("log");
  const stick = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  log.appendChild(node);
  if (stick) log.scrollTop = log.scrollHeight;
}

// ---- markdown (a small, safe subset) ---------------------------------------------
const KEYWORDS = new Set(("break case catch class const continue def default defer do elif else enum export extends " +
  "false fn for func function go if import in interface let match mod new nil none None null package pub return " +
  "select self static struct super switch this throw true True False try type use var while with yield async await from as impl").split(" "));

function highlight(code) {
  const frag = document.createDocumentFragment();
  const re = /(\/\/[^\n]*|#[^\n]*|\/\*[\s\S]*?\*\/)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)|(\b\d[\d_.xXa-fA-F]*\b)|([A-Za-z_][A-Za-z0-9_]*)/g;
  let last = 0;
  let m;
  while ((m = re.exec(code)) !== null) {
    if (m.index > last) frag.appendChild(document.createTextNode(code.slice(last, m.index)));
    let cls = null;
    if (m[1]) cls = "tok-c";
    else if (m[2]) cls = "tok-s";
    else if (m[3]) cls = "tok-n";
    else if (m[4] && KEYWORDS.has(m[4])) cls = "tok-k";
    if (cls) frag.appendChild(el("span", cls, m[0]));
    else frag.appendChild(document.createTextNode(m[0]));
    last = re.lastIndex;
  }
  if (last < code.length) frag.appendChild(document.createTextNode(code.slice(last)));
  return frag;
}

function diffBlock(text) {
  const pre = el("pre", "diff");
  for (const line of text.split("\n")) {
    let cls = "";
    if (line.startsWith("+") && !line.startsWith("+++")) cls = "add";
    else if (line.startsWith("-") && !line.startsWith("---")) cls = "del";
    else if (line.startsWith("@@")) cls = "hunk";
    pre.appendChild(el("span", cls, line + "\n"));
  }
  return pre;
}

function codeBlock(code, lang) {
  if (lang === "diff" || lang === "patch") return diffBlock(code);
  const pre = el("pre");
  const c = el("code");
  if (lang) c.dataset.lang = lang;
  c.appendChild(highlight(code));
  pre.appendChild(c);
  return pre;
}

function inline(text, parent) {
  // `code`, **bold**, *em* / _em_, [text](http…)
  const re = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|(?:^|(?<=\W))[*_]([^*_\n]+)[*_](?!\w)|\[([^\]\n]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  let m;
  while ((m = re.exec(text)) !== null) {
    if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
    if (m[2] !== undefined) parent.appendChild(el("code", "", m[2]));
    else if (m[3] !== undefined) parent.appendChild(el("strong", "", m[3]));
    else if (m[4] !== undefined) parent.appendChild(el("em", "", m[4]));
    else if (m[5] !== undefined) {
      let url = null;
      try { url = new URL(m[6], location.href); } catch (_) { url = null; }
      if (url && (url.protocol === "https:" || url.protocol === "http:")) {
        const a = el("a", "", m[5]);
        a.href = url.href;
        a.rel = "noopener noreferrer nofollow";
        a.target = "_blank";
        parent.appendChild(a);
      } else parent.appendChild(document.createTextNode(m[0]));
    }
    last = re.lastIndex;
  }
  if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
}

function markdown(src) {
  const frag = document.createDocumentFragment();
  const lines = src.replace(/\r\n/g, "\n").split("\n");
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) {
      const p = el("p");
      inline(para.join("\n"), p);
      frag.appendChild(p);
      para = [];
    }
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)/);
    if (fence) {
      flush();
      const close = fence[1];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(close)) body.push(lines[i++]);
      i++;
      frag.appendChild(codeBlock(body.join("\n"), fence[2].toLowerCase()));
      continue;
    }
    const h = line.match(/^(#{1,6})\s+(.*)$/);
    if (h) {
      flush();
      const e = el("h" + Math.min(6, h[1].length + 2));
      inline(h[2], e);
      frag.appendChild(e);
      i++;
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      flush();
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? "ol" : "ul");
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        const li = el("li");
        inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""), li);
        list.appendChild(li);
        i++;
      }
      frag.appendChild(list);
      continue;
    }
    if (/^>\s?/.test(line)) {
      flush();
      const q = el("blockquote");
      const body = [];
      while (i < lines.length && /^>\s?/.test(lines[i])) body.push(lines[i++].replace(/^>\s?/, ""));
      inline(body.join("\n"), q);
      frag.appendChild(q);
      continue;
    }
    if (line.trim() === "") flush();
    else para.push(line);
    i++;
  }
  flush();
  return frag;
}

// ---- rendering -------------------------------------------------------------------
function assistant() {
  if (!state.cur) {
    const box = el("div", "msg assistant");
    const body = el("div", "body");
    box.appendChild(body);
    append(box);
    state.cur = { box, body, text: "", reasoning: null, pending: false };
  }
  return state.cur;
}

function renderCur() {
  const c = state.cur;
  if (!c || c.pending) return;
  c.pending = true;
  requestAnimationFrame(() => {
    c.pending = false;
    c.body.replaceChildren(markdown(c.text));
    const log = $("log");
    if (log.scrollHeight - log.scrollTop - log.clientHeight < 200) log.scrollTop = log.scrollHeight;
  });
}

function userMsg(text, steer) {
  append(el("div", "msg user" + (steer ? " steer" : ""), text));
}

function pretty(raw) {
  if (raw === undefined || raw === null) return "";
  try { return JSON.stringify(typeof raw === "string" ? JSON.parse(raw) : raw, null, 2); } catch (_) { return String(raw); }
}

function toolBox(callID, name, args) {
  let t = state.tools.get(callID);
  if (t) return t;
  const box = el("div", "tool waiting");
  box.dataset.call = callID;
  const head = el("div", "head");
  head.appendChild(el("span", "name", name));
  const a = args && typeof args === "object" ? args : null;
  const short = a && (a.command || a.path || a.pattern || a.url || "");
  if (short) head.appendChild(document.createTextNode(" " + String(short).slice(0, 160)));
  box.appendChild(head);
  const det = el("details");
  det.appendChild(el("summary", "", "arguments"));
  const argText = pretty(args);
  det.appendChild(codeBlock(argText, "json"));
  box.appendChild(det);
  if (a && typeof a.diff === "string") box.appendChild(diffBlock(a.diff));
  else if (a && typeof a.old_string === "string" && typeof a.new_string === "string") {
    // An edit: show it as a diff of the replaced text.
    const lines = [];
    for (const l of a.old_string.split("\n")) lines.push("-" + l);
    for (const l of a.new_string.split("\n")) lines.push("+" + l);
    box.appendChild(diffBlock(lines.join("\n")));
  } else if (a && typeof a.content === "string" && a.path) {
    const det2 = el("details");
    det2.appendChild(el("summary", "", "content"));
    det2.appendChild(codeBlock(a.content, String(a.path).split(".").pop()));
    box.appendChild(det2);
  }
  append(box);
  t = { box, approval: null };
  state.tools.set(callID, t);
  return t;
}

// A running tool may ask again on the same call (an MCP server's sampling request
// or form): an answered panel goes away so the next one can show.
function approvalAnswered(t, p) {
  if (t.approval === p) { p.remove(); t.approval = null; }
}

function approvalPanel(ev) {
  const t = toolBox(ev.call_id, ev.name, ev.args);
  if (t.approval && t.approval.dataset.seq === String(ev.seq)) return;
  // A later approval of the same call (a running tool asking again) is the one
  // waiting: it replaces an earlier panel (e.g. replayed after a reload).
  if (t.approval) { t.approval.remove(); t.approval = null; }
  const ap = ev.approval || {};
  if (ap.kind === "form") return formPanel(ev, t, ap);
  if (ap.kind === "url") return urlPanel(ev, t, ap);
  const p = el("div", "approval");
  p.dataset.call = ev.call_id;
  p.dataset.seq = String(ev.seq);
  p.appendChild(el("div", "", "Approve " + (ap.kind || "tool") + "?"));
  p.appendChild(el("div", "summary", ap.summary || ev.name));
  if (ap.diff) p.appendChild(diffBlock(ap.diff));
  const buttons = el("div", "buttons");
  const msg = el("input");
  msg.placeholder = "reason (sent to the model with a denial)";
  const answer = async (decision) => {
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    try {
      await api("POST", `/api/runs/${encodeURIComponent(ev.run_id)}/approvals/${encodeURIComponent(ev.call_id)}`,
        decision === "deny" ? { decision, message: msg.value } : { decision });
      approvalAnswered(t, p);
    } catch (e) {
      notice("approval: " + e.message, true);
      for (const b of buttons.querySelectorAll("button")) b.disabled = false;
    }
  };
  const mk = (label, cls, decision) => {
    const b = el("button", cls, label);
    b.type = "button";
    b.dataset.decision = decision;
    b.addEventListener("click", () => answer(decision));
    buttons.appendChild(b);
  };
  mk("Allow", "allow", "allow");
  if (ap.rules && ap.rules.length) mk("Allow for session (" + ap.rules.join(", ") + ")", "allow", "allow_session");
  mk("Deny", "deny", "deny");
  buttons.appendChild(msg);
  p.appendChild(buttons);
  t.box.appendChild(p);
  t.approval = p;
  t.box.scrollIntoView({ block: "nearest" });
}

// ---- MCP elicitation: a form (or a URL to open) an MCP server asks the person for.
// One control per property of the requested schema; values start at the defaults;
// the server (lovia) checks the answer against the schema and says what is wrong.
function formOptions(s) {
  const out = [];
  if (!s) return out;
  if (Array.isArray(s.enum)) s.enum.forEach((v, i) => out.push({ value: String(v), label: String((s.enumNames && s.enumNames[i]) || v) }));
  for (const c of [].concat(s.oneOf || [], s.anyOf || [])) {
    if (c && c.const !== undefined) out.push({ value: String(c.const), label: String(c.title || c.const) });
  }
  return out;
}

function formFields(schema) {
  const props = (schema && schema.properties) || {};
  const req = new Set((schema && schema.required) || []);
  const names = Object.keys(props);
  names.sort((a, b) => (req.has(b) ? 1 : 0) - (req.has(a) ? 1 : 0));
  return names.map((name) => {
    const s = props[name] || {};
    let type = s.type;
    let options = [];
    if (type === "array") { type = "multi"; options = formOptions(s.items); }
    else { options = formOptions(s); if (options.length) type = "enum"; }
    return { name, s, type, options, required: req.has(name) };
  });
}

function formPanel(ev, t, ap) {
  const p = el("div", "approval form");
  p.dataset.call = ev.call_id;
  p.dataset.seq = String(ev.seq);
  p.appendChild(el("div", "", "An MCP server asks you to fill in a form"));
  p.appendChild(el("div", "summary", ap.summary || ""));
  const fields = formFields(ap.form);
  const read = [];
  for (const f of fields) {
    const row = el("label", "field");
    row.dataset.field = f.name;
    row.appendChild(el("span", "label", (f.s.title || f.name) + (f.required ? " *" : "")));
    const def = f.s.default;
    let get;
    if (f.type === "boolean") {
      const c = el("input"); c.type = "checkbox"; c.name = f.name; c.checked = def === true;
      row.appendChild(c);
      get = () => c.checked;
    } else if (f.type === "enum") {
      const sel = el("select"); sel.name = f.name;
      if (!f.required || def === undefined) sel.appendChild(el("option", "", ""));
      for (const o of f.options) { const op = el("option", "", o.label); op.value = o.value; sel.appendChild(op); }
      sel.value = def === undefined ? "" : String(def);
      row.appendChild(sel);
      get = () => (sel.value === "" ? undefined : sel.value);
    } else if (f.type === "multi") {
      const box = el("span", "choices");
      const checks = f.options.map((o) => {
        const l = el("label"); const c = el("input"); c.type = "checkbox"; c.name = f.name; c.value = o.value;
        c.checked = Array.isArray(def) && def.map(String).includes(o.value);
        l.appendChild(c); l.appendChild(document.createTextNode(" " + o.label)); box.appendChild(l);
        return c;
      });
      row.appendChild(box);
      get = () => { const v = checks.filter((c) => c.checked).map((c) => c.value); return v.length ? v : undefined; };
    } else {
      const inp = el("input"); inp.name = f.name;
      if (f.type === "number" || f.type === "integer") {
        inp.type = "number"; inp.step = f.type === "integer" ? "1" : "any";
        if (f.s.minimum !== undefined) inp.min = String(f.s.minimum);
        if (f.s.maximum !== undefined) inp.max = String(f.s.maximum);
      } else {
        inp.type = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" }[f.s.format] || "text";
      }
      if (def !== undefined) inp.value = String(def);
      row.appendChild(inp);
      get = () => {
        if (inp.value === "") return undefined;
        if (f.type === "number" || f.type === "integer") { const n = Number(inp.value); return Number.isNaN(n) ? inp.value : n; }
        return inp.value;
      };
    }
    if (f.s.description) row.appendChild(el("span", "hint", f.s.description));
    p.appendChild(row);
    read.push([f.name, get]);
  }
  const err = el("div", "notice err");
  err.hidden = true;
  const buttons = el("div", "buttons");
  const send = async (body) => {
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    try {
      await api("POST", `/api/runs/${encodeURIComponent(ev.run_id)}/approvals/${encodeURIComponent(ev.call_id)}`, body);
      approvalAnswered(t, p);
    } catch (e) {
      err.textContent = e.message; err.hidden = false;
      for (const b of buttons.querySelectorAll("button")) b.disabled = false;
    }
  };
  const mk = (label, cls, decision, body) => {
    const b = el("button", cls, label); b.type = "button"; b.dataset.decision = decision;
    b.addEventListener("click", () => send(body()));
    buttons.appendChild(b);
  };
  mk("Accept", "allow", "accept", () => {
    const content = {};
    for (const [name, get] of read) { const v = get(); if (v !== undefined) content[name] = v; }
    return { decision: "allow", content };
  });
  mk("Decline", "deny", "decline", () => ({ decision: "deny" }));
  mk("Cancel", "deny", "cancel", () => ({ decision: "cancel" }));
  p.appendChild(err);
  p.appendChild(buttons);
  t.box.appendChild(p);
  t.approval = p;
  t.box.scrollIntoView({ block: "nearest" });
}

// A URL elicitation: the address is shown as text to copy, never opened or linked.
function urlPanel(ev, t, ap) {
  const p = el("div", "approval url");
  p.dataset.call = ev.call_id;
  p.dataset.seq = String(ev.seq);
  p.appendChild(el("div", "", "An MCP server asks you to open a URL (lovia does not open it)"));
  p.appendChild(el("div", "summary", ap.summary || ""));
  p.appendChild(el("pre", "url", ap.url || ""));
  const buttons = el("div", "buttons");
  const send = async (body) => {
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    try {
      await api("POST", `/api/runs/${encodeURIComponent(ev.run_id)}/approvals/${encodeURIComponent(ev.call_id)}`, body);
      approvalAnswered(t, p);
    } catch (e) {
      notice("approval: " + e.message, true);
      for (const b of buttons.querySelectorAll("button")) b.disabled = false;
    }
  };
  const mk = (label, cls, decision, body) => {
    const b = el("button", cls, label); b.type = "button"; b.dataset.decision = decision;
    b.addEventListener("click", () => send(body));
    buttons.appendChild(b);
  };
  mk("I opened it and finished", "allow", "accept", { decision: "allow", message: "elicitation:accept" });
  mk("Decline", "deny", "decline", { decision: "deny" });
  mk("Cancel", "deny", "cancel", { decision: "cancel" });
  p.appendChild(buttons);
  t.box.appendChild(p);
  t.approval = p;
}

// toolProgress shows a running call's latest progress on its card (as text: the
// words are the tool's, an MCP server's).
function toolProgress(ev) {
  const t = state.tools.get(ev.call_id);
  const p = ev.progress;
  if (!t || !p || !t.box.classList.contains("waiting")) return;
  if (!t.progress) {
    t.progress = el("div", "progress");
    t.bar = el("progress");
    t.label = el("span");
    t.progress.append(t.bar, t.label);
    t.box.insertBefore(t.progress, t.box.children[1] || null);
  }
  if (p.total > 0) { t.bar.max = p.total; t.bar.value = Math.min(p.progress, p.total); t.bar.hidden = false; }
  else t.bar.hidden = true;
  t.label.textContent = " " + p.progress + (p.total > 0 ? "/" + p.total : "") + (p.message ? " · " + p.message : "");
}

function toolDone(ev) {
  const t = toolBox(ev.call_id, ev.name, ev.args);
  if (t.progress) { t.progress.remove(); t.progress = null; }
  if (t.approval) { t.approval.remove(); t.approval = null; }
  t.box.classList.remove("waiting");
  t.box.classList.add(ev.type === "tool_call_completed" ? "ok" : "err");
  const ap = ev.approval;
  if (ap && ap.decision && ap.decision.startsWith("denied")) t.box.appendChild(el("div", "notice err", "denied (" + ap.decision + ")"));
  if (ev.output) {
    const det = el("details");
    det.open = ev.type === "tool_call_failed" || ev.output.length < 400;
    det.appendChild(el("summary", "", "output" + (ev.truncated ? " (truncated)" : "")));
    det.appendChild(/^(diff|---|@@)/m.test(ev.output) && /^[+-]/m.test(ev.output) ? diffBlock(ev.output) : el("pre", "", ev.output));
    t.box.appendChild(det);
  }
}

function fmt(n) { return n >= 10000 ? (n / 1000).toFixed(1) + "k" : String(n || 0); }

function setUsage(u) {
  if (u) state.usage = u;
  u = state.usage;
  if (!u) return;
  let ctx = "";
  if (state.lastInput) {
    ctx = ` · context ${fmt(state.lastInput)}`;
    if (state.window) ctx += ` (${Math.round((100 * state.lastInput) / state.window)}% of ${fmt(state.window)})`;
  }
  $("usage").textContent = `tokens ${fmt(u.input_tokens)} in / ${fmt(u.output_tokens)} out` +
    (u.cached_input_tokens ? ` (${fmt(u.cached_input_tokens)} cached)` : "") +
    (typeof state.cost === "number" ? ` · $${state.cost.toFixed(4)}` : "") + ctx;
}

// runInfo refreshes the context window and the cost estimate of the shown run.
async function runInfo() {
  if (!state.run) return;
  try {
    const info = await api("GET", `/api/runs/${encodeURIComponent(state.run)}`);
    state.window = info.context_window || 0;
    state.cost = typeof info.cost_usd === "number" ? info.cost_usd : null;
    setUsage(info.usage);
  } catch (_) { /* the next turn tries again */ }
}

function setStatus(s) {
  const st = $("status");
  st.textContent = s;
  st.className = "status " + s;
  state.running = s === "running";
  $("cancel").hidden = !state.running || state.readOnly;
  $("resume").hidden = state.readOnly || !(s === "interrupted" || s === "failed") || !state.run;
  $("send").textContent = state.running ? "Steer" : "Send";
  $("composer").hidden = state.readOnly;
}

function onEvent(ev) {
  switch (ev.type) {
    case "run_started":
      setStatus("running");
      if (ev.session_id && !state.session) { state.session = ev.session_id; saveHash(); }
      break;
    case "turn_started":
      break;
    case "user_message_injected":
      state.cur = null;
      userMsg(ev.text, true);
      break;
    case "reasoning_delta": {
      const c = assistant();
      if (!c.reasoning) {
        c.reasoning = el("details", "reasoning");
        c.reasoning.appendChild(el("summary", "", "reasoning"));
        c.reasoningText = el("span");
        c.reasoning.appendChild(c.reasoningText);
        c.box.insertBefore(c.reasoning, c.body);
      }
      c.reasoningText.textContent += ev.text;
      break;
    }
    case "text_delta": {
      const c = assistant();
      c.text += ev.text;
      renderCur();
      break;
    }
    case "output_discarded":
      if (state.cur) { state.cur.box.remove(); state.cur = null; }
      notice("retrying: " + ev.text);
      break;
    case "message_completed": {
      if (ev.text) {
        const c = assistant();
        c.text = ev.text;
        renderCur();
      }
      if (ev.usage) state.lastInput = ev.usage.input_tokens;
      state.cur = null;
      break;
    }
    case "tool_call_started":
      state.cur = null;
      toolBox(ev.call_id, ev.name, ev.args);
      break;
    case "approval_required":
      state.cur = null;
      if (!state.readOnly) approvalPanel(ev);
      else toolBox(ev.call_id, ev.name, ev.args);
      break;
    case "tool_call_progress":
      toolProgress(ev);
      break;
    case "tool_call_completed":
    case "tool_call_failed":
      toolDone(ev);
      break;
    case "handoff_occurred":
      notice(`handoff ${ev.from} → ${ev.to}`);
      break;
    case "context_compacted":
      if (ev.compaction) notice(`context compacted ${fmt(ev.compaction.tokens_before)} → ${fmt(ev.compaction.tokens_after)} tokens`);
      break;
    case "turn_ended":
      setUsage(ev.usage);
      runInfo();
      break;
    case "run_completed":
    case "run_failed":
      state.cur = null;
      setUsage(ev.usage);
      if (ev.error) notice(ev.error.message + (ev.error.hint ? " — " + ev.error.hint : ""), true);
      setStatus(ev.status || (ev.type === "run_completed" ? "completed" : "failed"));
      closeStream();
      runInfo();
      refreshLists();
      break;
  }
}

function closeStream() {
  if (state.es) { state.es.close(); state.es = null; }
}

function follow(runID) {
  closeStream();
  state.run = runID;
  saveHash();
  const es = new EventSource(`/api/runs/${encodeURIComponent(runID)}/events`);
  state.es = es;
  es.onmessage = (m) => {
    let ev;
    try { ev = JSON.parse(m.data); } catch (_) { return; }
    onEvent(ev);
  };
  es.onerror = async () => {
    // The browser reconnects by itself with Last-Event-ID. A stream it gave up on (the
    // server restarted and no longer holds the run's events): show the run's status.
    if (es.readyState !== EventSource.CLOSED || state.es !== es) return;
    state.es = null;
    try {
      const info = await api("GET", `/api/runs/${encodeURIComponent(runID)}`);
      if (state.run === runID) {
        setStatus(info.status);
        if (info.status !== "running") notice("the stream ended; the run is " + info.status);
      }
    } catch (e) {
      notice("lost the connection to lovia serve: " + e.message, true);
    }
  };
}

// ---- sessions and runs -----------------------------------------------------------
function saveHash() {
  const p = new URLSearchParams();
  if (state.session) p.set("s", state.session);
  if (state.run) p.set("r", state.run);
  const h = "#" + p.toString();
  if (location.hash !== h) history.replaceState(null, "", h);
}

function clearLog() {
  closeStream();
  $("log").replaceChildren();
  state.tools.clear();
  state.cur = null;
  state.lastInput = 0;
  state.usage = null;
  state.cost = null;
  state.window = 0;
  $("usage").textContent = "";
}

function renderEntries(entries, skipRun) {
  for (const e of entries) {
    if (skipRun && e.run_id === skipRun) continue;
    switch (e.type) {
      case "input":
        if (e.role === "user" || !e.role) { state.cur = null; userMsg(e.text || ""); }
        break;
      case "assistant_text": {
        state.cur = null;
        const c = assistant();
        c.text = e.text || "";
        c.body.replaceChildren(markdown(c.text));
        state.cur = null;
        break;
      }
      case "tool_call":
        state.cur = null;
        toolBox(e.call_id, e.name, e.args);
        break;
      case "tool_result":
        toolDone({ type: e.is_error ? "tool_call_failed" : "tool_call_completed", call_id: e.call_id, name: e.name, output: e.text, truncated: e.truncated });
        break;
    }
  }
}

async function openSession(id, runID) {
  clearLog();
  state.session = id;
  state.run = runID || null;
  state.readOnly = false;
  $("view").textContent = "session " + id;
  setStatus("idle");
  saveHash();
  let d;
  try { d = await api("GET", `/api/sessions/${encodeURIComponent(id)}`); } catch (e) { d = null; }
  const active = d && d.active_run && d.active_run !== "(starting)" ? d.active_run : null;
  const live = active || runID;
  let liveInfo = null;
  if (live) {
    try { liveInfo = await api("GET", `/api/runs/${encodeURIComponent(live)}`); } catch (_) { liveInfo = null; }
  }
  const streamable = liveInfo && liveInfo.live && liveInfo.events > 0 && (liveInfo.status === "running" || live === active);
  if (d) renderEntries(d.entries, streamable ? live : null);
  if (streamable) {
    state.cur = null;
    if (liveInfo.prompt) userMsg(liveInfo.prompt);
    follow(live);
  }
  else if (liveInfo) {
    state.run = live;
    setStatus(liveInfo.status);
    state.window = liveInfo.context_window || 0;
    state.cost = typeof liveInfo.cost_usd === "number" ? liveInfo.cost_usd : null;
    setUsage(liveInfo.usage);
  }
  markCurrent();
}

async function openTask(id) {
  clearLog();
  state.readOnly = true;
  state.run = id;
  $("view").textContent = "subagent task " + id + " (read only)";
  setStatus("…");
  saveHash();
  follow(id);
  markCurrent();
}

function markCurrent() {
  for (const a of document.querySelectorAll("#side a")) {
    a.classList.toggle("current", a.dataset.id === state.session || a.dataset.id === state.run);
  }
}

function link(text, id, onclick, badge) {
  const li = el("li");
  const a = el("a", "", text);
  a.dataset.id = id;
  a.title = id;
  a.addEventListener("click", (e) => { e.preventDefault(); $("side").classList.remove("open"); onclick(); });
  if (badge) a.appendChild(el("span", "badge", badge));
  li.appendChild(a);
  return li;
}

async function refreshLists() {
  try {
    const sessions = await api("GET", "/api/sessions");
    const ul = $("sessions");
    ul.replaceChildren();
    for (const s of sessions) {
      ul.appendChild(link(s.title || s.session_id, s.session_id, () => openSession(s.session_id), s.active_run ? "running" : ""));
    }
    const runs = await api("GET", "/api/runs");
    const byParent = new Map();
    for (const r of runs) {
      if (r.parent_id) {
        if (!byParent.has(r.parent_id)) byParent.set(r.parent_id, []);
        byParent.get(r.parent_id).push(r);
      }
    }
    const ru = $("runs");
    ru.replaceChildren();
    for (const r of runs.filter((r) => !r.parent_id).slice(0, 50)) {
      const li = link(r.run_id, r.run_id, () => openSession(r.session_id, r.run_id), r.status);
      const kids = byParent.get(r.run_id);
      if (kids) {
        const tl = el("ul", "tasks");
        for (const k of kids) tl.appendChild(link(k.run_id.slice(r.run_id.length + 1) || k.run_id, k.run_id, () => openTask(k.run_id), k.status));
        li.appendChild(tl);
      }
      ru.appendChild(li);
    }
    markCurrent();
  } catch (e) {
    notice("could not list sessions: " + e.message, true);
  }
}

// ---- actions ---------------------------------------------------------------------
async function send() {
  const text = $("prompt").value;
  if (!text.trim()) return;
  try {
    if (state.running && state.run) {
      await api("POST", `/api/runs/${encodeURIComponent(state.run)}/messages`, { text });
      $("prompt").value = "";
      notice("queued for the next turn: " + text.slice(0, 80));
      return;
    }
    const body = { prompt: text };
    if (state.session) body.session_id = state.session;
    const r = await api("POST", "/api/runs", body);
    $("prompt").value = "";
    state.session = r.session_id;
    $("view").textContent = "session " + r.session_id;
    state.cur = null;
    userMsg(text);
    setStatus("running");
    follow(r.run_id);
    refreshLists();
  } catch (e) {
    notice(e.message, true);
  }
}

$("composer").addEventListener("submit", (e) => { e.preventDefault(); send(); });
$("prompt").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
});
$("cancel").addEventListener("click", async () => {
  try { await api("POST", `/api/runs/${encodeURIComponent(state.run)}/cancel`); } catch (e) { notice(e.message, true); }
});
$("resume").addEventListener("click", async () => {
  try {
    const r = await api("POST", `/api/runs/${encodeURIComponent(state.run)}/resume`);
    notice("resuming " + r.run_id);
    state.cur = null;
    setStatus("running");
    follow(r.run_id);
  } catch (e) { notice(e.message, true); }
});
$("new").addEventListener("click", () => {
  clearLog();
  state.session = null;
  state.run = null;
  state.readOnly = false;
  $("view").textContent = "new session";
  setStatus("idle");
  history.replaceState(null, "", "#");
  $("side").classList.remove("open");
  $("prompt").focus();
});
$("menu").addEventListener("click", () => $("side").classList.toggle("open"));

(async function init() {
  const p = new URLSearchParams(location.hash.slice(1));
  const s = p.get("s");
  const r = p.get("r");
  await refreshLists();
  if (s) await openSession(s, r);
  else if (r) await openTask(r);
  else { $("view").textContent = "new session"; setStatus("idle"); }
})();
