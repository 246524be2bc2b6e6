/*
 * prog_dlopen.c - loads libext.so (argv[1]) with dlopen(RTLD_NOW |
 * RTLD_LOCAL) and calls its ext_run(): the PyTorch situation, where cuBLAS is
 * reachable only from the object that was loaded locally.  The program itself
 * links no CUDA library.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s /path/to/libext.so\n", argv[0]);
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    int (*run)(void) = (int (*)(void))dlsym(h, "ext_run");
    if (!run) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        return 2;
    }
    int rc = run();
    printf("ext_run returned %d\n", rc);
    fflush(stdout);
    return rc;
}
