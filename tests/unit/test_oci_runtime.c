/* runtime/: config.json and process.json as the OCI runtime reads them
 * (every field from the caller is hostile), cgroupsPath in both forms,
 * overlay layers from mountinfo, container ids and the state JSON. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/audit/audit.h"
#include "vmm/runtime/container_cgroup.h"
#include "vmm/runtime/container_ports.h"
#include "vmm/runtime/container_state.h"
#include "vmm/runtime/oci_config.h"
#include "vmm/runtime/root_disk.h"
#include "vmm/runtime/runtime_cmds.h"
#include "tests/unit/helpers.h"

static const char good[] =
    "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
    "\"hostname\":\"h1\",\"annotations\":{\"io.airlock.allow\":\"example.com:443\"},"
    "\"process\":{\"terminal\":true,\"consoleSize\":{\"height\":40,\"width\":120},"
    "\"user\":{\"uid\":1000,\"gid\":100,\"additionalGids\":[10,20]},"
    "\"args\":[\"sh\",\"-c\",\"\"],\"env\":[\"PATH=/bin\",\"A=b=c\"],\"cwd\":\"/work\","
    "\"noNewPrivileges\":true,\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":1024,"
    "\"hard\":4096},{\"type\":\"RLIMIT_CORE\",\"soft\":-1,\"hard\":-1}],"
    "\"capabilities\":{\"bounding\":[\"CAP_CHOWN\",\"CAP_NET_RAW\",\"cap_kill\"],"
    "\"effective\":[\"CAP_CHOWN\"],\"permitted\":[\"CAP_CHOWN\",\"CAP_KILL\"],"
    "\"inheritable\":[],\"ambient\":[\"CAP_KILL\"]}},"
    "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
    "{\"destination\":\"/etc/hosts\",\"type\":\"bind\",\"source\":\"/x/hosts\","
    "\"options\":[\"rbind\",\"ro\"]}],"
    "\"hooks\":{\"prestart\":[{\"path\":\"/bin/hook\",\"args\":[\"hook\",\"a\"],"
    "\"env\":[\"X=1\"],\"timeout\":5}]},"
    "\"linux\":{\"resources\":{\"memory\":{\"limit\":536870912},\"cpu\":{\"quota\":150000,"
    "\"period\":100000},\"pids\":{\"limit\":64}},\"cgroupsPath\":\"/ctr/c1\","
    "\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\",\"path\":\"/proc/1/ns/net\"}]}}";

START_TEST(config_fields)
{
    struct oci_config c;
    char err[512];
    ck_assert_msg(oci_config_parse(good, sizeof(good) - 1, &c, err, sizeof(err)) == 0, "%s", err);
    ck_assert_str_eq(c.root, "rootfs");
    ck_assert(c.root_readonly);
    ck_assert_str_eq(c.hostname, "h1");
    ck_assert(c.has_process);
    ck_assert_uint_eq(c.process.nargs, 3);
    ck_assert_str_eq(c.process.args[2], ""); /* empty arguments are arguments */
    ck_assert_ptr_null(c.process.args[3]);
    ck_assert_uint_eq(c.process.nenv, 2);
    ck_assert_str_eq(c.process.cwd, "/work");
    ck_assert_uint_eq(c.process.uid, 1000);
    ck_assert_uint_eq(c.process.gid, 100);
    ck_assert_uint_eq(c.process.ngroups, 2);
    ck_assert_uint_eq(c.process.groups[1], 20);
    ck_assert(c.process.terminal && c.process.no_new_privs);
    ck_assert_uint_eq(c.process.rows, 40);
    ck_assert_uint_eq(c.process.cols, 120);
    ck_assert_uint_eq(c.process.nrlimits, 2);
    ck_assert_int_eq(c.process.rlimits[0].resource, RLIMIT_NOFILE);
    ck_assert(c.process.rlimits[1].soft == UINT64_MAX); /* -1: unlimited */
    ck_assert(c.process.has_caps); /* CAP_CHOWN 0, CAP_KILL 5, CAP_NET_RAW 13; any case */
    ck_assert_uint_eq(c.process.caps[OCI_CAP_BOUNDING], (1u << 0) | (1u << 5) | (1u << 13));
    ck_assert_uint_eq(c.process.caps[OCI_CAP_EFFECTIVE], 1u << 0);
    ck_assert_uint_eq(c.process.caps[OCI_CAP_PERMITTED], (1u << 0) | (1u << 5));
    ck_assert_uint_eq(c.process.caps[OCI_CAP_INHERITABLE], 0);
    ck_assert_uint_eq(c.process.caps[OCI_CAP_AMBIENT], 1u << 5);
    ck_assert_uint_eq(c.nmounts, 2);
    ck_assert(c.mounts[1].bind && c.mounts[1].readonly);
    ck_assert(!c.mounts[0].bind);
    ck_assert_uint_eq(c.nhooks[OCI_HOOK_PRESTART], 1);
    ck_assert_int_eq(c.hooks[OCI_HOOK_PRESTART][0].timeout_s, 5);
    ck_assert_str_eq(c.hooks[OCI_HOOK_PRESTART][0].args[1], "a");
    ck_assert_int_eq(c.memory_limit, 536870912);
    ck_assert_int_eq(c.cpu_quota, 150000);
    ck_assert_uint_eq(c.cpu_period, 100000);
    ck_assert_int_eq(c.pids_limit, 64);
    ck_assert_str_eq(c.cgroups_path, "/ctr/c1");
    const struct oci_namespace *net = oci_config_namespace(&c, CLONE_NEWNET);
    ck_assert_ptr_nonnull(net);
    ck_assert_str_eq(net->path, "/proc/1/ns/net");
    ck_assert_ptr_null(oci_config_namespace(&c, CLONE_NEWUTS));
    ck_assert_ptr_null(oci_config_namespace(&c, CLONE_NEWPID)->path); /* a new one */
    ck_assert_uint_eq(c.nnamespaces, 2);
    ck_assert_int_eq(c.namespaces[0].clone_flag, CLONE_NEWPID);
    ck_assert_ptr_null(c.namespaces[0].path);
    ck_assert_int_eq(c.namespaces[1].clone_flag, CLONE_NEWNET);
    oci_config_free(&c);
}
END_TEST

