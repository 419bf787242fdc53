/* SPDX-License-Identifier: MIT */
/*
 * usage.c - the --help text (config_usage(), declared in config.h), kept
 * apart from the parser in config.c: it changes with every flag's wording,
 * the parser with its rules. Both builds link it; scripts/tiny-size reports
 * its size from the .rodata.usage section.
 */
#include "cli/config.h"

/* What pith serves over, and automatic HTTPS (issue 35): the full build's
 * words; pith-tiny says what it lacks, refuses those options, and keeps the
 * bytes of their text. */
#ifdef PITH_TINY
#define INTRO                                                                                      \
    "Serve the files under ROOT (default: the current directory) over HTTP/1.1. This is\n"         \
    "pith-tiny: HTTPS, HTTP/2 and ACME are the full build's (it refuses their options).\n"
#define ACME_USAGE   ""
#define ACME_EXAMPLE ""
#else
#define INTRO                                                                                      \
    "Serve the files under ROOT (default: the current directory) over HTTP/1.1 and HTTP/2\n"       \
    "(h2c), and over HTTPS (HTTP/1.1, HTTP/2 by ALPN) with --tls-cert and --tls-key, or\n"         \
    "with certificates pith obtains (--acme).\n"
#define ACME_USAGE                                                                                 \
    "      --acme EMAIL          automatic HTTPS: obtain and renew a certificate with ACME\n"      \
    "                            for every site name without a tls-cert of its own\n"              \
    "                            (validated over tls-alpn-01 on the TLS port, or http-01\n"        \
    "                            on the plain port; EMAIL is the account's contact)\n"             \
    "      --acme-ca URL         the CA's directory (default Let's Encrypt,\n"                     \
    "                            " CONFIG_ACME_CA_DEFAULT ";\n"                                    \
    "                            staging: " CONFIG_ACME_CA_STAGING ")\n"                           \
    "      --acme-ca-root FILE   trust this PEM root for the CA's API (a private CA)\n"            \
    "      --acme-dir DIR        the account key and certificates (default\n"                      \
    "                            " CONFIG_ACME_DIR_DEFAULT "; instances behind one\n"              \
    "                            balancer may share it)\n"
#define ACME_EXAMPLE                                                                               \
    "  pith --acme you@example.com --port 80 --tls-port 443 --redirect-http \\\n"                  \
    "       --site example.com,www.example.com=/srv/www\n"
#endif

