#include "vmm/sandbox/vm_identity.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/image/image_ref.h"
#include "vmm/util/guest_paths.h"

void vm_identity_files(const char *image, unsigned cpus, struct vm_identity *id)
{
    static const char *const what[VM_IDENTITY_FILES] = {"the airlock binary", "the image's disk",
                                                        "the kernel", "the agent's disk"};
    memcpy(id->what, what, sizeof(what));
    ssize_t n = readlink("/proc/self/exe", id->path[0], PATH_MAX - 1);
    id->path[0][n > 0 ? n : 0] = '\0';
    struct image_ref ref;
    char why[512];
    if (image_ref_resolve(image, &ref, why, sizeof(why)))
        snprintf(ref.disk, sizeof(ref.disk), "%s", image); /* the restore says why */
    image_ref_release(&ref);
    snprintf(id->path[1], PATH_MAX, "%s", ref.disk);
    guest_default_kernel(id->path[2], PATH_MAX, cpus);
    guest_default_path(id->path[3], PATH_MAX, IMAGE_AGENT_DISK); /* imported images boot it */
}

int vm_identity_line(const char *path, char *out, size_t cap)
{
    struct stat st;
    int n = stat(path, &st) ? snprintf(out, cap, "%s missing\n", path)
                            : snprintf(out, cap, "%s %lu %lu %lld %lld.%09ld\n", path,
                                       (unsigned long)st.st_dev, (unsigned long)st.st_ino,
                                       (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                                       st.st_mtim.tv_nsec);
    return n < 0 ? 0 : n >= (int)cap ? (int)cap - 1 : n;
}

json_t *vm_identity_json(const struct vm_identity *id)
{
    json_t *o = json_object();
    char line[PATH_MAX + 160];
    for (int i = 0; i < VM_IDENTITY_FILES; i++) {
        int n = vm_identity_line(id->path[i], line, sizeof(line));
        json_object_set_new(o, id->what[i], json_stringn(line, n > 0 ? (size_t)n - 1 : 0));
    }
    return o;
}

int vm_identity_check(const struct vm_identity *id, json_t *saved, char *err, size_t cap)
{
    char line[PATH_MAX + 160];
    for (int i = 0; i < VM_IDENTITY_FILES; i++) {
        int n = vm_identity_line(id->path[i], line, sizeof(line));
        const char *was = json_string_value(json_object_get(saved, id->what[i]));
        if (!was || strlen(was) != (size_t)(n > 0 ? n - 1 : 0) || strncmp(was, line, strlen(was))) {
            snprintf(err, cap, "%s changed since it was paused (%.300s, was %.300s)", id->what[i],
                     id->path[i], was ? was : "not recorded");
            return -1;
        }
    }
    return 0;
}