/* One field made wrong in the good config: refused, the error naming it. */
static void refused(const char *from, const char *to, const char *field)
{
    char buf[sizeof(good) + 512], err[512];
    const char *at = strstr(good, from);
    ck_assert_ptr_nonnull(at);
    snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
    struct oci_config c;
    ck_assert_msg(oci_config_parse(buf, strlen(buf), &c, err, sizeof(err)) == -1, "took %s", to);
    ck_assert_msg(strstr(err, field) != NULL, "'%s' does not name %s", err, field);
    ck_assert_ptr_null(c.doc); /* nothing held */
}

START_TEST(config_refusals)
{
    refused("\"1.0.2\"", "\"0.9\"", "ociVersion");
    refused("\"path\":\"rootfs\"", "\"path\":7", "root.path");
    refused("\"readonly\":true", "\"readonly\":1", "root.readonly");
    refused("\"uid\":1000", "\"uid\":-1", "process.user.uid");
    refused("\"uid\":1000", "\"uid\":4294967295", "process.user.uid");
    refused("\"uid\":1000", "\"uid\":\"0\"", "process.user.uid");
    refused("[10,20]", "[10,\"x\"]", "additionalGids");
    refused("[10,20]", "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,"
                       "27,28,29,30,31,32,33]", "additionalGids");
    refused("[\"sh\",\"-c\",\"\"]", "[]", "process.args");
    refused("[\"sh\",\"-c\",\"\"]", "[\"\"]", "process.args");
    refused("[\"sh\",\"-c\",\"\"]", "[\"sh\",1]", "process.args");
    refused("\"A=b=c\"", "\"Ab\"", "process.env");
    refused("\"A=b=c\"", "\"=b\"", "process.env");
    refused("\"A=b=c\"", "\"A\\u0000=b\"", "config.json"); /* jansson refuses NULs */
    refused("\"/work\"", "\"work\"", "process.cwd");
    refused("\"terminal\":true", "\"terminal\":\"yes\"", "process.terminal");
    refused("\"height\":40", "\"height\":70000", "consoleSize");
    refused("\"RLIMIT_NOFILE\"", "\"RLIMIT_BOGUS\"", "process.rlimits");
    refused("\"soft\":1024", "\"soft\":8192", "process.rlimits");
    refused("\"RLIMIT_CORE\"", "\"RLIMIT_NOFILE\"", "process.rlimits");
    refused("\"destination\":\"/proc\"", "\"destination\":\"proc\"", "mounts");
    refused("\"options\":[\"rbind\",\"ro\"]", "\"options\":\"ro\"", "mounts.options");
    refused("\"path\":\"/bin/hook\"", "\"path\":\"hook\"", "hooks.prestart");
    refused("\"timeout\":5", "\"timeout\":0", "hooks.prestart");
    refused("\"limit\":536870912", "\"limit\":\"1g\"", "linux.resources.memory.limit");
    refused("\"period\":100000", "\"period\":-5", "linux.resources.cpu.period");
    refused("\"cgroupsPath\":\"/ctr/c1\"", "\"cgroupsPath\":5", "linux.cgroupsPath");
    refused("\"path\":\"/proc/1/ns/net\"", "\"path\":\"ns/net\"", "linux.namespaces");
    refused("{\"type\":\"pid\"}", "{\"type\":\"pids\"}", "linux.namespaces: pids");
    refused("{\"type\":\"pid\"}", "{\"type\":\"network\"}", "linux.namespaces");
    refused("\"io.airlock.allow\":\"example.com:443\"", "\"io.airlock.allow\":1", "annotations");
    refused("\"hostname\":\"h1\"", "\"hostname\":[]", "hostname");
    /* it goes on the guest kernel's command line: one word, bounded */
    refused("\"hostname\":\"h1\"", "\"hostname\":\"h1 init=/bin/sh\"", "hostname");
    refused("\"hostname\":\"h1\"", "\"hostname\":\"h\\n1\"", "hostname");
    refused("\"h1\"", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
            "hostname"); /* 65 */
    refused("\"cap_kill\"", "\"CAP_TEST\"", "process.capabilities.bounding: CAP_TEST");
    refused("\"cap_kill\"", "\"5\"", "process.capabilities.bounding"); /* names only */
    refused("\"cap_kill\"", "7", "process.capabilities.bounding");
    refused("\"ambient\":[\"CAP_KILL\"]", "\"ambient\":\"CAP_KILL\"",
            "process.capabilities.ambient");
    refused("\"capabilities\":{", "\"capabilities\":5,\"caps\":{", "process.capabilities");
    refused("\"hostname\":\"h1\"", "\"hostname\":\"h1\",\"hostname\":\"h2\"", "config.json");
}
END_TEST

