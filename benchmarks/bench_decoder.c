/* bench_decoder — placeholder until the benchmark lands (see docs/decoder.md). */
#include <stdio.h>
int main(void)
{
    fprintf(stderr, "bench_decoder: not yet implemented\n");
    return 0;
}
