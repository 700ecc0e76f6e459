/* The program of tests/boot/linux-image's images, built static (glibc)
 * and dynamic against musl: what an image's config gave the command, on
 * one line the test matches, then each argument.  "write PATH" also
 * writes PATH, to show the root is writable and the write stays in the
 * VM. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char cwd[4096];
    const char *g = getenv("GREETING"), *path = getenv("PATH");
    printf("cwd=%s uid=%u gid=%u GREETING=%s PATH=%s\n", getcwd(cwd, sizeof(cwd)) ? cwd : "?",
           (unsigned)getuid(), (unsigned)getgid(), g ? g : "", path ? path : "");
    for (int i = 1; i < argc; i++)
        printf("arg=%s\n", argv[i]);
    if (argc == 3 && !strcmp(argv[1], "write")) {
        FILE *f = fopen(argv[2], "w");
        if (!f || fputs("written\n", f) < 0 || fclose(f)) {
            perror(argv[2]);
            return 1;
        }
        puts("wrote");
    }
    return 0;
}
