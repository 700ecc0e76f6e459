/* EXEC's program found as execvp finds it; see agent.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest/agent/agent.h"

static const char *env_get(const char *const *envp, const char *name)
{
    size_t l = strlen(name);
    for (; envp && *envp; envp++)
        if (strncmp(*envp, name, l) == 0 && (*envp)[l] == '=')
            return *envp + l + 1;
    return NULL;
}

int agent_exec_search(const char *const *argv, const char *const *envp)
{
    char *const *av = (char *const *)argv, *const *ev = (char *const *)envp;
    const char *file = argv[0];
    if (!*file)
        return ENOENT;
    if (strchr(file, '/')) {
        execve(file, av, ev);
        return errno;
    }
    const char *path = env_get(envp, "PATH");
    if (!path)
        path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    int seen_eacces = 0;
    char full[AGENT_MAX_PATH];
    for (const char *p = path;; p++) {
        const char *end = strchrnul(p, ':');
        size_t dl = (size_t)(end - p);
        int n = snprintf(full, sizeof(full), "%.*s%s%s", (int)dl, p, dl ? "/" : "", file);
        if (n > 0 && (size_t)n < sizeof(full)) {
            execve(full, av, ev);
            if (errno == EACCES)
                seen_eacces = 1;
            else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE &&
                     errno != ENODEV && errno != ETIMEDOUT)
                return errno;
        }
        if (!*end)
            break;
        p = end;
    }
    return seen_eacces ? EACCES : ENOENT;
}
