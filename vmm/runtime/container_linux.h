/* A container's linux settings (oci_config.h's struct oci_linux, its
 * root.readonly and process.oomScoreAdj) as EXEC's linux section
 * (guest/agent/proto.h): the agent applies them when it makes the
 * container, so its first process's request carries them. */
#ifndef AIRLOCK_RUNTIME_CONTAINER_LINUX_H
#define AIRLOCK_RUNTIME_CONTAINER_LINUX_H

#include <stddef.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/runtime/oci_config.h"

/* Adds the section to req (a container's first process: pidns NEW) when
 * c asks anything of it; req's strings point into c. */
void container_linux_section(const struct oci_config *c, struct agent_exec_req *req);
/* At create: whether the section fits the protocol's bounds (each list
 * was bounded by the parse; their bytes together may still not be).
 * 0, or -1 with err. */
int container_linux_check(const struct oci_config *c, char *err, size_t cap);

#endif
