/* runtime/pod: the annotations that make a pod (hostile: they come from
 * the caller's config.json), a pod VM's shape, a member's names, and the
 * messages between a pod's stand-in and its members (a peer may send
 * anything: fds it should not, NULs, too much). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/runtime/oci_config.h"
#include "vmm/runtime/pod.h"
#include "vmm/runtime/pod_wire.h"
#include "vmm/jail/fdpass.h"
#include "tests/unit/helpers.h"

/* pod_vm_shape as create calls it: on container_vm_shape's figures */
static int shape(const struct oci_config *c, unsigned *mem, unsigned *cpus, char *err,
                 size_t cap)
{
    *mem = c->memory_limit > 0 ? (unsigned)(c->memory_limit >> 20) : 256;
    *cpus = 1;
    return pod_vm_shape(c, mem, cpus, err, cap);
}

static int parse_with(const char *annotations, const char *resources, struct oci_config *c)
{
    char doc[2048], err[512];
    snprintf(doc, sizeof(doc),
             "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
             "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"user\":{\"uid\":0,\"gid\":0}},"
             "\"annotations\":{%s},\"linux\":{\"resources\":{%s}}}",
             annotations, resources);
    int rc = oci_config_parse(doc, strlen(doc), c, err, sizeof(err));
    ck_assert_msg(rc == 0, "%s", err);
    return rc;
}

START_TEST(roles)
{
    struct oci_config c;
    const char *sid;
    char err[256];
    parse_with("", "", &c);
    ck_assert_int_eq(pod_role_of(&c, &sid, err, sizeof(err)), POD_NONE);
    oci_config_free(&c);
    parse_with("\"io.kubernetes.cri.container-type\":\"sandbox\"", "", &c);
    ck_assert_int_eq(pod_role_of(&c, &sid, err, sizeof(err)), POD_SANDBOX);
    oci_config_free(&c);
    parse_with("\"io.kubernetes.cri.container-type\":\"container\","
               "\"io.kubernetes.cri.sandbox-id\":\"abc123\"", "", &c);
    ck_assert_int_eq(pod_role_of(&c, &sid, err, sizeof(err)), POD_MEMBER);
    ck_assert_str_eq(sid, "abc123");
    oci_config_free(&c);
    /* a member without its pod, or with an id that could walk out of
     * the runtime's root, or an unknown type */
    static const char *const bad[] = {
        "\"io.kubernetes.cri.container-type\":\"container\"",
        "\"io.kubernetes.cri.container-type\":\"container\","
        "\"io.kubernetes.cri.sandbox-id\":\"../x\"",
        "\"io.kubernetes.cri.container-type\":\"container\","
        "\"io.kubernetes.cri.sandbox-id\":\"\"",
        "\"io.kubernetes.cri.container-type\":\"podsandbox\"",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        parse_with(bad[i], "", &c);
        err[0] = '\0';
        ck_assert_int_eq(pod_role_of(&c, &sid, err, sizeof(err)), -1);
        ck_assert_msg(strstr(err, "io.kubernetes.cri."), "%s", err);
        oci_config_free(&c);
    }
}
END_TEST

START_TEST(vm_shape)
{
    struct oci_config c;
    unsigned mem, cpus;
    char err[256];
    parse_with("", "", &c);
    ck_assert_int_eq(shape(&c, &mem, &cpus, err, sizeof(err)), 0);
    ck_assert_uint_eq(mem, POD_DEFAULT_MEM_MIB);
    ck_assert_uint_eq(cpus, 1);
    oci_config_free(&c);
    parse_with("\"io.airlock.pod-memory-mib\":\"640\"", "", &c);
    ck_assert_int_eq(shape(&c, &mem, &cpus, err, sizeof(err)), 0);
    ck_assert_uint_eq(mem, 640);
    oci_config_free(&c);
    /* the sandbox's own limit wins over the annotation */
    parse_with("\"io.airlock.pod-memory-mib\":\"640\"", "\"memory\":{\"limit\":268435456}", &c);
    ck_assert_int_eq(shape(&c, &mem, &cpus, err, sizeof(err)), 0);
    ck_assert_uint_eq(mem, 256);
    oci_config_free(&c);
    static const char *const bad[] = {
        "\"io.airlock.pod-memory-mib\":\"64\"",     "\"io.airlock.pod-memory-mib\":\"-1\"",
        "\"io.airlock.pod-memory-mib\":\"12x\"",    "\"io.airlock.pod-memory-mib\":\"\"",
        "\"io.airlock.pod-memory-mib\":\"99999999999999999999\"",
        "\"io.airlock.pod-cpus\":\"0\"",            "\"io.airlock.pod-cpus\":\"17\"",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        parse_with(bad[i], "", &c);
        err[0] = '\0';
        ck_assert_int_eq(shape(&c, &mem, &cpus, err, sizeof(err)), -1);
        ck_assert_msg(strstr(err, "io.airlock.pod-"), "%s", err);
        oci_config_free(&c);
    }
}
END_TEST

