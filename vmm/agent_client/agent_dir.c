/* Blocking drivers of the folder requests (proto.h: STAT, LIST, MKDIR,
 * SYMLINK) over a connected stream socket.  Every ENTRY has passed the
 * decoder's checks (agent_dir_codec.c) before a caller sees it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/agent_client/agent_conn.h"

int agent_stat(int fd, const char *path, struct agent_entry *e, char *target_buf)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_MAX_PATH];
    int rc;
    struct agent_conn *c =
        ac_ask(fd, f, agent_encode_path_req(f, sizeof(f), AGENT_STAT, path), &rc);
    if (!c)
        return rc;
    struct agent_msg m;
    rc = agent_reader_wait(&c->rd, &m);
    if (rc == 1 && m.type == AGENT_ENTRY && !m.u.entry.name[0]) {
        *e = m.u.entry;
        e->name = "";
        snprintf(target_buf, AGENT_MAX_PATH, "%s", m.u.entry.target);
        e->target = target_buf;
        rc = 0;
    } else if (rc == 1) {
        rc = m.type == AGENT_ERROR ? -(int)m.u.error.code : -EPROTO;
    }
    ac_free(c);
    return rc;
}

int agent_list(int fd, const char *path, agent_entry_fn *each, void *opaque)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_MAX_PATH];
    int rc;
    struct agent_conn *c =
        ac_ask(fd, f, agent_encode_path_req(f, sizeof(f), AGENT_LIST, path), &rc);
    if (!c)
        return rc;
    for (;;) {
        struct agent_msg m;
        rc = agent_reader_wait(&c->rd, &m);
        if (rc < 0)
            break;
        if (m.type == AGENT_DONE) {
            rc = 0;
            break;
        }
        if (m.type == AGENT_ERROR) {
            rc = -(int)m.u.error.code;
            break;
        }
        if (m.type != AGENT_ENTRY || !m.u.entry.name[0]) {
            rc = -EPROTO;
            break;
        }
        rc = each(opaque, &m.u.entry);
        if (rc)
            break;
    }
    ac_free(c);
    return rc;
}

/* A request whose answer is DONE or ERROR. */
static int ask_done(int fd, const uint8_t *f, ssize_t fl)
{
    int rc;
    struct agent_conn *c = ac_ask(fd, f, fl, &rc);
    if (!c)
        return rc;
    rc = ac_verdict(c, AGENT_DONE);
    ac_free(c);
    return rc;
}

int agent_mkdir(int fd, const char *path, uint32_t root_len, uint32_t mode)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_MKDIR_FIXED + AGENT_MAX_PATH];
    return ask_done(fd, f, agent_encode_mkdir(f, sizeof(f), path, root_len, mode));
}

int agent_symlink(int fd, const char *path, uint32_t root_len, const char *target)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_SYMLINK_FIXED + 2 * AGENT_MAX_PATH];
    return ask_done(fd, f, agent_encode_symlink(f, sizeof(f), path, root_len, target));
}

int agent_rename(int fd, const char *from, const char *to, uint32_t flags)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_RENAME_FIXED + 2 * AGENT_MAX_PATH];
    return ask_done(fd, f, agent_encode_rename(f, sizeof(f), from, to, flags));
}

int agent_remove(int fd, const char *path, uint32_t flags)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_REMOVE_FIXED + AGENT_MAX_PATH];
    return ask_done(fd, f, agent_encode_remove(f, sizeof(f), path, flags));
}

int agent_chown(int fd, const char *path, uint32_t uid, uint32_t gid)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_CHOWN_FIXED + AGENT_MAX_PATH];
    return ask_done(fd, f, agent_encode_chown(f, sizeof(f), path, uid, gid));
}
