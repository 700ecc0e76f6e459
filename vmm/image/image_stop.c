/* An import stopped by a signal; see image_stop.h. */
#include "vmm/image/image_stop.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t stop_sig;
static volatile pid_t child;

static void on_signal(int sig)
{
    stop_sig = sig;
    pid_t c = child;
    if (c > 0)
        kill(c, SIGKILL);
}

void image_stop_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
}

int image_stopped(void)
{
    return stop_sig;
}

void image_stop_child(pid_t pid)
{
    child = pid;
}

void image_stop_die(void)
{
    int sig = stop_sig;
    if (!sig)
        return;
    signal(sig, SIG_DFL);
    raise(sig);
}