/* A namespace path must name a namespace of its entry's type: the
 * process's own namespaces under the names of other types are refused. */
START_TEST(namespace_paths)
{
    static const char *const cases[][3] = {
        /* type, path, the error's words or NULL for none */
        {"network", "/proc/self/ns/net", NULL},
        {"mount", "/proc/self/ns/mnt", NULL},
        {"ipc", "/proc/self/ns/ipc", NULL},
        {"mount", "/proc/self/ns/net", "not a namespace of the entry's type"},
        {"uts", "/proc/self/ns/cgroup", "not a namespace of the entry's type"},
        {"pid", "/proc/self/status", "not a namespace of the entry's type"},
        {"ipc", "/nonexistent/ns", "No such file"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[512], err[512] = "";
        snprintf(buf, sizeof(buf),
                 "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"linux\":"
                 "{\"namespaces\":[{\"type\":\"%s\",\"path\":\"%s\"}]}}",
                 cases[i][0], cases[i][1]);
        struct oci_config c;
        ck_assert_msg(oci_config_parse(buf, strlen(buf), &c, err, sizeof(err)) == 0, "%s", err);
        int rc = oci_namespaces_check(&c, err, sizeof(err));
        if (!cases[i][2])
            ck_assert_msg(rc == 0, "%s as %s: %s", cases[i][1], cases[i][0], err);
        else
            ck_assert_msg(rc == -1 && strstr(err, cases[i][2]) && strstr(err, cases[i][1]),
                          "%s as %s: rc %d, '%s'", cases[i][1], cases[i][0], rc, err);
        oci_config_free(&c);
    }
}
END_TEST

START_TEST(config_not_json)
{
    struct oci_config c;
    char err[256];
    ck_assert_int_eq(oci_config_parse("{\"ociVersion\":", 14, &c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "not JSON"));
    ck_assert_int_eq(oci_config_parse("[1]", 3, &c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "not a JSON object"));
    ck_assert_int_eq(oci_config_load("/nonexistent/config.json", &c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/config.json"));
}
END_TEST

START_TEST(process_file)
{
    static const char p[] = "{\"args\":[\"ls\"],\"cwd\":\"/\",\"env\":[\"PATH=/bin\"],"
                            "\"user\":{\"uid\":0,\"gid\":0},\"terminal\":false}";
    json_t *doc;
    struct oci_process proc;
    char err[256];
    ck_assert_msg(oci_process_parse(p, sizeof(p) - 1, &doc, &proc, err, sizeof(err)) == 0, "%s",
                  err);
    ck_assert_str_eq(proc.args[0], "ls");
    ck_assert_uint_eq(proc.uid, 0);
    ck_assert(!proc.has_caps); /* none given: the agent's own rules */
    oci_process_free(&proc);
    json_decref(doc);
    ck_assert_int_eq(oci_process_parse("{\"args\":[\"ls\"]}", 15, &doc, &proc, err, sizeof(err)),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "process.cwd"));
    ck_assert_ptr_null(doc);
    ck_assert_int_eq(oci_process_parse("{\"args\":[\"ls\"],\"cwd\":\"/\",\"user\":{\"username\":"
                                       "\"x\"}}", 49, &doc, &proc, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "username"));
}
END_TEST

START_TEST(resources_file)
{
    struct oci_config c;
    char err[256];
    static const char r[] = "{\"cpu\":{\"quota\":50000,\"period\":100000}}";
    ck_assert_int_eq(oci_resources_parse(r, sizeof(r) - 1, &c, err, sizeof(err)), 0);
    ck_assert_int_eq(c.cpu_quota, 50000);
    ck_assert_int_eq(c.memory_limit, -1);
    ck_assert_int_eq(oci_resources_parse("{\"memory\":[]}", 13, &c, err, sizeof(err)), -1);
}
END_TEST

START_TEST(rlimit_names)
{
    ck_assert_int_eq(oci_rlimit_number("RLIMIT_NPROC"), RLIMIT_NPROC);
    ck_assert_int_eq(oci_rlimit_number("RLIMIT_RTTIME"), RLIMIT_RTTIME);
    ck_assert_int_eq(oci_rlimit_number("NOFILE"), -1);
    ck_assert_int_eq(oci_rlimit_number(""), -1);
}
END_TEST

static void cg(const char *path, bool systemd, const char *want)
{
    char out[512], err[256];
    int rc = container_cgroup_path(path, systemd, out, sizeof(out), err, sizeof(err));
    if (!want) {
        ck_assert_msg(rc == -1, "%s took %s", path, out);
        ck_assert_ptr_nonnull(strstr(err, "linux.cgroupsPath"));
        return;
    }
    ck_assert_msg(rc == 0, "%s: %s", path, err);
    ck_assert_str_eq(out, want);
}

START_TEST(cgroup_paths)
{
    cg("/ctr/c1", false, "/sys/fs/cgroup/ctr/c1");
    cg("ctr//c1/", false, "/sys/fs/cgroup/ctr/c1");
    cg("/libpod_parent/libpod-abc", false, "/sys/fs/cgroup/libpod_parent/libpod-abc");
    cg("/a/../b", false, NULL);
    cg("/a/./b", false, NULL);
    cg("/", false, NULL);
    cg("/a/b\n", false, NULL);
    cg("system.slice:docker:abc", true, "/sys/fs/cgroup/system.slice/docker-abc.scope");
    cg("machine-libpod.slice:libpod:abc", true,
       "/sys/fs/cgroup/machine.slice/machine-libpod.slice/libpod-abc.scope");
    cg(":docker:abc", true, "/sys/fs/cgroup/system.slice/docker-abc.scope");
    cg("-.slice:p:n", true, "/sys/fs/cgroup/p-n.scope");
    cg("user.slice:p:x.slice", true, "/sys/fs/cgroup/user.slice/p-x.slice");
    cg("bad:p", true, NULL);
    cg("a--b.slice:p:n", true, NULL);
    cg("a/b.slice:p:n", true, NULL);
    cg("system.slice:p:../../x", true, NULL);
    cg("system.slice:../x:n", true, NULL);
}
END_TEST

START_TEST(overlay_mountinfo)
{
    static const char mi[] =
        "22 1 0:21 / / rw - ext4 /dev/vda rw\n"
        "40 22 0:40 / /var/lib/c/merged rw,relatime - overlay overlay "
        "rw,lowerdir=/l/a:/l/with\\134:colon:/l/b\\040c,upperdir=/u/diff,workdir=/u/work\n"
        "41 22 0:41 / /rel rw - overlay overlay rw,lowerdir=l/x:l/y,upperdir=/u2,workdir=/w2\n"
        "42 22 0:42 / /other rw - tmpfs tmpfs rw\n"
        "43 22 0:43 / /stacked rw - overlay overlay rw,lowerdir=/s1,upperdir=/s2,workdir=/s3\n"
        "44 43 0:44 / /stacked rw - tmpfs tmpfs rw\n";
    struct overlay_layers o;
    ck_assert_int_eq(overlay_layers_parse(mi, "/var/lib/c/merged", &o), 1);
    ck_assert_uint_eq(o.nlower, 3);
    ck_assert_str_eq(o.lower[0], "/l/a");
    ck_assert_str_eq(o.lower[1], "/l/with:colon"); /* "\:" after mountinfo's \134 */
    ck_assert_str_eq(o.lower[2], "/l/b c");
    ck_assert_str_eq(o.upper, "/u/diff");
    overlay_layers_free(&o);
    ck_assert_int_eq(overlay_layers_parse(mi, "/rel", &o), 0); /* relative: not known */
    ck_assert_int_eq(overlay_layers_parse(mi, "/other", &o), 0);
    ck_assert_int_eq(overlay_layers_parse(mi, "/stacked", &o), 0); /* the top mount decides */
    ck_assert_int_eq(overlay_layers_parse(mi, "/nowhere", &o), 0);
    ck_assert_int_eq(overlay_layers_parse("garbage\n - \n\n", "/", &o), 0);
}
END_TEST

START_TEST(container_ids)
{
    ck_assert(container_id_ok("abc-DEF_1.2+x"));
    ck_assert(container_id_ok("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
    ck_assert(!container_id_ok(""));
    ck_assert(!container_id_ok("."));
    ck_assert(!container_id_ok(".."));
    ck_assert(!container_id_ok("a/b"));
    ck_assert(!container_id_ok("a b"));
    ck_assert(!container_id_ok("a\nb"));
}
END_TEST

/* A container folder by hand: status from the stand-in's pid and start
 * time, the FIFO and the paused marker; the state JSON runc's way. */
START_TEST(container_status_and_state)
{
    char root[] = "/tmp/airlock-rt-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(root));
    struct container c;
    ck_assert_int_eq(container_make(root, "c1", &c), 0);
    ck_assert_int_eq(container_make(root, "c1", &(struct container){0}), -EEXIST);
    c.state = json_pack("{s:s, s:s, s:s, s:s, s:{}}", "id", "c1", "bundle", "/b", "rootfs",
                        "/b/rootfs", "created", "2026-01-01T00:00:00Z", "annotations");
    ck_assert_int_eq(container_status(&c), CONTAINER_STOPPED); /* no pid recorded */
    json_object_set_new(c.state, "pid", json_integer(getpid()));
    json_object_set_new(c.state, "pid_start", json_integer((json_int_t)proc_start_time(getpid())));
    ck_assert_int_eq(container_save(&c), 0);
    container_close(&c);
    ck_assert_int_eq(container_open(root, "c1", &c), 0);
    ck_assert_int_eq(container_status(&c), CONTAINER_RUNNING);
    char p[PATH_MAX + 16];
    container_path(&c, "start", p, sizeof(p));
    ck_assert_int_eq(mkfifo(p, 0600), 0);
    ck_assert_int_eq(container_status(&c), CONTAINER_CREATED);
    unlink(p);
    json_t *st = container_state_json(&c);
    ck_assert_str_eq(json_string_value(json_object_get(st, "status")), "running");
    ck_assert_int_eq(json_integer_value(json_object_get(st, "pid")), getpid());
    ck_assert_str_eq(json_string_value(json_object_get(st, "bundle")), "/b");
    ck_assert_ptr_nonnull(json_object_get(st, "ociVersion"));
    json_decref(st);
    /* another process at that pid (a different start time): stopped */
    c.pid_start++;
    ck_assert_int_eq(container_status(&c), CONTAINER_STOPPED);
    st = container_state_json(&c);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "pid")), 0);
    json_decref(st);
    container_remove(&c);
    container_close(&c);
    ck_assert_int_eq(container_open(root, "c1", &c), -ENOENT);
    ck_assert_int_eq(container_open(root, "../x", &c), -ENOENT);
    rmdir(root);
}
END_TEST

/* `update --resources`: the VM's RAM cannot change, but the limit it was
 * booted with (kubelet sends it with every UpdateContainerResources, and
 * containerd's shim passes it on) is taken; without a limit in the
 * config, the RAM it got (256 MiB) is that limit. */
static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int update_with(const char *root, const char *id, const char *dir, const char *resources)
{
    char file[PATH_MAX];
    snprintf(file, sizeof(file), "%s/resources.json", dir);
    write_text(file, resources);
    struct runtime_globals g = {.root = root};
    char *argv[] = {"update", "--resources", file, (char *)id, NULL};
    return runtime_update(&g, 4, argv);
}

static void make_container(const char *root, const char *id, const char *bundle)
{
    struct container c;
    ck_assert_int_eq(container_make(root, id, &c), 0);
    c.state = json_pack("{s:s, s:s, s:s, s:s, s:{}}", "id", id, "bundle", bundle, "rootfs",
                        "/b/rootfs", "created", "2026-01-01T00:00:00Z", "annotations");
    ck_assert_int_eq(container_save(&c), 0);
    container_close(&c);
}

START_TEST(update_same_memory)
{
    char root[] = "/tmp/airlock-rt-XXXXXX", b1[PATH_MAX], b2[PATH_MAX], p[PATH_MAX + 16];
    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(b1, sizeof(b1), "%s/limited", root);
    snprintf(b2, sizeof(b2), "%s/unlimited", root);
    ck_assert_int_eq(mkdir(b1, 0700), 0);
    ck_assert_int_eq(mkdir(b2, 0700), 0);
    snprintf(p, sizeof(p), "%s/config.json", b1);
    write_text(p, good); /* memory.limit 512 MiB */
    snprintf(p, sizeof(p), "%s/config.json", b2);
    write_text(p, "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                  "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"}}");
    make_container(root, "lim", b1);
    make_container(root, "unl", b2);
    static const char cpu[] = "\"cpu\":{\"quota\":50000,\"period\":100000}";
    char r[256];
    snprintf(r, sizeof(r), "{\"memory\":{\"limit\":536870912},%s}", cpu);
    ck_assert_int_eq(update_with(root, "lim", root, r), 0);
    snprintf(r, sizeof(r), "{\"memory\":{\"limit\":268435456},%s}", cpu);
    ck_assert_int_eq(update_with(root, "lim", root, r), 1);
    ck_assert_int_eq(update_with(root, "lim", root, "{\"memory\":{\"limit\":536870913}}"), 1);
    snprintf(r, sizeof(r), "{%s}", cpu);
    ck_assert_int_eq(update_with(root, "lim", root, r), 0);
    ck_assert_int_eq(update_with(root, "unl", root, "{\"memory\":{\"limit\":268435456}}"), 0);
    ck_assert_int_eq(update_with(root, "unl", root, "{\"memory\":{\"limit\":536870912}}"), 1);
    /* a bundle that is gone: nothing to compare with, a limit is refused */
    snprintf(p, sizeof(p), "%s/config.json", b2);
    unlink(p);
    ck_assert_int_eq(update_with(root, "unl", root, "{\"memory\":{\"limit\":268435456}}"), 1);
    struct container c;
    for (const char *const *id = (const char *const[]){"lim", "unl", NULL}; *id; id++) {
        ck_assert_int_eq(container_open(root, *id, &c), 0);
        container_remove(&c);
        container_close(&c);
    }
    unlink(strcat(strcpy(p, root), "/resources.json"));
    snprintf(p, sizeof(p), "%s/config.json", b1);
    unlink(p);
    rmdir(b1);
    rmdir(b2);
    rmdir(root);
}
END_TEST

/* The guest's socket tables (container_ports.h): only LISTEN sockets on
 * a wildcard address count; the table is the guest's, so anything else
 * in it, well-formed or not, adds nothing. */
static bool has_port(const uint64_t *set, unsigned port)
{
    return set[port / 64] >> (port % 64) & 1;
}

static unsigned count_ports(const uint64_t *set)
{
    unsigned n = 0;
    for (unsigned w = 0; w < CONTAINER_PORTS_SET_WORDS; w++)
        n += (unsigned)__builtin_popcountll(set[w]);
    return n;
}

START_TEST(port_tables)
{
    static uint64_t set[CONTAINER_PORTS_SET_WORDS];
    static const char v4[] =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 101 1 0000000000000000 100 0 0 10 0\n"
        "   1: 0100007F:0C38 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 102 1 0000000000000000 100 0 0 10 0\n"
        "   2: 00000000:0050 00000000:0000 0a 00000000:00000000 00:00000000 00000000     0        0 103 1\n"
        "   3: 00000000:1F41 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 104 1\n"
        "   4: 00000000:0000 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 105 1\n"
        "   5: 00000000:FFFF 00000000:0000 0A\n";
    memset(set, 0, sizeof(set));
    ck_assert_uint_eq(container_ports_parse(v4, sizeof(v4) - 1, set), 3);
    ck_assert(has_port(set, 8000) && has_port(set, 80) && has_port(set, 65535));
    ck_assert(!has_port(set, 3128)); /* 127.0.0.1 only: the guest's own */
    ck_assert(!has_port(set, 8001)); /* established */
    ck_assert_uint_eq(count_ports(set), 3);
    /* The same port twice (v4 and v6) counts once. */
    static const char v6[] =
        "  sl  local_address                         remote_address                        st\n"
        "   0: 00000000000000000000000000000000:1F40 00000000000000000000000000000000:0000 0A 0\n"
        "   1: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 0\n"
        "   2: 00000000000000000000000000000000:2328 00000000000000000000000000000000:0000 0A 0\n";
    ck_assert_uint_eq(container_ports_parse(v6, sizeof(v6) - 1, set), 1);
    ck_assert(has_port(set, 9000) && !has_port(set, 8080));
    ck_assert_uint_eq(count_ports(set), 4);

    /* Hostile or broken lines add nothing, and nothing outside the set
     * is touched. */
    static const char *const bad[] = {
        "",
        "\n\n\n",
        "0: 00000000:1F40",
        "0: 00000000:1F40 00000000:0000",
        "0: 00000000:1F40 00000000:0000 0",
        "0: 00000000:1F40 00000000:0000 0AB",
        "0: 00000000:1F40 00000000:0000 A",
        "0: 0000000:1F40 00000000:0000 0A",          /* 7 digits */
        "0: 000000000:1F40 00000000:0000 0A",        /* 9 digits */
        "0: 00000000:1F4 00000000:0000 0A",          /* 3-digit port */
        "0: 00000000:1F400 00000000:0000 0A",
        "0: 00000000:1G40 00000000:0000 0A",
        "x: 00000000:1F40 00000000:0000 0A",
        ": 00000000:1F40 00000000:0000 0A",
        "0 00000000:1F40 00000000:0000 0A",
        "0: 00000000 1F40 00000000:0000 0A",
        "0: 0000000X:1F40 00000000:0000 0A",
        "0: 00000001:1F40 00000000:0000 0A",
        "0: -0000000:1F40 00000000:0000 0A",
        "0:\t00000000:1F40 00000000:0000 0A",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(set, 0, sizeof(set));
        ck_assert_msg(container_ports_parse(bad[i], strlen(bad[i]), set) == 0, "%s", bad[i]);
        ck_assert_uint_eq(count_ports(set), 0);
    }
    /* A NUL in a line, and a table cut anywhere: never a port that was
     * not a whole listener line. */
    static const char nul[] = "0: 00000000:1F\0040 00000000:0000 0A\n";
    memset(set, 0, sizeof(set));
    ck_assert_uint_eq(container_ports_parse(nul, sizeof(nul) - 1, set), 0);
    for (size_t cut = 0; cut < sizeof(v4) - 1; cut++) {
        memset(set, 0, sizeof(set));
        container_ports_parse(v4, cut, set);
        for (unsigned w = 0; w < CONTAINER_PORTS_SET_WORDS; w++)
            for (unsigned b = 0; b < 64; b++)
                if (set[w] >> b & 1)
                    ck_assert(w * 64 + b == 8000 || w * 64 + b == 80 || w * 64 + b == 65535);
    }
    /* Random bytes: no crash (ASan), and a bounded set. */
    static char noise[4096];
    unsigned seed = 7;
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof(noise); i++) {
            seed = seed * 1103515245u + 12345u;
            static const char alphabet[] = "0123456789ABCDEFa: \n\t";
            noise[i] = round % 2 ? (char)(seed >> 16) : alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
        }
        memset(set, 0, sizeof(set));
        ck_assert_uint_le(container_ports_parse(noise, sizeof(noise), set), sizeof(noise) / 30);
    }
}
END_TEST

