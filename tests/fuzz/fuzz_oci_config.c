/* libFuzzer target: what airlock-runtime reads from its caller, which it
 * must refuse cleanly whatever it is: config.json, process.json (exec
 * --process) and update's resources (vmm/runtime/oci_config.c).  Byte 0
 * chooses the reader; the rest is the document.  Whatever is accepted
 * must hold what the runtime relies on, the annotations that make a pod
 * (vmm/runtime/pod_role.c) included. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/runtime/container_linux.h"
#include "vmm/runtime/oci_config.h"
#include "vmm/runtime/pod.h"

static void check_process(const struct oci_process *p)
{
    assert(p->nargs >= 1 && p->args[0][0] && !p->args[p->nargs]);
    assert(p->cwd && p->cwd[0] == '/');
    assert(p->ngroups <= OCI_MAX_GROUPS && p->nrlimits <= OCI_MAX_RLIMITS);
    for (unsigned i = 0; i < p->nenv; i++)
        assert(strchr(p->env[i], '=') && p->env[i][0] != '=');
    for (unsigned i = 0; i < p->nrlimits; i++)
        assert(p->rlimits[i].soft <= p->rlimits[i].hard && p->rlimits[i].resource >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    if (size < 1)
        return 0;
    const char *doc = (const char *)data + 1;
    size_t len = size - 1;
    switch (data[0] % 3) {
    case 0: {
        struct oci_config c;
        if (!oci_config_parse(doc, len, &c, err, sizeof(err))) {
            assert(c.root && c.nmounts <= OCI_MAX_MOUNTS);
            if (c.has_process)
                check_process(&c.process);
            for (int k = 0; k < OCI_HOOK_KINDS; k++)
                for (unsigned i = 0; i < c.nhooks[k]; i++)
                    assert(c.hooks[k][i].path[0] == '/');
            /* the linux settings: each within its bound, and all of
             * them either fitting the agent's section or refused */
            assert(c.linux_view.nmasked <= OCI_MAX_LINUX_LIST &&
                   c.linux_view.ndevices <= OCI_MAX_LINUX_LIST);
            for (unsigned i = 0; i < c.linux_view.ndevices; i++)
                assert(c.linux_view.devices[i].path[0] == '/' &&
                       c.linux_view.devices[i].mode <= 07777);
            (void)container_linux_check(&c, err, sizeof(err));
            /* the annotations that make a pod, and its VM's size */
            const char *sid;
            unsigned mem = 256, cpus = 1;
            int role = pod_role_of(&c, &sid, err, sizeof(err));
            assert(role >= -1 && role <= POD_MEMBER && (role == POD_MEMBER) == (sid != NULL));
            if (role == POD_SANDBOX && !pod_vm_shape(&c, &mem, &cpus, err, sizeof(err)))
                assert(mem >= 128 && cpus >= 1 && cpus <= 16);
            oci_config_free(&c);
        } else {
            assert(err[0] && !c.doc);
        }
        break;
    }
    case 1: {
        json_t *j;
        struct oci_process p;
        if (!oci_process_parse(doc, len, &j, &p, err, sizeof(err))) {
            check_process(&p);
            oci_process_free(&p);
            json_decref(j);
        }
        break;
    }
    default: {
        struct oci_config c;
        memset(&c, 0, sizeof(c));
        oci_resources_parse(doc, len, &c, err, sizeof(err));
        break;
    }
    }
    return 0;
}
