// regbot web playground: one conversation per browser tab; each answer streams in as Server-Sent Events
// (read from a POST with fetch), one event per AnswerEvent: status, delta, sources, followups, done, error.
// Text from the server is only ever set as textContent, never parsed as HTML.
"use strict";

(() => {
  const config = JSON.parse(document.getElementById("playground-config").textContent);
  const L = config.labels;
  const M = config.messages;
  const API = config.api;
  const ID_SHAPE = /^[A-Za-z0-9_-]{8,64}$/;
  const CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳";

  const byId = (id) => document.getElementById(id);
  const log = byId("log");
  const intro = byId("intro");
  const form = byId("composer");
  const input = byId("question");
  const sendButton = byId("send");
  const liveStatus = byId("live-status");
  const panel = byId("article-panel");
  const panelHeading = byId("article-heading");
  const panelBody = byId("article-body");

  // --- ids: a user per browser (rate limits), a conversation per tab (history) ---------------------------

  function randomId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes); // crypto.randomUUID needs a secure context; plain http on a LAN has none
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function storedId(storageName, key, renew = false) {
    try {
      const storage = window[storageName];
      let value = storage.getItem(key);
      if (renew || !value || !ID_SHAPE.test(value)) {
        value = randomId();
        storage.setItem(key, value);
      }
      return value;
    } catch {
      return randomId(); // storage disabled: the id lives as long as the page
    }
  }

  const userId = storedId("localStorage", "regbot.playground.user");
  let conversationId = storedId("sessionStorage", "regbot.playground.conversation");
  let busy = false;

  // --- small DOM helpers ----------------------------------------------------------------------------------

  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === false || value === null || value === undefined) continue;
      node.setAttribute(name, value === true ? "" : String(value));
    }
    node.append(...children);
    return node;
  }

  function format(template, values) {
    return template.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ""));
  }

  function citationLabel(citation) {
    let label = [citation.doc, citation.article].filter(Boolean).join(" ");
    if (citation.paragraph) {
      const number = CIRCLED.indexOf(citation.paragraph) + 1;
      label += " " + (number > 0 ? `제${number}항` : citation.paragraph);
    }
    return label;
  }

  function nearBottom() {
    return window.innerHeight + window.scrollY >= document.body.scrollHeight - 120;
  }

  // --- answer text: paragraphs, "- " lists, **bold**, [n] citation markers ------------------------------

  function appendInline(parent, text, citations, opener) {
    const pattern = /\*\*(.+?)\*\*|\[(\d+)\]/g;
    let last = 0;
    for (const match of text.matchAll(pattern)) {
      parent.append(text.slice(last, match.index));
      if (match[1] !== undefined) {
        const strong = el("strong");
        appendInline(strong, match[1], citations, opener);
        parent.append(strong);
      } else {
        const citation = citations.find((c) => c.index === Number(match[2]));
        if (citation) {
          const label = format(L.SOURCE_BUTTON, { index: citation.index, label: citationLabel(citation) });
          const button = el("button", { type: "button", class: "marker", "aria-label": label }, String(citation.index));
          button.addEventListener("click", () => openArticle(citation, button));
          parent.append(button);
        } else {
          parent.append(el("span", { class: "marker-plain" }, match[0]));
        }
      }
      last = match.index + match[0].length;
    }
    parent.append(text.slice(last));
  }

  function renderAnswer(container, text, citations) {
    container.replaceChildren();
    for (const block of text.split(/\n\s*\n/)) {
      const lines = block.split("\n").filter((line) => line.trim() !== "");
      if (!lines.length) continue;
      const bullet = /^\s*[-*•]\s+/;
      if (lines.every((line) => bullet.test(line))) {
        const list = el("ul");
        for (const line of lines) {
          const item = el("li");
          appendInline(item, line.replace(bullet, ""), citations);
          list.append(item);
        }
        container.append(list);
        continue;
      }
      const paragraph = el("p");
      lines.forEach((line, i) => {
        if (i) paragraph.append("\n");
        const heading = line.match(/^#{1,6}\s+(.*)$/);
        if (heading) {
          const strong = el("strong");
          appendInline(strong, heading[1], citations);
          paragraph.append(strong);
        } else {
          appendInline(paragraph, line.replace(bullet, "• "), citations);
        }
      });
      container.append(paragraph);
    }
  }

  // --- conversation turns -------------------------------------------------------------------------------

  function appendUser(text) {
    const item = el("li", { class: "turn turn-user" }, el("p", { class: "who" }, L.YOU), el("div", { class: "bubble" }, text));
    log.append(item);
    return item;
  }

  function appendBot() {
    const stageText = el("span");
    const stage = el("p", { class: "stage", "aria-hidden": "true" }, el("span", { class: "spinner" }), stageText);
    stageText.textContent = L.THINKING;
    const answer = el("div", { class: "answer" });
    const extras = el("div");
    const article = el("article", { "aria-busy": "true", "aria-label": L.BOT }, el("p", { class: "who" }, L.BOT), stage, answer, extras);
    const item = el("li", { class: "turn turn-bot" }, article);
    log.append(item);
    item.scrollIntoView({ block: "end" });
    return { item, article, stage, stageText, answer, extras, text: "", citations: [], sources: null, followups: null, labels: L };
  }

  function showStage(view, text) {
    view.stage.hidden = false;
    view.stageText.textContent = text;
    liveStatus.textContent = text;
  }

  function showSources(view) {
    if (view.sources) view.sources.remove();
    view.sources = null;
    if (!view.citations.length) return;
    const list = el("ol");
    for (const citation of view.citations) {
      const label = citationLabel(citation) + (citation.title ? ` · ${citation.title}` : "");
      const button = el(
        "button",
        { type: "button", class: "citation", "aria-label": format(view.labels.SOURCE_BUTTON, { index: citation.index, label: citationLabel(citation) }) },
        el("span", { class: "num", "aria-hidden": "true" }, `[${citation.index}]`),
        label,
      );
      button.addEventListener("click", () => openArticle(citation, button));
      list.append(el("li", {}, button));
    }
    const heading = el("h3", {}, view.labels.SOURCES_CAPTION);
    view.sources = el("section", { class: "sources" }, heading, list);
    view.extras.prepend(view.sources);
  }

  function showFollowups(view, questions) {
    if (view.followups) view.followups.remove();
    view.followups = null;
    if (!questions || !questions.length) return;
    const buttons = questions.map((question) => {
      const button = el("button", { type: "button" }, question);
      button.addEventListener("click", () => ask(question));
      return button;
    });
    view.followups = el("section", { class: "followups-section" }, el("h3", {}, view.labels.FOLLOWUP_CAPTION), el("div", { class: "followups" }, ...buttons));
    if (view.sources) view.sources.after(view.followups);
    else view.extras.prepend(view.followups);
  }

  function showFeedback(view, turnId) {
    if (!turnId) return;
    const thanks = el("span", { class: "thanks" });
    const up = el("button", { type: "button", "aria-pressed": "false", "data-rating": "up" }, view.labels.FEEDBACK_UP);
    const down = el("button", { type: "button", "aria-pressed": "false", "data-rating": "down" }, view.labels.FEEDBACK_DOWN);
    const group = el("div", { class: "feedback", role: "group", "aria-label": view.labels.FEEDBACK_QUESTION },
      el("span", { class: "question", "aria-hidden": "true" }, view.labels.FEEDBACK_QUESTION), up, down, thanks);
    for (const button of [up, down]) {
      button.addEventListener("click", async () => {
        up.disabled = down.disabled = true;
        button.setAttribute("aria-pressed", "true");
        try {
          const response = await fetch(API.feedback, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ conversation_id: conversationId, user_id: userId, turn_id: turnId, rating: button.dataset.rating }),
          });
          const body = await response.json();
          if (!response.ok) throw new Error(body.error || response.statusText);
          thanks.textContent = body.message || M.FEEDBACK_THANKS;
        } catch {
          up.disabled = down.disabled = false;
          button.setAttribute("aria-pressed", "false");
          thanks.textContent = M.INTERNAL_ERROR;
        }
        liveStatus.textContent = thanks.textContent;
      });
    }
    view.extras.append(group);
  }

  function showMeta(view, answer) {
    const seconds = ((answer.timings_ms && answer.timings_ms.total) || 0) / 1000;
    view.extras.append(el("p", { class: "meta" }, format(view.labels.ANSWER_META, { seconds: seconds.toFixed(1), llm_calls: answer.llm_calls || 0 })));
  }

  function showError(view, message) {
    view.answer.append(el("p", { class: "error", role: "alert" }, message));
  }

  // --- the stream ---------------------------------------------------------------------------------------

  async function* readEvents(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let kind = "message";
        const data = [];
        for (const line of frame.split("\n")) {
          if (line.startsWith("event:")) kind = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) yield [kind, JSON.parse(data.join("\n"))];
      }
      if (done) return;
    }
  }

  function setBusy(value) {
    busy = value;
    sendButton.disabled = value;
    log.setAttribute("aria-busy", value ? "true" : "false");
  }

  async function unlock() {
    let prompt = L.ACCESS_PROMPT;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const code = window.prompt(prompt);
      if (code === null || !code.trim()) return false;
      const response = await fetch(API.unlock, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ code: code.trim() }),
      });
      if (response.ok) return true;
      if (response.status !== 401) return false;
      prompt = L.ACCESS_WRONG;
    }
    return false;
  }

  function labelsFor(language) {
    return { ...L, ...((L.ANSWER_LABELS || {})[language || "ko"] || {}) };
  }

  async function ask(rawQuestion) {
    const question = rawQuestion.trim();
    if (busy || !question) return;
    setBusy(true);
    intro.hidden = true;
    appendUser(question);
    const view = appendBot();
    let pending = 0;
    const render = () => {
      pending = 0;
      const follow = nearBottom();
      renderAnswer(view.answer, view.text, view.citations);
      if (follow) view.item.scrollIntoView({ block: "end" });
    };
    const scheduleRender = () => {
      if (!pending) pending = requestAnimationFrame(render);
    };
    let finished = false;
    try {
      const send = () => fetch(API.ask, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({ question, conversation_id: conversationId, user_id: userId }),
      });
      let response = await send();
      // A published playground may ask for a shared access code: once, then the session cookie remembers it.
      if (response.status === 401 && (await unlock())) response = await send();
      if (!response.ok || !response.body) throw new Error(`ask failed: ${response.status}`);
      const turnId = response.headers.get("X-Regbot-Turn");
      // The labels around this answer: first in the question's language as the server reads its letters, then,
      // when the answer arrives, in the language the understanding decided (a tapped Korean reference under an
      // English answer is part of an English conversation).
      view.labels = labelsFor(response.headers.get("X-Regbot-Language"));
      view.stageText.textContent = view.labels.THINKING;
      for await (const [kind, event] of readEvents(response.body)) {
        if (kind === "status") {
          showStage(view, event.text);
        } else if (kind === "delta") {
          view.text += event.text;
          scheduleRender();
        } else if (kind === "sources") {
          view.citations = event.citations;
          showSources(view);
          scheduleRender();
        } else if (kind === "followups") {
          showFollowups(view, event.followups);
        } else if (kind === "done") {
          const answer = event.answer;
          finished = true;
          if (answer.language) view.labels = labelsFor(answer.language);
          view.text = answer.text;
          if (answer.citations.length) view.citations = answer.citations;
          cancelAnimationFrame(pending);
          render();
          showSources(view);
          showFollowups(view, answer.followups);
          showFeedback(view, turnId);
          showMeta(view, answer);
        } else if (kind === "error") {
          finished = true;
          cancelAnimationFrame(pending);
          render();
          showError(view, event.text);
        }
      }
      if (!finished) throw new Error("the stream ended without done or error");
    } catch {
      cancelAnimationFrame(pending);
      render();
      showError(view, view.text ? M.STREAM_INTERRUPTED : M.INTERNAL_ERROR);
    } finally {
      view.stage.hidden = true;
      view.article.setAttribute("aria-busy", "false");
      liveStatus.textContent = view.labels.ANSWER_DONE;
      setBusy(false);
      const focused = document.activeElement;
      if (!focused || focused === document.body || focused.disabled) input.focus();
    }
  }

  // --- the article panel --------------------------------------------------------------------------------

  let panelOpener = null;
  let panelRequest = 0;

  function quoteOnly(citation, note) {
    const nodes = [];
    if (citation.quote) nodes.push(el("blockquote", { class: "quote" }, citation.quote));
    nodes.push(el("p", { class: "note" }, note));
    return nodes;
  }

  function renderArticle(citation, article) {
    const heading = `${[article.doc, article.article].filter(Boolean).join(" ")}${article.title ? `(${article.title})` : ""}`;
    const cited = (line) =>
      (citation.paragraph && line.startsWith(citation.paragraph)) ||
      (!citation.paragraph && citation.quote && citation.quote.includes(line.trim()));
    const marks = article.lines.map(cited);
    const highlight = marks.some(Boolean) && !marks.every(Boolean);
    const list = el("ol");
    article.lines.forEach((line, i) => {
      const item = el("li", { class: highlight && marks[i] ? "cited" : null }, line);
      if (highlight && marks[i]) item.append(el("span", { class: "sr-only" }, ` (${L.ARTICLE_CITED})`));
      list.append(item);
    });
    const nodes = [];
    if (article.chapter) nodes.push(el("p", { class: "chapter" }, article.chapter));
    nodes.push(el("h3", {}, heading), list);
    if (article.url) {
      nodes.push(el("p", {}, el("a", { href: article.url, target: "_blank", rel: "noopener noreferrer" }, L.OPEN_SOURCE)));
    }
    return nodes;
  }

  async function openArticle(citation, opener) {
    panelOpener = opener;
    const request = ++panelRequest;
    panel.hidden = false;
    document.body.classList.add("panel-open");
    panelBody.replaceChildren(el("p", { class: "note" }, `${citationLabel(citation)} — ${L.ARTICLE_LOADING}`));
    panelHeading.focus();
    let nodes;
    try {
      if (!config.articles || !citation.doc) throw new Error("no article lookup");
      const query = new URLSearchParams({ doc: citation.doc, article: citation.article || "" });
      const response = await fetch(`${API.article}?${query}`);
      if (!response.ok) throw new Error(`article: ${response.status}`);
      nodes = renderArticle(citation, await response.json());
    } catch {
      nodes = quoteOnly(citation, L.ARTICLE_QUOTE_ONLY);
    }
    if (request === panelRequest) panelBody.replaceChildren(...nodes);
  }

  function closeArticle() {
    if (panel.hidden) return;
    panel.hidden = true;
    document.body.classList.remove("panel-open");
    panelRequest++;
    if (panelOpener && panelOpener.isConnected) panelOpener.focus();
    panelOpener = null;
  }

  // --- history after a reload, a new conversation ---------------------------------------------------------

  async function restore() {
    try {
      const response = await fetch(`${API.history}?${new URLSearchParams({ conversation_id: conversationId })}`);
      if (!response.ok) return;
      const { messages } = await response.json();
      if (!messages.length || log.childElementCount) return;
      intro.hidden = true;
      for (const message of messages) {
        if (message.role === "user") {
          appendUser(message.content);
        } else {
          const view = appendBot();
          view.stage.hidden = true;
          view.article.setAttribute("aria-busy", "false");
          renderAnswer(view.answer, message.content, []);
        }
      }
    } catch {
      // a history we cannot load only means a fresh-looking page; the service still has the thread
    }
  }

  function newConversation() {
    if (busy) return;
    conversationId = storedId("sessionStorage", "regbot.playground.conversation", true);
    closeArticle();
    log.replaceChildren();
    intro.hidden = false;
    input.value = "";
    input.focus();
  }

  // --- wiring ---------------------------------------------------------------------------------------------

  function growInput() {
    input.style.height = "auto";
    input.style.height = `${input.scrollHeight + 2}px`;
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (busy || !input.value.trim()) return;
    const question = input.value;
    input.value = "";
    growInput();
    ask(question);
  });
  input.addEventListener("keydown", (event) => {
    // Enter while a Korean syllable is still being composed belongs to the IME, not to the form.
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  input.addEventListener("input", growInput);
  for (const button of document.querySelectorAll("#examples button")) {
    button.addEventListener("click", () => ask(button.textContent));
  }
  byId("new-conversation").addEventListener("click", newConversation);
  byId("article-close").addEventListener("click", closeArticle);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeArticle();
  });

  restore();
})();