/* The mirror's thread starts and ends cleanly with no agent to reach (a
 * VM that went away): nothing is listened on, nothing leaks. */
START_TEST(ports_without_agent)
{
    struct audit a;
    audit_none(&a);
    struct container_ports *p = NULL;
    ck_assert_int_eq(container_ports_start("/nonexistent/agent.sock", &a, &p), 0);
    ck_assert_ptr_nonnull(p);
    usleep(300 * 1000); /* a few tries at the agent */
    container_ports_stop(p);
    container_ports_stop(NULL);
    char longsock[PATH_MAX + 8];
    memset(longsock, 'a', sizeof(longsock) - 1);
    longsock[sizeof(longsock) - 1] = '\0';
    ck_assert_int_eq(container_ports_start(longsock, &a, &p), -ENAMETOOLONG);
}
END_TEST

Suite *oci_runtime_suite(void)
{
    Suite *s = suite_create("oci_runtime");
    TCase *t = tcase_create("config");
    tcase_add_test(t, config_fields);
    tcase_add_test(t, config_refusals);
    tcase_add_test(t, config_not_json);
    tcase_add_test(t, namespace_paths);
    tcase_add_test(t, process_file);
    tcase_add_test(t, resources_file);
    tcase_add_test(t, rlimit_names);
    tcase_add_test(t, port_tables);
    suite_add_tcase(s, t);
    t = tcase_create("host");
    tcase_add_test(t, cgroup_paths);
    tcase_add_test(t, overlay_mountinfo);
    tcase_add_test(t, container_ids);
    tcase_add_test(t, container_status_and_state);
    tcase_add_test(t, update_same_memory);
    tcase_add_test(t, ports_without_agent);
    suite_add_tcase(s, t);
    return s;
}
