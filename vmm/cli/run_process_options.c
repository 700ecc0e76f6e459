/* --group-add, --ulimit, --security-opt: the fields of an OCI process
 * that docker run names so, parsed into EXEC's process section
 * (vmm/agent_client/agent_exec_proc.c checks the same rules again). */
#include "vmm/cli/run_process_options.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "vmm/util/parse.h"

/* docker's --ulimit names, Linux's numbers (RLIMIT_*, 0..15). */
static const struct {
    const char *name;
    int res;
} ulimits[] = {
    {"cpu", RLIMIT_CPU},         {"fsize", RLIMIT_FSIZE},   {"data", RLIMIT_DATA},
    {"stack", RLIMIT_STACK},     {"core", RLIMIT_CORE},     {"rss", RLIMIT_RSS},
    {"nproc", RLIMIT_NPROC},     {"nofile", RLIMIT_NOFILE}, {"memlock", RLIMIT_MEMLOCK},
    {"as", RLIMIT_AS},           {"locks", RLIMIT_LOCKS},   {"sigpending", RLIMIT_SIGPENDING},
    {"msgqueue", RLIMIT_MSGQUEUE}, {"nice", RLIMIT_NICE},   {"rtprio", RLIMIT_RTPRIO},
    {"rttime", RLIMIT_RTTIME},
};

int run_group_add(struct agent_exec_req *req, const char *val, char *err, size_t errlen)
{
    uint64_t g;
    if (parse_uint(val, 0xfffffffe, &g) || req->ngroups >= AGENT_MAX_GROUPS) {
        snprintf(err, errlen, "--group-add '%.64s': want a group number, 0 to 4294967294 (at "
                 "most %d of them)", val, AGENT_MAX_GROUPS);
        return -EINVAL;
    }
    req->groups[req->ngroups++] = (uint32_t)g;
    return 0;
}

static int limit_value(const char *s, size_t len, uint64_t *v)
{
    char buf[32];
    if (!len || len >= sizeof(buf))
        return -EINVAL;
    memcpy(buf, s, len);
    buf[len] = 0;
    if (!strcmp(buf, "unlimited") || !strcmp(buf, "-1")) {
        *v = UINT64_MAX; /* RLIM_INFINITY */
        return 0;
    }
    return parse_uint(buf, UINT64_MAX - 1, v);
}

int run_ulimit(struct agent_exec_req *req, const char *val, char *err, size_t errlen)
{
    const char *eq = strchr(val, '=');
    const char *colon = eq ? strchr(eq + 1, ':') : NULL;
    int res = -1;
    for (size_t i = 0; eq && i < sizeof(ulimits) / sizeof(ulimits[0]); i++)
        if (strlen(ulimits[i].name) == (size_t)(eq - val) &&
            !strncmp(val, ulimits[i].name, (size_t)(eq - val)))
            res = ulimits[i].res;
    uint64_t soft, hard;
    const char *why = NULL;
    if (res < 0)
        why = "want NAME=SOFT[:HARD], NAME one of cpu fsize data stack core rss nproc nofile "
              "memlock as locks sigpending msgqueue nice rtprio rttime";
    else if (limit_value(eq + 1, colon ? (size_t)(colon - eq - 1) : strlen(eq + 1), &soft) ||
             (colon && limit_value(colon + 1, strlen(colon + 1), &hard)))
        why = "want numbers (or unlimited) for SOFT and HARD";
    else if (colon && soft > hard)
        why = "SOFT is above HARD";
    for (uint32_t i = 0; !why && i < req->nrlimits; i++)
        if (req->rlimits[i].resource == (uint32_t)res)
            why = "given twice";
    if (why) {
        snprintf(err, errlen, "--ulimit '%.64s': %s", val, why);
        return -EINVAL;
    }
    req->rlimits[req->nrlimits++] = (struct agent_rlimit){(uint32_t)res, soft, colon ? hard : soft};
    return 0;
}

int run_security_opt(struct agent_exec_req *req, const char *val, char *err, size_t errlen)
{
    if (!strcmp(val, "no-new-privileges") || !strcmp(val, "no-new-privileges=true") ||
        !strcmp(val, "no-new-privileges:true")) {
        req->flags |= AGENT_EXEC_F_NO_NEW_PRIVS;
        return 0;
    }
    if (!strcmp(val, "no-new-privileges=false") || !strcmp(val, "no-new-privileges:false")) {
        req->flags &= ~AGENT_EXEC_F_NO_NEW_PRIVS;
        return 0;
    }
    snprintf(err, errlen, "--security-opt '%.64s': only no-new-privileges[=true|false] is "
             "taken (the guest has no seccomp, AppArmor or SELinux profiles of docker's)", val);
    return -EINVAL;
}

int run_ulimit_check(const struct agent_exec_req *req, const bool given[3], char *err,
                     size_t errlen)
{
    static const int fixed[3] = {RLIMIT_NPROC, RLIMIT_NOFILE, RLIMIT_FSIZE};
    static const char *const flag[3] = {"nproc", "nofile", "fsize"};
    for (int f = 0; f < 3; f++)
        for (uint32_t i = 0; given[f] && i < req->nrlimits; i++)
            if (req->rlimits[i].resource == (uint32_t)fixed[f]) {
                snprintf(err, errlen, "--ulimit %s and --%s: give one", flag[f], flag[f]);
                return -EINVAL;
            }
    return 0;
}
