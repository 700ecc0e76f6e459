#include "vmm/sandbox/sandbox_ports.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "guest/agent/proto.h"
#include "vmm/sandbox/vm_proc.h"

static int (*wake_hook)(void *ctx, struct sandbox *sb);
static void *wake_ctx;

void sandbox_ports_on_dial(int (*wake)(void *ctx, struct sandbox *sb), void *ctx)
{
    wake_hook = wake;
    wake_ctx = ctx;
}

/* The forwarder lives no longer than the sandbox (closed in its
 * teardown, which waits for every connection), so sb stays valid. */
static int dial(void *opaque)
{
    struct sandbox *sb = opaque;
    int rc = wake_hook ? wake_hook(wake_ctx, sb) : 0; /* a paused one resumes first */
    return rc < 0 ? rc : vm_proc_dial_port(sb->sock, AGENT_FORWARD_VSOCK_PORT);
}

int sandbox_ports_add(struct sandbox *sb, const struct forward_spec *s, struct forward_info *info,
                      char *err, size_t errlen)
{
    pthread_mutex_lock(&sb->ports_lock);
    int rc = 0;
    if (!sb->ports) {
        struct forward_dial d = {.dial = dial, .opaque = sb, .audit = &sb->audit};
        if ((rc = forwarder_new(&d, &sb->ports)))
            snprintf(err, errlen, "cannot start forwarding: %s", strerror(-rc));
    }
    if (!rc)
        rc = forwarder_add(sb->ports, s, info, err, errlen);
    pthread_mutex_unlock(&sb->ports_lock);
    return rc;
}

int sandbox_ports_remove(struct sandbox *sb, uint16_t guest_port)
{
    pthread_mutex_lock(&sb->ports_lock);
    int rc = sb->ports ? forwarder_remove(sb->ports, guest_port) : -ENOENT;
    pthread_mutex_unlock(&sb->ports_lock);
    return rc;
}

json_t *sandbox_port_json(const struct forward_info *i)
{
    return json_pack("{s:i, s:s, s:i, s:s, s:i, s:I}", "guest_port", (int)i->spec.guest_port,
                     "host_ip", i->spec.host_ip, "host_port", (int)i->spec.host_port, "address",
                     i->address, "connections", (int)i->conns, "connections_total",
                     (json_int_t)i->total);
}

size_t sandbox_ports_list(struct sandbox *sb, struct forward_info out[FORWARD_MAX_PORTS])
{
    pthread_mutex_lock(&sb->ports_lock);
    size_t n = sb->ports ? forwarder_list(sb->ports, out, FORWARD_MAX_PORTS) : 0;
    pthread_mutex_unlock(&sb->ports_lock);
    return n < FORWARD_MAX_PORTS ? n : FORWARD_MAX_PORTS;
}

json_t *sandbox_ports_json(struct sandbox *sb)
{
    static __thread struct forward_info infos[FORWARD_MAX_PORTS];
    json_t *a = json_array();
    size_t n = sandbox_ports_list(sb, infos);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, sandbox_port_json(&infos[i]));
    return a;
}

unsigned sandbox_ports_busy(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->ports_lock);
    unsigned n = sb->ports ? forwarder_conns(sb->ports) : 0;
    pthread_mutex_unlock(&sb->ports_lock);
    return n;
}

void sandbox_ports_close(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->ports_lock);
    struct forwarder *f = sb->ports;
    sb->ports = NULL;
    pthread_mutex_unlock(&sb->ports_lock);
    /* Outside the lock: it waits for connections still dialling. */
    forwarder_free(f);
}
