/* vmm/sandbox/record_keeps.c, what a paused sandbox's record keeps of its
 * published ports and background commands: written and read back the
 * same; an older record without them; and every hostile entry (ports 0
 * and 70000, an address that does not parse, too many entries, wrong
 * types, unknown members, a command's record whose info or exit is not
 * what the daemon writes) refused naming the entry and its member. */
#include <string.h>

#include "tests/unit/helpers.h"
#include "vmm/sandbox/record_keeps.h"

static struct forward_spec ports[FORWARD_MAX_PORTS];
static struct bg_saved cmds[BG_MAX];
static char err[300];

START_TEST(ports_round_trip)
{
    struct forward_info in[2] = {{.spec = {"127.0.0.1", 41234, 8000}},
                                 {.spec = {"::1", 1, 65535}}};
    json_t *a = record_ports_json(in, 2);
    size_t n = 99;
    ck_assert_int_eq(record_ports_parse(a, ports, &n, err, sizeof(err)), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(ports[0].host_ip, "127.0.0.1");
    ck_assert_uint_eq(ports[0].host_port, 41234);
    ck_assert_uint_eq(ports[0].guest_port, 8000);
    ck_assert_str_eq(ports[1].host_ip, "::1");
    ck_assert_uint_eq(ports[1].guest_port, 65535);
    json_decref(a);
    /* a record from before them */
    ck_assert_int_eq(record_ports_parse(NULL, ports, &n, err, sizeof(err)), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(record_commands_parse(NULL, cmds, &n, err, sizeof(err)), 0);
    ck_assert_uint_eq(n, 0);
}
END_TEST

/* The ports list `text` refused, err holding `want`. */
static void ports_refused(const char *text, const char *want)
{
    json_t *a = json_loads(text, JSON_DECODE_ANY, NULL);
    ck_assert_msg(a != NULL, "bad test JSON: %s", text);
    size_t n = 0;
    err[0] = '\0';
    ck_assert_msg(record_ports_parse(a, ports, &n, err, sizeof(err)) == -1, "took %s", text);
    ck_assert_msg(strstr(err, want) != NULL, "%s: said '%s', want '%s'", text, err, want);
    ck_assert(!strchr(err, '\n'));
    json_decref(a);
}

START_TEST(ports_hostile)
{
    ports_refused("[{\"guest_port\":8000,\"host_ip\":\"127.0.0.1\",\"host_port\":0}]",
                  "ports[0].host_port: 0 is not a port, want 1..65535");
    ports_refused("[{\"guest_port\":70000,\"host_ip\":\"127.0.0.1\",\"host_port\":1}]",
                  "ports[0].guest_port: 70000 is not a port");
    ports_refused("[{\"guest_port\":0,\"host_ip\":\"127.0.0.1\",\"host_port\":1}]",
                  "ports[0].guest_port: 0 is not a port");
    ports_refused("[{\"guest_port\":1,\"host_ip\":\"127.0.0.1\",\"host_port\":-1}]",
                  "ports[0].host_port: -1");
    ports_refused("[{\"guest_port\":1,\"host_ip\":\"127.0.0.1\",\"host_port\":4294967297}]",
                  "ports[0].host_port: 4294967297");
    ports_refused("[{\"guest_port\":1,\"host_ip\":\"999.0.0.1\",\"host_port\":1}]",
                  "ports[0].host_ip: '999.0.0.1' is not an IP address");
    ports_refused("[{\"guest_port\":1,\"host_ip\":\"\",\"host_port\":1}]", "ports[0].host_ip: empty");
    ports_refused("[{\"guest_port\":1,\"host_ip\":\"localhost\",\"host_port\":1}]",
                  "ports[0].host_ip");
    ports_refused("[{\"guest_port\":\"80\",\"host_ip\":\"127.0.0.1\",\"host_port\":1}]",
                  "ports[0].guest_port: missing, unknown or of the wrong type");
    ports_refused("[{\"guest_port\":80.0,\"host_ip\":\"127.0.0.1\",\"host_port\":1}]",
                  "ports[0].guest_port: missing");
    ports_refused("[{\"guest_port\":80,\"host_port\":1}]", "ports[0].host_ip: missing");
    ports_refused("[{\"guest_port\":80,\"host_ip\":\"127.0.0.1\",\"host_port\":1,\"x\":1}]",
                  "ports[0].x: missing, unknown");
    ports_refused("[8000]", "ports[0]: missing, unknown or of the wrong type");
    ports_refused("\"8000:80\"", "ports: want a list of at most 64 ports");
    ports_refused("{}", "ports: want a list");
    ports_refused("[{\"guest_port\":1,\"host_ip\":\"127.0.0.1\",\"host_port\":1},"
                  "{\"guest_port\":1,\"host_ip\":\"127.0.0.1\",\"host_port\":2}]",
                  "ports[1].guest_port: 1 is in the list twice");
    /* 10 000 entries, each fine on its own */
    json_t *a = json_array();
    for (int i = 0; i < 10000; i++)
        json_array_append_new(a, json_pack("{s:i,s:s,s:i}", "guest_port", i % 65535 + 1,
                                           "host_ip", "127.0.0.1", "host_port", 1));
    size_t n = 0;
    ck_assert_int_eq(record_ports_parse(a, ports, &n, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "at most 64"));
    ck_assert_uint_eq(n, 0);
    json_decref(a);
}
END_TEST

static const char *RUNNING =
    "{\"id\":\"3\",\"info\":{\"argv\":[\"python3\",\"-i\"],\"env\":{\"A\":\"b\"},\"cwd\":\"/tmp\","
    "\"tag\":\"t\",\"id\":\"3\",\"started_ms\":5,\"pid\":77,\"output_lost\":0},\"exit\":null,"
    "\"output_bytes\":10,\"pid\":77,\"tty\":false,\"stdin_open\":true,\"timeout_ms\":3600000,"
    "\"max_output\":1073741824,\"buffer\":1048576}";
static const char *ENDED =
    "{\"id\":\"12\",\"info\":{\"cmd\":\"top\",\"pty\":{\"cols\":80,\"rows\":24},\"id\":\"12\","
    "\"started_ms\":5,\"pid\":78},\"exit\":{\"type\":\"exit\",\"exit_code\":137,\"signal\":9,"
    "\"error\":null,\"timed_out\":false,\"output_truncated\":false,\"duration_ms\":100},"
    "\"output_bytes\":0,\"pid\":78,\"tty\":true,\"stdin_open\":false,\"timeout_ms\":0,"
    "\"max_output\":0,\"buffer\":65536}";

START_TEST(commands_round_trip)
{
    char text[4096];
    snprintf(text, sizeof(text), "[%s,%s]", RUNNING, ENDED);
    json_t *a = json_loads(text, 0, NULL);
    size_t n = 0;
    ck_assert_int_eq(record_commands_parse(a, cmds, &n, err, sizeof(err)), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(cmds[0].id, "3");
    ck_assert_ptr_null(cmds[0].exit);
    ck_assert_uint_eq(cmds[0].output_bytes, 10);
    ck_assert_uint_eq(cmds[0].pid, 77);
    ck_assert(cmds[0].stdin_open && !cmds[0].tty);
    ck_assert_uint_eq(cmds[0].timeout_ms, 3600000);
    ck_assert_uint_eq(cmds[1].buffer, 65536);
    ck_assert(cmds[1].tty);
    ck_assert_int_eq(json_integer_value(json_object_get(cmds[1].exit, "exit_code")), 137);
    /* written again: the same text */
    json_t *b = record_commands_json(cmds, n);
    ck_assert(json_equal(a, b));
    json_decref(b);
    json_decref(a);
}
END_TEST

/* RUNNING with `from` replaced by `to` refused, err holding `want`. */
static void command_refused(const char *from, const char *to, const char *want)
{
    char text[4096];
    const char *at = strstr(RUNNING, from);
    ck_assert_msg(at != NULL, "no '%s' in the sample", from);
    snprintf(text, sizeof(text), "[%.*s%s%s]", (int)(at - RUNNING), RUNNING, to,
             at + strlen(from));
    json_t *a = json_loads(text, 0, NULL);
    ck_assert_msg(a != NULL, "bad test JSON: %s", text);
    size_t n = 0;
    err[0] = '\0';
    ck_assert_msg(record_commands_parse(a, cmds, &n, err, sizeof(err)) == -1, "took %s", text);
    ck_assert_msg(strstr(err, want) != NULL, "%s -> %s: said '%s', want '%s'", from, to, err,
                  want);
    json_decref(a);
}

START_TEST(commands_hostile)
{
    command_refused("\"pid\":77,\"tty\"", "\"pid\":\"77\",\"tty\"",
                    "commands[0].pid: missing, unknown or of the wrong type");
    command_refused("\"pid\":77,\"tty\"", "\"pid\":4194305,\"tty\"", "commands[0].pid: out of");
    command_refused("\"output_bytes\":10", "\"output_bytes\":-1", "commands[0].output_bytes");
    command_refused("\"buffer\":1048576", "\"buffer\":1", "commands[0].buffer: out of");
    command_refused("\"buffer\":1048576", "\"buffer\":1048576,\"evil\":1", "commands[0].evil");
    command_refused("\"timeout_ms\":3600000", "\"timeout_ms\":4294967296", "commands[0].timeout_ms");
    command_refused("\"max_output\":1073741824", "\"max_output\":-5", "commands[0].max_output");
    command_refused("{\"id\":\"3\",\"info\"", "{\"id\":\"03\",\"info\"", "commands[0].id");
    command_refused("{\"id\":\"3\",\"info\"", "{\"id\":\"3/..\",\"info\"", "commands[0].id");
    command_refused("{\"id\":\"3\",\"info\"", "{\"id\":\"4294967296\",\"info\"", "commands[0].id");
    command_refused("\"stdin_open\":true", "\"stdin_open\":1", "commands[0].stdin_open");
    command_refused("\"exit\":null", "\"exit\":\"137\"", "commands[0].exit");
    command_refused("\"exit\":null", "\"exit\":{\"type\":\"exit\"}", "commands[0].exit");
    command_refused("\"argv\":[\"python3\",\"-i\"]", "\"argv\":[1]", "commands[0].info.argv");
    command_refused("\"argv\":[\"python3\",\"-i\"]", "\"argv\":[]", "commands[0].info.argv");
    command_refused("\"argv\":[\"python3\",\"-i\"]", "\"argv\":[\"a\"],\"cmd\":\"b\"",
                    "commands[0].info: not what"); /* both: the info as a whole */
    command_refused("\"env\":{\"A\":\"b\"}", "\"env\":{\"A\":1}", "commands[0].info.env");
    command_refused("\"pid\":77,\"output_lost\"", "\"pid\":76,\"output_lost\"",
                    "commands[0].info.pid");
    command_refused("\"output_lost\":0", "\"output_lost\":0,\"pty\":{\"cols\":80,\"rows\":24}",
                    "commands[0].info.pty"); /* a terminal's size without tty */
    command_refused("\"output_lost\":0", "\"output_lost\":0,\"user\":\"0\"",
                    "commands[0].info.user");
    command_refused("\"tag\":\"t\",\"id\":\"3\"", "\"tag\":\"t\",\"id\":\"4\"", "commands[0].info.id");
    command_refused("\"info\":{", "\"info\":[],\"x\":{", "commands[0].x: missing, unknown");
    command_refused("\"info\":{\"argv\":[\"python3\",\"-i\"],\"env\":{\"A\":\"b\"},\"cwd\":\"/tmp\","
                    "\"tag\":\"t\",\"id\":\"3\",\"started_ms\":5,\"pid\":77,\"output_lost\":0}",
                    "\"info\":[]", "commands[0].info: missing, unknown or of the wrong type");

    json_t *a = json_array();
    for (int i = 0; i < 10000; i++)
        json_array_append_new(a, json_integer(1));
    size_t n = 0;
    ck_assert_int_eq(record_commands_parse(a, cmds, &n, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "commands: want a list of at most 32"));
    json_decref(a);
    /* twice the same id; buffers past the sandbox's budget together */
    char text[8192];
    snprintf(text, sizeof(text), "[%s,%s]", RUNNING, RUNNING);
    a = json_loads(text, 0, NULL);
    ck_assert_int_eq(record_commands_parse(a, cmds, &n, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "commands[1].id: 3 is in the list twice"));
    json_decref(a);
    a = json_array();
    for (int i = 0; i < 5; i++) {
        json_t *c = json_loads(RUNNING, 0, NULL);
        char id[8];
        snprintf(id, sizeof(id), "%d", i + 1);
        json_object_set_new(c, "id", json_string(id));
        json_object_set_new(json_object_get(c, "info"), "id", json_string(id));
        json_object_set_new(c, "buffer", json_integer(BG_BUFFER_MAX));
        json_array_append_new(a, c);
    }
    ck_assert_int_eq(record_commands_parse(a, cmds, &n, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "commands[4].buffer: the buffers pass 64 MiB"));
    json_decref(a);
}
END_TEST

Suite *record_keeps_suite(void)
{
    Suite *s = suite_create("record_keeps");
    TCase *tc = tcase_create("record_keeps");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, ports_round_trip);
    tcase_add_test(tc, ports_hostile);
    tcase_add_test(tc, commands_round_trip);
    tcase_add_test(tc, commands_hostile);
    suite_add_tcase(s, tc);
    return s;
}
