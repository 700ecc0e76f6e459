/* The monitor's event loop: one epoll set on the main thread for work that
 * waits on file descriptors (console input, signals, the VM stopping), so
 * nothing that blocks runs on a vCPU thread. */
#ifndef AIRLOCK_KVM_EVLOOP_H
#define AIRLOCK_KVM_EVLOOP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Room for the console, signals, virtio notifications and every vsock
 * connection the device allows. */
#define EVLOOP_MAX_HANDLERS 320

typedef void (*evloop_fn)(void *opaque, int fd, uint32_t events);

struct evloop_handler {
    int fd;
    evloop_fn fn;
    void *opaque;
};

/* Handlers may be added and removed from any thread (a virtio device
 * reset on a vCPU thread drops its sockets); `lock` guards the table. */
struct evloop {
    int epfd;
    bool quit;
    pthread_mutex_t lock;
    struct evloop_handler handlers[EVLOOP_MAX_HANDLERS];
};

int evloop_init(struct evloop *loop);
void evloop_destroy(struct evloop *loop);

/* Watches fd for `events` (EPOLLIN...); fn gets the fd back.  0 or -errno. */
int evloop_add(struct evloop *loop, int fd, uint32_t events, evloop_fn fn, void *opaque);

/* Changes the events watched on fd (0 pauses it). */
int evloop_modify(struct evloop *loop, int fd, uint32_t events);

/* Stops watching fd. */
void evloop_remove(struct evloop *loop, int fd);

/* Dispatches events until a handler sets loop->quit.  0 or -errno. */
int evloop_run(struct evloop *loop);

#endif
