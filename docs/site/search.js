// The site's search box: finds pages whose title, headings or text hold every word typed, from the index
// that scripts/build_site.py writes into assets/search-index.js (loaded as a script, so it works from file://).
(function () {
  "use strict";
  const box = document.getElementById("search-box");
  const list = document.getElementById("search-results");
  const pages = window.SEARCH_INDEX || [];
  const MOST = 12;

  // A snippet of the text around the first place it holds the word, with the word marked.
  function snippet(text, word) {
    const at = text.toLowerCase().indexOf(word);
    if (at < 0) return null;
    const start = Math.max(0, at - 60);
    const item = document.createElement("span");
    item.className = "snippet";
    item.append((start ? "…" : "") + text.slice(start, at));
    const mark = document.createElement("mark");
    mark.textContent = text.slice(at, at + word.length);
    item.append(mark, text.slice(at + word.length, at + word.length + 80) + "…");
    return item;
  }

  // Every page that holds all the words, best first: in the title, then in a heading, then in the text.
  function find(query) {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return [];
    const found = [];
    for (const page of pages) {
      const all = (page.title + " " + page.headings.map(h => h[1]).join(" ") + " " + page.text).toLowerCase();
      if (!words.every(word => all.includes(word))) continue;
      const heading = page.headings.find(h => words.every(word => h[1].toLowerCase().includes(word)));
      const inTitle = words.every(word => page.title.toLowerCase().includes(word));
      found.push({page, heading, score: inTitle ? 0 : heading ? 1 : 2});
    }
    return found.sort((a, b) => a.score - b.score).slice(0, MOST);
  }

  function show() {
    const query = box.value.trim();
    list.replaceChildren();
    list.hidden = !query;
    if (!query) return;
    const found = find(query);
    if (!found.length) {
      const none = document.createElement("li");
      none.textContent = "No page holds every word of “" + query + "”.";
      list.append(none);
      return;
    }
    const first = query.toLowerCase().split(/\s+/)[0];
    for (const {page, heading} of found) {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = page.page + (heading ? "#" + heading[0] : "");
      link.textContent = page.title + (heading ? " › " + heading[1] : "");
      item.append(link);
      const text = snippet(page.text, first);
      if (text) item.append(text);
      list.append(item);
    }
  }

  if (box && list) {
    box.addEventListener("input", show);
    box.addEventListener("keydown", event => {
      if (event.key === "Escape") { box.value = ""; show(); }
    });
  }
})();
