/* A sandbox's allowlist replaced while it runs; see sandbox_egress.h. */
#include "vmm/sandbox/sandbox_egress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/audit/audit.h"
#include "vmm/egress/egress_rules.h"
#include "vmm/sandbox/api_fields.h"

void sandbox_egress_init(struct sandbox *sb, json_t *allow, json_t *allow_ip)
{
    sb->allow = allow ? json_incref(allow) : json_array();
    sb->allow_ip = allow_ip ? json_incref(allow_ip) : json_array();
}

/* The strings of a checked list (get_list: at most FIELD_MAX_LIST). */
static size_t strings_of(json_t *list, const char **out)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        if (i >= FIELD_MAX_LIST)
            break;
        out[i] = json_string_value(e);
    }
    return i;
}

int sandbox_egress_check(json_t *allow, json_t *allow_ip, char *err, size_t cap,
                         const char **field)
{
    /* Each list on its own: the sum is checked against the list it is
     * joined to (sandbox_egress_replace), which this does not know. */
    struct egress_policy *p = malloc(sizeof(*p));
    if (!p) {
        snprintf(err, cap, "out of memory");
        *field = NULL;
        return -ENOMEM;
    }
    int rc = 0;
    for (int ip = 0; ip < 2 && !rc; ip++) {
        json_t *list = ip ? allow_ip : allow, *e;
        size_t i;
        p->n = 0;
        json_array_foreach(list, i, e) {
            const char *rule = json_string_value(e);
            char why[200];
            rc = ip ? egress_policy_add_cidr(p, rule, why, sizeof(why))
                    : egress_policy_add_host(p, rule, why, sizeof(why));
            if (rc) {
                *field = ip ? "allow_ip" : "allow";
                snprintf(err, cap, "%s '%.300s': %s", *field, rule, why);
                break;
            }
        }
    }
    free(p);
    return rc ? -EINVAL : 0;
}

/* The change, in the sandbox's audit log: the connections cut, the new
 * lists, then the old (a record past 16 KiB loses its last fields).
 * Under sb->egress_lock, before the new lists become sb's. */
static void record(struct sandbox *sb, const struct egress_rules_answer *a, json_t *allow,
                   json_t *allow_ip)
{
    static __thread const char *v[4][FIELD_MAX_LIST];
    json_t *lists[4] = {allow, allow_ip, sb->allow, sb->allow_ip};
    static const char *const names[4] = {"allow", "allow_ip", "old_allow", "old_allow_ip"};
    struct audit_rec *r = malloc(sizeof(*r));
    if (!r)
        return;
    audit_begin(&sb->audit, r, "egress_rules");
    audit_u64v(r, "closed", a->cut, a->ncut);
    for (int i = 0; i < 4; i++)
        audit_strv(r, names[i], v[i], strings_of(lists[i], v[i]));
    audit_end(&sb->audit, r);
    free(r);
}

/* Under sb->egress_lock.  0, or the HTTP status with err. */
static int send_rules(struct sandbox *sb, json_t *allow, json_t *allow_ip,
                      struct egress_rules_answer *a, char *err, size_t cap, const char **field)
{
    static __thread const char *va[FIELD_MAX_LIST], *vi[FIELD_MAX_LIST];
    size_t na = strings_of(allow, va), ni = strings_of(allow_ip, vi);
    if (na + ni > EGRESS_MAX_RULES) {
        snprintf(err, cap, "%s: at most %d rules in all (allow and allow_ip together; this "
                 "would make %zu)", *field, EGRESS_MAX_RULES, na + ni);
        return 400;
    }
    if (sb->egress_fd < 0) {
        snprintf(err, cap, "this sandbox's VM has no allowlist channel");
        return 500;
    }
    char *msg = malloc(EGRESS_RULES_MSG_MAX);
    ssize_t len = msg ? egress_rules_encode(msg, EGRESS_RULES_MSG_MAX, va, na, vi, ni) : -ENOMEM;
    int rc = len < 0 ? (int)len : egress_rules_exchange(sb->egress_fd, msg, (size_t)len,
                                                        EGRESS_RULES_ANSWER_MS, a);
    free(msg);
    if (rc == -ECONNRESET || rc == -EPIPE) {
        snprintf(err, cap, "the sandbox's VM is gone");
        return 500;
    }
    if (rc) {
        snprintf(err, cap, "the sandbox's egress broker did not take the allowlist: %s",
                 strerror(-rc));
        return rc == -ETIMEDOUT ? 503 : 500;
    }
    if (a->rc) { /* the same parser as ours, so only the secrets' hosts can push it over */
        snprintf(err, cap, "the sandbox's egress broker refused the allowlist: %s", a->err);
        return a->rc == -E2BIG ? 400 : 500;
    }
    return 0;
}

int sandbox_egress_replace(struct registry *reg, struct sandbox *sb, json_t *allow,
                           json_t *allow_ip, char *err, size_t cap, const char **field)
{
    *field = allow ? "allow" : "allow_ip";
    pthread_mutex_lock(&sb->egress_lock);
    json_t *na = allow ? allow : sb->allow, *ni = allow_ip ? allow_ip : sb->allow_ip;
    static __thread struct egress_rules_answer a;
    int http = send_rules(sb, na, ni, &a, err, cap, field);
    if (!http) {
        record(sb, &a, na, ni);
        json_incref(na);
        json_incref(ni);
        pthread_mutex_lock(&reg->lock);
        json_t *old[2] = {sb->allow, sb->allow_ip};
        sb->allow = na;
        sb->allow_ip = ni;
        pthread_mutex_unlock(&reg->lock);
        json_decref(old[0]);
        json_decref(old[1]);
    }
    pthread_mutex_unlock(&sb->egress_lock);
    if (http != 400)
        *field = NULL;
    return http;
}
