/* --image values to disks; see image_ref.h. */
#include "vmm/image/image_ref.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/guest_paths.h"

static const struct {
    const char *name, *file;
} builtins[] = {{"python", "python.ext4"}, {"small", "rootfs.ext4"}};

static const char *builtin_file(const char *name)
{
    for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
        if (!strcmp(name, builtins[i].name))
            return builtins[i].file;
    return NULL;
}

bool image_is_builtin(const char *name)
{
    return builtin_file(name) != NULL;
}

json_t *image_builtin_record(const char *name)
{
    const char *file = builtin_file(name);
    if (!file)
        return NULL;
    char disk[PATH_MAX];
    struct stat st;
    guest_default_path(disk, sizeof(disk), file);
    return json_pack("{s:s, s:b, s:s, s:I}", "name", name, "builtin", 1, "disk", disk, "bytes",
                     (json_int_t)(stat(disk, &st) ? 0 : st.st_size));
}

int image_ref_resolve(const char *image, struct image_ref *ref, char *err, size_t cap)
{
    memset(ref, 0, sizeof(*ref));
    if (!image)
        image = "python";
    snprintf(ref->name, sizeof(ref->name), "%s", image);
    const char *file = builtin_file(image);
    if (file) {
        guest_default_path(ref->disk, sizeof(ref->disk), file);
        ref->own_agent = true;
        return 0;
    }
    struct image_store st;
    char why[512];
    if (!strchr(image, '/') && image_name_ok(image) && !image_store_open(&st, why, sizeof(why)) &&
        (ref->rec = image_store_get(&st, image, why, sizeof(why)))) {
        const char *disk = json_string_value(json_object_get(ref->rec, "disk"));
        if (!disk || snprintf(ref->disk, sizeof(ref->disk), "%s", disk) >= (int)sizeof(ref->disk)) {
            image_ref_release(ref);
            return snprintf(err, cap, "--image '%.128s': a broken store record (no disk)", image),
                   -1;
        }
        return 0;
    }
    if (strchr(image, '/') || access(image, F_OK) == 0) {
        if (snprintf(ref->disk, sizeof(ref->disk), "%s", image) >= (int)sizeof(ref->disk))
            return snprintf(err, cap, "--image: path too long"), -1;
        ref->own_agent = true;
        return 0;
    }
    return snprintf(err, cap, "--image '%.128s': no such image (python, small, a name "
                              "`airlock image ls` lists, or a disk file's path)", image), -1;
}

void image_ref_release(struct image_ref *ref)
{
    json_decref(ref->rec);
    ref->rec = NULL;
}

int image_ref_bare_disk(const char *path, struct image_ref *ref, char *err, size_t cap)
{
    memset(ref, 0, sizeof(*ref));
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return snprintf(err, cap, "--root-disk %.300s: not a disk file", path), -1;
    if (snprintf(ref->disk, sizeof(ref->disk), "%s", path) >= (int)sizeof(ref->disk))
        return snprintf(err, cap, "--root-disk: path too long"), -1;
    snprintf(ref->name, sizeof(ref->name), "root-disk");
    return 0;
}
