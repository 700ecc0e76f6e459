#include "vmm/evloop.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

int evloop_init(struct evloop *loop)
{
    memset(loop, 0, sizeof(*loop));
    for (unsigned i = 0; i < EVLOOP_MAX_HANDLERS; i++)
        loop->handlers[i].fd = -1;
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    return loop->epfd < 0 ? -errno : 0;
}

void evloop_destroy(struct evloop *loop)
{
    if (loop->epfd >= 0)
        close(loop->epfd);
    loop->epfd = -1;
}

static struct evloop_handler *evloop_find(struct evloop *loop, int fd)
{
    for (unsigned i = 0; i < EVLOOP_MAX_HANDLERS; i++)
        if (loop->handlers[i].fd == fd)
            return &loop->handlers[i];
    return NULL;
}

int evloop_add(struct evloop *loop, int fd, uint32_t events, evloop_fn fn, void *opaque)
{
    struct evloop_handler *h = evloop_find(loop, -1);
    if (!h)
        return -ENOSPC;
    struct epoll_event ev = {.events = events, .data.ptr = h};
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        return -errno;
    *h = (struct evloop_handler){fd, fn, opaque};
    return 0;
}

int evloop_modify(struct evloop *loop, int fd, uint32_t events)
{
    struct evloop_handler *h = evloop_find(loop, fd);
    if (!h)
        return -ENOENT;
    struct epoll_event ev = {.events = events, .data.ptr = h};
    return epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

void evloop_remove(struct evloop *loop, int fd)
{
    struct evloop_handler *h = evloop_find(loop, fd);
    if (!h)
        return;
    epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
    h->fd = -1;
}

int evloop_run(struct evloop *loop)
{
    struct epoll_event events[EVLOOP_MAX_HANDLERS];
    while (!loop->quit) {
        int n = epoll_wait(loop->epfd, events, EVLOOP_MAX_HANDLERS, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        for (int i = 0; i < n && !loop->quit; i++) {
            struct evloop_handler *h = events[i].data.ptr;
            if (h->fd >= 0)
                h->fn(h->opaque, events[i].events);
        }
    }
    return 0;
}