static const char usage[] =
    "Usage: pith [OPTIONS] [ROOT]\n"
    "       pith compress [OPTIONS] ROOT   write .br/.zst/.gz variants of the files under\n"
    "                                      ROOT (full build; pith compress --help)\n" INTRO "\n"
    "Options (ranges in brackets):\n"
    "  -p, --port N              TCP port [0..65535] (default 8080; 0 = any free port,\n"
    "                            printed at start)\n"
    "  -a, --addr ADDR           numeric IPv4 or IPv6 address to bind, or unix:PATH\n"
    "                            (default: all addresses, IPv6 and IPv4)\n"
    "  -w, --workers N           worker processes [1..64] (default: number of CPUs)\n"
    "      --max-conns N         connections per worker [1..1000000] (default 1024)\n"
    "      --max-conns-per-client N  connections one client may hold across all workers\n"
    "                            (IPv6 by /64; the PROXY or real-IP header's client behind a\n"
    "                            --trusted-proxy); past it 503 + Retry-After (default 0: off)\n"
    "      --root DIR            the directory to serve (instead of ROOT)\n"
    "      --site NAMES=ROOT     a site: requests whose host is one of NAMES (a comma list;\n"
    "                            '*.example.com' for one label) are served from ROOT, with\n"
    "                            the other options (repeatable; the first site answers any\n"
    "                            other host, or ROOT when given)\n"
    "      --index NAME          file served for a directory (default index.html)\n"
    "      --no-listing          answer 403 for a directory without an index file\n"
    "      --follow-symlinks     follow symlinks that stay beneath ROOT (default: 403)\n"
    "      --max-age S           Cache-Control max-age in seconds (default 60; 0 = no-cache)\n"
    "      --immutable GLOB      files whose name matches get a year's max-age and\n"
    "                            'immutable' (repeatable; e.g. '*.[0-9a-f]{8}.*')\n"
    "      --cache-size MIB      memory per worker for small files [0..4096] (default 16)\n"
    "      --cache-max-file B    files up to B bytes are kept in memory [0..1048576]\n"
    "                            (default 65536); larger ones go by sendfile\n"
    "      --cache-entries N     open-file cache entries per worker [0..1000000]\n"
    "                            (default 1024; 0 = no cache)\n"
    "      --timeout-header S    time to receive a whole request head [1..3600] (default 15)\n"
    "      --timeout-keepalive S idle time between requests [1..3600] (default 5)\n"
    "      --timeout-send S      time without send progress [1..3600] (default 30)\n"
    "      --grace S             on SIGTERM/SIGINT, time to finish responses [0..3600]\n"
    "                            (default 10)\n"
    "      --io auto|epoll|uring event loop (default auto: io_uring where the kernel\n"
    "                            allows it, else epoll; the start line says which)\n"
    "      --precompressed DIR|off\n"
    "                            send F.br, F.zst or F.gz to clients that accept it:\n"
    "                            found beside F (default), under the mirror tree DIR,\n"
    "                            or never (off)\n"
    "      --log FILE|-          access log in combined format, UTC ('-' = stdout;\n"
    "                            default: off)\n"
    "      --log-format F        access-log lines: combined (default; GoAccess reads it)\n"
    "                            or json (one object per line, with the duration in us)\n"
    "      --proxy-protocol      every connection starts with a PROXY protocol v1 or v2\n"
    "                            header from a --trusted-proxy (else closed, or 400)\n"
    "      --trusted-proxy CIDR  a load balancer's address or network, IPv4 or IPv6\n"
    "                            (repeatable, up to 32; e.g. 10.0.0.0/8, ::1)\n"
    "      --real-ip-header NAME from a trusted proxy, the client is the right-most\n"
    "                            untrusted address of this list header (X-Forwarded-For)\n"
    "      --status ADDR:PORT    a separate listener for GET /metrics (Prometheus) and\n"
    "                            /healthz (200, or 503 while draining); off by default\n"
    "      --pidfile FILE        write the master's process id to FILE\n"
    "      --daemon              detach from the terminal (use with --pidfile)\n"
    "      --user NAME           workers drop to NAME's uid and groups (needs root)\n"
    "      --unix-mode OCTAL     permissions of the --addr unix:PATH socket (default 0666)\n"
    "      --unix-owner USER[:GROUP]  owner of the unix:PATH socket (needs root)\n"
    "      --check               validate the options, the root and the files, print\n"
    "                            what pith would do, exit 0 (valid) or 2\n"
    "      --config FILE         read options from FILE: one per line without the dashes\n"
    "                            ('port 8080'), site NAMES { ... } blocks, include GLOB;\n"
    "                            options on the command line win (see pith(1))\n"
    "      --fallback /PATH      single-page apps: GET/HEAD of a missing path without\n"
    "                            an extension gets this file, with Cache-Control: no-cache\n"
    "                            (e.g. --fallback /index.html)\n"
    "      --clean-urls          /about serves about.html; /about.html redirects to /about\n"
    "      --header 'NAME: VALUE' add a field to 2xx/3xx responses; 'GLOB=NAME: VALUE' only\n"
    "                            for files whose name matches (repeatable; e.g.\n"
    "                            --header '*.js=X-Content-Type-Options: nosniff')\n"
    "      --cors                Access-Control-Allow-Origin: * on GET/HEAD, and answers\n"
    "                            CORS preflight OPTIONS requests\n"
    "      --no-server-header    send no Server field\n"
    "      --error-page CODE=/PATH  serve PATH as the body of CODE (403, 404, 405, 500,\n"
    "                            503; repeatable; e.g. --error-page 404=/404.html)\n"
    "      --auth 'PREFIX FILE [REALM]'  basic auth: paths under PREFIX need a user and\n"
    "                            password of FILE (user:hash lines; yescrypt, bcrypt or\n"
    "                            SHA-512 crypt: mkpasswd -m yescrypt); full build only\n"
    "      --no-sandbox          workers skip Landlock and seccomp (default: on where the\n"
    "                            kernel has them; the start line says which)\n"
    "      --group NAME          with --user: the workers' group\n"
    "      --chroot DIR          with --user: workers chroot into DIR (for kernels\n"
    "                            without Landlock; e.g. --chroot /srv/www --user www-data)\n"
    "      --tls-cert FILE       HTTPS: the certificate chain (PEM, leaf first); with\n"
    "      --tls-key FILE        its private key (RSA or ECDSA). Repeat the pair for more\n"
    "                            names: the client's SNI picks, the first is the default\n"
    "      --tls-port N          HTTPS port [0..65535] (default 8443)\n"
    "      --tls-only            no plain HTTP listener\n"
    "      --redirect-http       plain HTTP answers 308 to the same path over HTTPS\n"
    "      --hsts S              Strict-Transport-Security max-age on HTTPS responses\n"
    "                            [1..63072000] (default: none)\n"
    "      --timeout-handshake S time for a whole TLS handshake [1..3600] (default 10)\n"
    "      --http2 on|off        HTTP/2: ALPN h2 on the TLS port, h2c by prior knowledge\n"
    "                            on the plain port (default on)\n"
    "      --h2-max-streams N    concurrent HTTP/2 streams per connection [1..1000]\n"
    "                            (default 100)\n"
    "      --http3 on|off        HTTP/3 (QUIC) on UDP at the HTTPS port, advertised by\n"
    "                            Alt-Svc (default on where HTTPS is on and pith was built\n"
    "                            with ngtcp2 and nghttp3; see --version)\n"
    "      --h3-retry on|off     validate every new QUIC client's address with a Retry\n"
    "                            (default off: only under a handshake flood)\n"
    "      --h3-alt-svc-max-age S  Alt-Svc's ma on HTTP/1.1 and HTTP/2 responses\n"
    "                            [0..31536000] (default 86400)\n" ACME_USAGE
    "  -q, --quiet               no start line, no worker exit summaries (errors still go\n"
    "                            to stderr)\n"
    "  -h, --help                show this help and exit\n"
    "  -V, --version             show the version and exit\n"
    "  --                        end of options (for a ROOT that starts with '-')\n"
    "\n"
    "Examples:\n"
    "  pith                                  serve . on port 8080, all addresses\n"
    "  pith -p 9000 ./public                 serve ./public on port 9000\n"
    "  pith --addr 127.0.0.1 --port 0 site   loopback only, any free port\n"
    "  pith --log access.log --max-age 3600 --no-listing /srv/www\n"
    "  pith --daemon --pidfile /run/pith.pid --user www-data --port 80 /srv/www\n"
    "  pith --addr unix:/run/pith/pith.sock --unix-mode 0660 --unix-owner www-data /srv/www\n"
    "  pith --check --port 80 --user www-data /srv/www\n"
    "  pith --fallback /index.html --clean-urls --error-page 404=/404.html --cors ./dist\n"
    "  pith --tls-cert fullchain.pem --tls-key privkey.pem --redirect-http /srv/www\n"
    "  pith --site example.com,www.example.com=/srv/www --site "
    "'*.example.org=/srv/org'\n" ACME_EXAMPLE "\n"
    "Signals: TERM/INT finish responses in flight and exit (a second one exits at once);\n"
    "HUP and USR1 reopen the log file; HUP also reloads the TLS certificates and keys,\n"
    "and with --config reads the file again (the workers are replaced; a bad file\n"
    "keeps the old configuration and the error log says why).\n"
    "USR2 upgrades: the binary at the same path starts on the same listeners and this\n"
    "one drains and exits.\n"
    "systemd: socket activation (LISTEN_FDS; a socket named \"https\" is for TLS) and\n"
    "Type=notify readiness (NOTIFY_SOCKET); see dist/systemd/ and pith(1).\n"
    "Exit status: 0 success, 1 runtime failure, 2 bad usage.\n"
    "Security: only files beneath ROOT are served; dotfiles (except /.well-known/) and\n"
    "symlinks are refused with 403; requests are parsed strictly (RFC 9112); workers\n"
    "run under Landlock and seccomp where the kernel has them (the start line says).\n";

const char *config_usage(void)
{
    return usage;
}
