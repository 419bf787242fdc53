# SPDX-License-Identifier: MIT
# tiny_arm64_guest.sh - the guest side of tests/test_tiny_arm64_kernel.py:
# run by scripts/qemu-arm64-run (busybox sh, as root, in an arm64 guest on
# Linux 6.1) with /bin/pith-tiny, /bin/pith-tiny-testhook and
# /bin/pith-router built for aarch64 and the document root at /www. It
# judges nothing: it records what it saw under /out, which comes back to the
# host, and the tests there assert it.
#
#   /out/record        one fact a line: "WORD ARG...", in the order seen
#   /out/resp/NAME     the raw bytes of a response (head and body)
#   /out/resp/NAME.head  the head alone, for bodies the record gives as a
#                      digest ("body NAME SIZE SHA256")
#   /out/LABEL.err     each server's error log (its stderr)
#   /out/LABEL.log*    each server's access logs
#
# The runs, each its own server:
#   main     pith-tiny, sandbox on (the default), 2 workers, --status, --log:
#            every kind of response, the status port, HUP, both workers
#            killed with SIGKILL and replaced, then SIGTERM
#   nosb     pith-tiny-testhook --no-sandbox: the test hooks succeed
#   hook     pith-tiny-testhook, sandbox on: Landlock refuses the open outside
#            the root, seccomp kills the worker that calls getcwd
#   router   pith-router (the router profile, issue 21; no sandbox), 2 workers:
#            the main run's requests again, a worker killed and replaced
# shellcheck shell=dash disable=SC2016
# (SC2016: wait_for's conditions are quoted to be evaluated at each poll.)
set -u
OUT=/out
LOGDIR=/var/log/pith
mkdir -p "$OUT/resp" "$LOGDIR"
printf 'root:x:0:0:root:/:/bin/sh\n' >/etc/passwd # what the hook opens outside the root

note() { echo "$*" >>"$OUT/record"; }
# What did not happen in time is noted and the run goes on: the host's
# tests say what it means (a worker killed by SIGSYS, say).
missing() { note "missing $*"; }
fail() {
    note "fail $*"
    exit 1
}

# wait_for SECONDS COMMAND: polls COMMAND every 0.1 s until it succeeds or
# SECONDS have passed (by the clock: under emulation the polls are slow).
uptime_s() {
    local up rest
    read -r up rest </proc/uptime
    echo "${up%.*}"
}
wait_for() {
    local end=$(($(uptime_s) + $1))
    until eval "$2"; do
        [ "$(uptime_s)" -ge "$end" ] && return 1
        usleep 100000
    done
    return 0
}

children() {
    grep -l "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2>/dev/null | cut -d/ -f3 | sort -n
}
# A worker holds its access log open (the status process has none). One ls,
# not a readlink per descriptor: each process costs under emulation.
# shellcheck disable=SC2010
is_worker() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q " -> $LOGDIR/"; }
workers() {
    local c
    for c in $(children "$1"); do is_worker "$c" && echo "$c"; done
}
field() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status" 2>/dev/null; }
# "proc LABEL ROLE PID Seccomp=N NoNewPrivs=N Seccomp_filters=N"
proc_note() {
    note "proc $1 $2 $3 Seccomp=$(field "$3" Seccomp) NoNewPrivs=$(field "$3" NoNewPrivs)" \
        "Seccomp_filters=$(field "$3" Seccomp_filters)"
}
sandboxed() { [ "$(field "$1" Seccomp)" = 2 ]; }
all_sandboxed() {
    local w
    for w in $1; do sandboxed "$w" || return 1; done
    return 0
}
# ready N [OLD]: the master P has N workers, all sandboxed, OLD not among them.
ready() {
    local now
    now=$(workers "$P")
    [ "$(echo "$now" | wc -w)" = "$1" ] && all_sandboxed "$now" &&
        { [ -z "${2:-}" ] || ! echo "$now" | grep -qx "$2"; }
}

