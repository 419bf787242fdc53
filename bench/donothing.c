/* SPDX-License-Identifier: MIT */
/*
 * donothing.c - the benchmark's ceiling: an epoll server that answers every
 * request head it sees with one prebuilt response from memory. No parsing
 * beyond finding "\r\n\r\n", no file system, no Date. Whatever it costs per
 * request is what this machine, kernel and client cost; a real server is
 * measured against it. Usage: donothing PORT BODY_BYTES
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static char response[70000];
static size_t response_len;

static void build_response(size_t body)
{
    int n = snprintf(response, sizeof response,
                     "HTTP/1.1 200 OK\r\nServer: donothing\r\nContent-Type: "
                     "application/octet-stream\r\nContent-Length: %zu\r\n\r\n",
                     body);
    memset(response + n, 'x', body);
    response_len = (size_t)n + body;
}

static int count_heads(const char *p, size_t n, int *carry)
{
    /* carry: how many of "\r\n\r\n" matched at the end of the last read */
    static const char end[] = "\r\n\r\n";
    int heads = 0;
    for (size_t i = 0; i < n; i++) {
        *carry = p[i] == end[*carry] ? *carry + 1 : (p[i] == '\r');
        if (*carry == 4) {
            heads++;
            *carry = 0;
        }
    }
    return heads;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    build_response((size_t)atoi(argv[2]));
    int one = 1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 4096) < 0)
        return 1;
    int ep = epoll_create1(0);
    static int carry[65536];
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd}, evs[256];
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == lfd) {
                int c;
                while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0 && c < 65536) {
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    carry[c] = 0;
                    struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
                }
                continue;
            }
            char buf[16384];
            ssize_t r = read(fd, buf, sizeof buf);
            if (r <= 0) {
                close(fd);
                continue;
            }
            for (int h = count_heads(buf, (size_t)r, &carry[fd]); h > 0; h--)
                if (write(fd, response, response_len) < 0)
                    break;
            if (memmem(buf, (size_t)r, "Connection: close", 17))
                close(fd); /* the Connection: close cell */
        }
    }
}
