/* SPDX-License-Identifier: MIT */
/*
 * listing.c - HTML and JSON directory listings, streamed entry by entry.
 *
 * The HTML works without JavaScript: rows arrive directories first (the
 * caller makes two passes), links are plain relative hrefs that wget -r and
 * media players can follow. A small inline script makes the column headers
 * sort on click. Colours follow prefers-color-scheme; the table fits a phone.
 * Names appear only HTML-escaped (text) and percent-encoded (href), never in
 * the script, so a file called </script> stays text (research S6).
 */
#include "listing.h"

#include "bytes.h"
#include "date.h"
#include "escape.h"

static const char html_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<meta name=\"color-scheme\" content=\"light dark\">\n<title>Index of /";

static const char html_style[] =
    "</title>\n<style>\n"
    ":root{--fg:#1f2328;--bg:#fff;--mut:#59636e;--line:#d1d9e0;--link:#0969da;--hover:#f6f8fa}\n"
    "@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--mut:#9198a1;"
    "--line:#3d444d;--link:#4493f8;--hover:#151b23}}\n"
    "body{margin:0 auto;max-width:60rem;padding:1rem;font:16px/1.5 system-ui,sans-serif;"
    "color:var(--fg);background:var(--bg)}\n"
    "h1{font-size:1.25rem;font-weight:600;margin:.5rem 0 1rem;overflow-wrap:anywhere}\n"
    "nav{color:var(--mut);overflow-wrap:anywhere}\na{color:var(--link);text-decoration:none}\n"
    "a:hover,a:focus{text-decoration:underline}\n"
    "table{width:100%;border-collapse:collapse}\n"
    "th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line)}\n"
    "td:first-child{overflow-wrap:anywhere}\n"
    "th button{font:inherit;font-weight:600;color:inherit;background:none;border:0;padding:0;"
    "cursor:pointer}\nth[aria-sort=ascending] button::after{content:\" \\25B2\"}\n"
    "th[aria-sort=descending] button::after{content:\" \\25BC\"}\n"
    ".num,.time{white-space:nowrap;color:var(--mut)}.num{text-align:right}\n"
    "tbody tr:hover{background:var(--hover)}\n"
    "footer{margin-top:1rem;color:var(--mut);font-size:.875rem}\n"
    "@media (max-width:40rem){.time{display:none}}\n"
    "</style></head>\n<body>\n<nav aria-label=\"breadcrumb\"><a href=\"/\">/</a>";

static const char html_table[] =
    "</h1>\n<table id=\"listing\">\n<thead><tr>"
    "<th aria-sort=\"none\" data-key=\"name\"><button type=\"button\">Name</button></th>"
    "<th aria-sort=\"none\" class=\"num\" data-key=\"size\"><button "
    "type=\"button\">Size</button></th>"
    "<th aria-sort=\"none\" class=\"time\" data-key=\"mtime\"><button type=\"button\">Modified"
    "</button></th></tr></thead>\n<tbody>\n";

static const char html_parent[] =
    "<tr class=\"parent\"><td><a href=\"../\">../</a></td><td class=\"num\"></td>"
    "<td class=\"time\"></td></tr>\n";

/* Sorts rows in place by a column; directories stay first, the parent row
 * stays on top. Sizes and times come from data attributes. Rows arrive in
 * directory order (the server keeps no list), so the script sorts by name
 * once at load; without JavaScript the page still works, unsorted. */
static const char html_script[] =
    "<script>\n"
    "(function(){var t=document.getElementById('listing'),b=t.tBodies[0];\n"
    "function sort(th,asc){var k=th.dataset.key;\n"
    "t.querySelectorAll('th').forEach(function(h){h.setAttribute('aria-sort','none')});\n"
    "th.setAttribute('aria-sort',asc?'ascending':'descending');\n"
    "var rows=[].slice.call(b.rows).filter(function(r){return !r.classList.contains('parent')});\n"
    "function val(r){var c=r.cells[k==='name'?0:k==='size'?1:2];\n"
    "return k==='name'?c.textContent.toLowerCase():Number(c.dataset.v||-1)}\n"
    "rows.sort(function(x,y){var d=y.dataset.dir-x.dataset.dir;if(d)return d;var "
    "a=val(x),c=val(y);\n"
    "var r=a<c?-1:a>c?1:0;return asc?r:-r});\n"
    "rows.forEach(function(r){b.appendChild(r)})}\n"
    "t.tHead.addEventListener('click',function(ev){var th=ev.target.closest('th');\n"
    "if(th)sort(th,th.getAttribute('aria-sort')!=='ascending')});\n"
    "sort(t.querySelector('th[data-key=name]'),true)})();\n"
    "</script>\n";

static void html_breadcrumb(struct buf *b, struct span path)
{
    size_t start = 0;
    for (size_t i = 0; i <= path.n; i++) {
        if (i < path.n && path.p[i] != '/')
            continue;
        if (i > start) {
            buf_put_cstr(b, " <a href=\"/");
            escape_uri_path(b, span_make(path.p, i), false);
            buf_put_cstr(b, "/\">");
            escape_html(b, span_make(path.p + start, i - start));
            buf_put_cstr(b, "</a> /");
        }
        start = i + 1;
    }
}