# req NAME PORT: the request on stdin, the raw response into resp/NAME.
req() { nc -w 20 127.0.0.1 "$2" >"$OUT/resp/$1"; }
# head_lines LINE...: a request head, CRLF-terminated.
head_lines() {
    printf '%s\r\n' "$@"
    printf '\r\n'
}
# get NAME PORT TARGET [FIELD...]: GET with Connection: close.
get() {
    local name=$1 port=$2 target=$3
    shift 3
    head_lines "GET $target HTTP/1.1" "Host: pith.test" "Connection: close" "$@" |
        req "$name" "$port"
}
# get_big NAME PORT TARGET: the head into resp/NAME.head, the body's size
# and digest into the record (a few MiB would be slow on the console).
get_big() {
    local hlen
    head_lines "GET $3 HTTP/1.1" "Host: pith.test" "Connection: close" |
        nc -w 20 127.0.0.1 "$2" >/tmp/big
    hlen=$(awk '{n += length($0) + 1} /^\r$/ {print n; exit}' /tmp/big)
    head -c "${hlen:-0}" /tmp/big >"$OUT/resp/$1.head"
    tail -c +$((${hlen:-0} + 1)) /tmp/big >/tmp/big.body
    note "body $1 $(wc -c </tmp/big.body) $(sha256sum </tmp/big.body | cut -d' ' -f1)"
    rm -f /tmp/big /tmp/big.body
}

# start LABEL BIN PORT ARG...: a server, its stderr in LABEL.err; sets P.
start() {
    local label=$1 bin=$2 port=$3
    shift 3
    "$bin" --addr 127.0.0.1 --port "$port" --log "$LOGDIR/$label.log" "$@" /www \
        2>"$OUT/$label.err" &
    P=$!
    note "master $label $P"
    wait_for 30 "grep -q ' serving ' '$OUT/$label.err'" || fail "$label: no start line"
}

# stop LABEL: SIGTERM, the exit status, and no pith process left behind.
stop() {
    local e left
    kill -TERM "$P"
    wait "$P"
    note "exit $1 $?"
    left=0
    for e in /proc/[0-9]*/exe; do
        case $(readlink "$e" 2>/dev/null) in /bin/pith-tiny* | /bin/pith-router) left=$((left + 1)) ;; esac
    done
    note "left $1 $left"
    cp "$LOGDIR/$1".log* "$OUT/"
}

# every_kind PREFIX PORT: the requests both builds answer the same way, their
# responses in resp/PREFIXNAME (the host compares the two runs).
every_kind() {
    local p=$1 port=$2 etag first second
    get "${p}get" "$port" /a.txt
    head_lines "HEAD /a.txt HTTP/1.1" "Host: pith.test" "Connection: close" | req "${p}head" "$port"
    get "${p}range" "$port" /a.txt "Range: bytes=7-11"
    etag=$(sed -n 's/^ETag: \(.*\)\r$/\1/p' "$OUT/resp/${p}get")
    get "${p}inm" "$port" /a.txt "If-None-Match: $etag"
    get "${p}listing" "$port" /dir/
    get "${p}notfound" "$port" /nope.txt
    get "${p}dotdot" "$port" /../secret.txt
    get "${p}encoded_dotdot" "$port" /%2e%2e/secret.txt
    get "${p}symlink" "$port" /link.txt
    first='GET /a.txt HTTP/1.1\r\nHost: pith.test\r\n\r\n'
    second='GET /dir/f.txt HTTP/1.1\r\nHost: pith.test\r\nConnection: close\r\n\r\n'
    printf '%b' "$first$second" | req "${p}pipelined" "$port" # one write: both before any answer
    get_big "${p}big" "$port" /big.bin
    get "${p}big_range" "$port" /big.bin "Range: bytes=3000000-3000099"
}

note "kernel $(uname -r) $(uname -m)"
note "lsm $(cat /sys/kernel/security/lsm)"
note "uptime-start $(cut -d' ' -f1 /proc/uptime)"

# ---- main: the sandboxed server -------------------------------------------------
start main /bin/pith-tiny 8080 --workers 2 --status 127.0.0.1:8081
wait_for 15 'ready 2' ||
    missing "main: 2 sandboxed workers"
