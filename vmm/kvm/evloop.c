#include "vmm/kvm/evloop.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

int evloop_init(struct evloop *loop)
{
    memset(loop, 0, sizeof(*loop));
    for (unsigned i = 0; i < EVLOOP_MAX_HANDLERS; i++)
        loop->handlers[i].fd = -1;
    pthread_mutex_init(&loop->lock, NULL);
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
    int err = 0;
    pthread_mutex_lock(&loop->lock);
    struct evloop_handler *h = evloop_find(loop, -1);
    struct epoll_event ev = {.events = events, .data.ptr = h};
    if (!h)
        err = -ENOSPC;
    else if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        err = -errno;
    else
        *h = (struct evloop_handler){fd, fn, opaque};
    pthread_mutex_unlock(&loop->lock);
    return err;
}

int evloop_modify(struct evloop *loop, int fd, uint32_t events)
{
    int err = 0;
    pthread_mutex_lock(&loop->lock);
    struct evloop_handler *h = evloop_find(loop, fd);
    struct epoll_event ev = {.events = events, .data.ptr = h};
    if (!h)
        err = -ENOENT;
    else if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
        err = -errno;
    pthread_mutex_unlock(&loop->lock);
    return err;
}

void evloop_remove(struct evloop *loop, int fd)
{
    pthread_mutex_lock(&loop->lock);
    struct evloop_handler *h = evloop_find(loop, fd);
    if (h) {
        epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
        h->fd = -1;
    }
    pthread_mutex_unlock(&loop->lock);
}

int evloop_run(struct evloop *loop)
{
    struct epoll_event events[64];
    while (!loop->quit) {
        int n = epoll_wait(loop->epfd, events, 64, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        for (int i = 0; i < n && !loop->quit; i++) {
            /* Copy the handler out: it may be removed (and its slot reused)
             * by another thread once the lock is dropped.  A stale event
             * then reaches a handler that finds its fd gone or not ready. */
            pthread_mutex_lock(&loop->lock);
            struct evloop_handler h = *(struct evloop_handler *)events[i].data.ptr;
            pthread_mutex_unlock(&loop->lock);
            if (h.fd >= 0)
                h.fn(h.opaque, h.fd, events[i].events);
        }
    }
    return 0;
}
