// pith demo: fetch /style.css and show its response headers, so a visitor can
// see what pith sends (ETag, Last-Modified, Cache-Control, Content-Type).
"use strict";

(async () => {
    const out = document.getElementById("headers");
    try {
        const r = await fetch("/style.css", { cache: "no-store" });
        const lines = [`HTTP ${r.status} ${r.statusText}`];
        for (const [name, value] of r.headers) lines.push(`${name}: ${value}`);
        out.textContent = lines.join("\n");
    } catch (e) {
        out.textContent = `fetch failed: ${e}`;
    }
})();
