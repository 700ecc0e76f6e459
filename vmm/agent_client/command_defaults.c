#include "vmm/agent_client/command_defaults.h"

const char *const command_default_env[COMMAND_DEFAULT_ENVS] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME=/tmp",
    "http_proxy=http://127.0.0.1:3128",  "https_proxy=http://127.0.0.1:3128",
    "HTTP_PROXY=http://127.0.0.1:3128",  "HTTPS_PROXY=http://127.0.0.1:3128",
    "no_proxy=localhost,127.0.0.1,::1",  "NO_PROXY=localhost,127.0.0.1,::1",
};