START_TEST(member_names)
{
    char name[65], serial[POD_SERIAL_MAX + 1], err[256];
    const char *hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    ck_assert_int_eq(pod_member_names(hex, name, sizeof(name), serial, err, sizeof(err)), 0);
    ck_assert_str_eq(name, hex);
    ck_assert_str_eq(serial, "0123456789abcdef0123");
    char long_id[80];
    memset(long_id, 'a', sizeof(long_id) - 1);
    long_id[sizeof(long_id) - 1] = '\0';
    ck_assert_int_eq(pod_member_names(long_id, name, sizeof(name), serial, err, sizeof(err)), -1);
    ck_assert_int_eq(pod_member_names("a+b", name, sizeof(name), serial, err, sizeof(err)), -1);
    ck_assert_int_eq(pod_member_names(".x", name, sizeof(name), serial, err, sizeof(err)), -1);
    ck_assert_int_eq(pod_member_names("", name, sizeof(name), serial, err, sizeof(err)), -1);
}
END_TEST

START_TEST(wire)
{
    int sv[2], p[2], fds[POD_WIRE_MAX_FDS];
    unsigned n;
    char msg[POD_WIRE_MAX];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    ck_assert_int_eq(pipe(p), 0);
    int two[2] = {p[0], p[1]};
    ck_assert_int_eq(pod_wire_send(sv[0], "FILL abc name", two, 2), 0);
    ck_assert_int_eq(pod_wire_recv_fds(sv[1], msg, sizeof(msg), fds, &n, 1000), 13);
    ck_assert_str_eq(msg, "FILL abc name");
    ck_assert_uint_eq(n, 2);
    close(fds[0]);
    close(fds[1]);
    /* fds where none are wanted, too many fds, a NUL inside, too long */
    ck_assert_int_eq(pod_wire_send(sv[0], "OK 1", two, 1), 0);
    ck_assert_int_eq(pod_wire_recv(sv[1], msg, sizeof(msg), 1000), -EPROTO);
    int three[3] = {p[0], p[1], p[0]};
    ck_assert_int_eq(fdpass_sendv(sv[0], "FILL a b", 8, three, 3), 0);
    ck_assert_int_eq(pod_wire_recv_fds(sv[1], msg, sizeof(msg), fds, &n, 1000), -EPROTO);
    ck_assert_int_eq(fds[0], -1);
    ck_assert_int_eq(fdpass_sendv(sv[0], "OK\0 1", 5, NULL, 0), 0);
    ck_assert_int_eq(pod_wire_recv(sv[1], msg, sizeof(msg), 1000), -EPROTO);
    char big[POD_WIRE_MAX + 10];
    memset(big, 'x', sizeof(big));
    ck_assert_int_eq(fdpass_sendv(sv[0], big, sizeof(big), NULL, 0), 0);
    ck_assert_int_eq(pod_wire_recv(sv[1], msg, sizeof(msg), 1000), -EPROTO);
    big[POD_WIRE_MAX] = '\0';
    ck_assert_int_eq(pod_wire_send(sv[0], big, NULL, 0), -EMSGSIZE);
    ck_assert_int_eq(pod_wire_send(sv[0], "", NULL, 0), -EMSGSIZE);
    /* nothing comes: a timeout; the peer gone: 0 */
    ck_assert_int_eq(pod_wire_recv(sv[1], msg, sizeof(msg), 50), -ETIMEDOUT);
    close(sv[0]);
    ck_assert_int_eq(pod_wire_recv(sv[1], msg, sizeof(msg), 1000), 0);
    close(sv[1]);
    close(p[0]);
    close(p[1]);
    /* no descriptor leaked on the refusals: the next fd is the lowest */
    int probe = open("/dev/null", O_RDONLY);
    ck_assert_int_le(probe, p[1]);
    close(probe);
}
END_TEST

Suite *pod_suite(void)
{
    Suite *s = suite_create("pod");
    TCase *t = tcase_create("pod");
    tcase_add_test(t, roles);
    tcase_add_test(t, vm_shape);
    tcase_add_test(t, member_names);
    tcase_add_test(t, wire);
    suite_add_tcase(s, t);
    return s;
}
