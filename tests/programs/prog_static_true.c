/* prog_static_true.c - a statically linked program that ends at once: no
 * dynamic loader, so no preload and no trace (tests/cli_short_process.sh:
 * listed in static_processes, not counted). */
int main(void)
{
    return 0;
}