W=$(workers "$P")
for w in $W; do proc_note main worker "$w"; done
for c in $(children "$P"); do is_worker "$c" || proc_note main other "$c"; done
proc_note main master "$P"

every_kind "" 8080
get metrics 8081 /metrics
get healthz 8081 /healthz

# HUP: the master makes a new log, each worker reopens it (openat beneath
# the log's directory, after Landlock and seccomp).
mv "$LOGDIR/main.log" "$LOGDIR/main.log.1"
kill -HUP "$P"
wait_for 10 "[ -e '$LOGDIR/main.log' ]" || missing "main: no new log after HUP"
tries=0
until grep -q '"GET /a.txt?after-hup' "$LOGDIR/main.log" 2>/dev/null; do
    if [ "$tries" -ge 50 ]; then
        missing "main: the new log stays empty"
        break
    fi
    tries=$((tries + 1))
    get after_hup 8080 "/a.txt?after-hup=$tries"
    usleep 100000
done
note "hup-tries $tries"
# A worker writes its buffered lines at least once a second; SIGKILL would
# lose them. Wait until the logs hold all 13 lines of the requests before
# the HUP and the tries.
wait_for 10 "[ \$(cat $LOGDIR/main.log* | wc -l) -ge $((13 + tries)) ]" ||
    missing "main: lines in the logs"

# Both workers killed, one after the other: each replacement must come up
# sandboxed, and from then on only replacements serve.
for w in $W; do
    kill -KILL "$w"
    wait_for 15 'ready 2 "$w"' ||
        missing "main: a sandboxed replacement for $w"
    note "killed main $w"
done
for w in $(workers "$P"); do proc_note main replacement "$w"; done
for i in 1 2 3 4; do get "replaced$i" 8080 /a.txt; done
get metrics_after 8081 /metrics
stop main

# ---- nosb: the test hooks without the sandbox succeed -------------------------------
start nosb /bin/pith-tiny-testhook 8090 --workers 1 --no-sandbox
wait_for 15 '[ "$(workers $P | wc -l)" = 1 ]' || missing "nosb: a worker"
get nosb_get 8090 /a.txt
usleep 500000 # its setup is long over: a sandbox would be in place by now
for w in $(workers "$P"); do proc_note nosb worker "$w"; done
get nosb_outside 8090 /.pith-test/open-outside
get nosb_forbidden 8090 /.pith-test/forbidden-syscall
for w in $(workers "$P"); do proc_note nosb after "$w"; done
stop nosb

# ---- hook: Landlock refuses, seccomp kills ------------------------------------------
start hook /bin/pith-tiny-testhook 8100 --workers 1
wait_for 15 'ready 1' ||
    missing "hook: a sandboxed worker"
H=$(workers "$P")
proc_note hook worker "$H"
get hook_outside 8100 /.pith-test/open-outside
get hook_forbidden 8100 /.pith-test/forbidden-syscall
wait_for 15 'ready 1 "$H"' ||
    missing "hook: a sandboxed replacement for $H"
for w in $(workers "$P"); do proc_note hook replacement "$w"; done
get hook_after 8100 /a.txt
stop hook

# ---- router: the router profile (it has no sandbox), the same requests -------------
start router /bin/pith-router 8110 --workers 2
wait_for 15 '[ "$(children $P | wc -l)" = 2 ]' || missing "router: 2 workers"
R=$(children "$P")
for w in $R; do proc_note router worker "$w"; done
every_kind router_ 8110
first_worker=$(echo "$R" | head -1)
kill -KILL "$first_worker"
wait_for 15 '[ "$(children $P | wc -l)" = 2 ] && ! children $P | grep -qx "$first_worker"' ||
    missing "router: a replacement for $first_worker"
note "killed router $first_worker"
for i in 1 2 3 4; do get "router_replaced$i" 8110 /a.txt; done
stop router

note "uptime-end $(cut -d' ' -f1 /proc/uptime)"
note "done"