static void html_path_text(struct buf *b, struct span path)
{
    escape_html(b, path);
    if (path.n)
        buf_put_char(b, '/');
}

void listing_begin(struct buf *b, enum listing_format f, struct span path)
{
    if (f == LISTING_JSON) {
        buf_put_char(b, '[');
        return;
    }
    buf_put(b, html_head, sizeof html_head - 1);
    html_path_text(b, path);
    buf_put(b, html_style, sizeof html_style - 1);
    html_breadcrumb(b, path);
    buf_put_cstr(b, "</nav>\n<h1>Index of /");
    html_path_text(b, path);
    buf_put(b, html_table, sizeof html_table - 1);
    if (path.n)
        buf_put(b, html_parent, sizeof html_parent - 1);
}

void listing_human_size(struct buf *b, uint64_t n)
{
    static const char units[][4] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned u = 0;
    uint64_t whole = n, tenths = 0;
    while (whole >= 1024 && u + 1 < ARRAY_LEN(units)) {
        tenths = (whole % 1024) * 10 / 1024;
        whole /= 1024;
        u++;
    }
    buf_put_u64(b, whole);
    if (u > 0 && whole < 100) {
        buf_put_char(b, '.');
        buf_put_u64(b, tenths);
    }
    buf_put_char(b, ' ');
    buf_put_cstr(b, units[u]);
}

static void html_time(struct buf *b, int64_t mtime)
{
    char iso[DATE_ISO_LEN];
    size_t n = date_format_iso(mtime, iso);
    if (n == 0) {
        buf_put_cstr(b, "<td class=\"time\"></td>");
        return;
    }
    buf_put_cstr(b, "<td class=\"time\" data-v=\"");
    buf_put_u64(b, (uint64_t)mtime);
    buf_put_cstr(b, "\"><time datetime=\"");
    buf_put(b, iso, n);
    buf_put_cstr(b, "\">");
    buf_put(b, iso, 10);
    buf_put_char(b, ' ');
    buf_put(b, iso + 11, 5);
    buf_put_cstr(b, "</time></td>");
}

static void html_entry(struct buf *b, const struct listing_entry *e)
{
    buf_put_cstr(b, e->is_dir ? "<tr data-dir=\"1\"><td><a href=\"./"
                              : "<tr data-dir=\"0\"><td><a href=\"./");
    /* "./" keeps a name with ':' from reading as a scheme ("a:b" -> ./a%3Ab). */
    escape_uri_path(b, e->name, true);
    if (e->is_dir)
        buf_put_char(b, '/');
    buf_put_cstr(b, "\">");
    escape_html(b, e->name);
    if (e->is_dir)
        buf_put_char(b, '/');
    buf_put_cstr(b, "</a></td>");
    if (e->has_meta && !e->is_dir) {
        buf_put_cstr(b, "<td class=\"num\" data-v=\"");
        buf_put_u64(b, e->size);
        buf_put_cstr(b, "\">");
        listing_human_size(b, e->size);
        buf_put_cstr(b, "</td>");
    } else {
        buf_put_cstr(b, "<td class=\"num\">-</td>");
    }
    if (e->has_meta)
        html_time(b, e->mtime);
    else
        buf_put_cstr(b, "<td class=\"time\"></td>");
    buf_put_cstr(b, "</tr>\n");
}

static void json_entry(struct buf *b, const struct listing_entry *e, bool first)
{
    buf_put_cstr(b, first ? "\n{\"name\":\"" : ",\n{\"name\":\"");
    escape_json(b, e->name);
    buf_put_cstr(b, e->is_dir ? "\",\"type\":\"directory\"" : "\",\"type\":\"file\"");
    if (!e->has_meta) {
        buf_put_cstr(b, ",\"size\":null,\"mtime\":null}");
        return;
    }
    buf_put_cstr(b, ",\"size\":");
    buf_put_u64(b, e->is_dir ? 0 : e->size);
    char iso[DATE_ISO_LEN];
    size_t n = date_format_iso(e->mtime, iso);
    if (n) {
        buf_put_cstr(b, ",\"mtime\":\"");
        buf_put(b, iso, n);
        buf_put_cstr(b, "\"}");
    } else {
        buf_put_cstr(b, ",\"mtime\":null}");
    }
}

void listing_entry(struct buf *b, enum listing_format f, const struct listing_entry *e, bool first)
{
    if (f == LISTING_JSON)
        json_entry(b, e, first);
    else
        html_entry(b, e);
}

void listing_end(struct buf *b, enum listing_format f, struct span server)
{
    if (f == LISTING_JSON) {
        buf_put_cstr(b, "\n]\n");
        return;
    }
    buf_put_cstr(b, "</tbody>\n</table>\n<footer>");
    escape_html(b, server);
    buf_put_cstr(b, "</footer>\n");
    buf_put(b, html_script, sizeof html_script - 1);
    buf_put_cstr(b, "</body></html>\n");
}
