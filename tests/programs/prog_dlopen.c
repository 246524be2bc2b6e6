/*
 * prog_dlopen.c - loads libext.so (argv[1]) with dlopen(RTLD_NOW |
 * RTLD_LOCAL) and calls its ext_run(): the PyTorch situation, where cuBLAS is
 * reachable only from the object that was loaded locally.  The program itself
 * links no CUDA library.
 *
 * With a second object (a copy of libext.so under another name), the first is
 * unloaded after its run and the second loaded and run: where the loader puts
 * it at the first one's base, its call to cuBLAS comes from the very address
 * the first one's did, and the program says whether it did, and whether the
 * loader's record of the second one's name (link_map l_name) took the memory
 * the first one's had: a name of the same length gets the freed block back.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

/* Load PATH, run its ext_run; its base in *base and the loader's copy of
 * its name in *name.  -1 when it cannot. */
static int load_and_run(const char *path, void **handle, void **base, const char **name)
{
    *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*handle) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return -1;
    }
    int (*run)(void) = (int (*)(void))dlsym(*handle, "ext_run");
    Dl_info info;
    if (!run || !dladdr((void *)run, &info)) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        return -1;
    }
    *base = info.dli_fbase;
    struct link_map *map = NULL;
    *name = dlinfo(*handle, RTLD_DI_LINKMAP, &map) == 0 && map ? map->l_name : NULL;
    int rc = run();
    printf("ext_run returned %d\n", rc);
    fflush(stdout);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s /path/to/libext.so [/path/to/a/copy.so]\n", argv[0]);
        return 2;
    }
    void *h, *first_base = NULL, *second_base = NULL;
    const char *first_name = NULL, *second_name = NULL;
    int rc = load_and_run(argv[1], &h, &first_base, &first_name);
    if (rc != 0 || argc < 3)
        return rc < 0 ? 2 : rc;
    if (dlclose(h) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 2;
    }
    rc = load_and_run(argv[2], &h, &second_base, &second_name);
    if (rc < 0)
        return 2;
    printf("second object at %s base\n", second_base == first_base ? "the first one's" : "another");
    printf("second name at %s address\n", second_name && second_name == first_name ? "the first one's" : "another");
    return rc;
}
