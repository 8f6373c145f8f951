/* A library with symbol versions: wf_api has an old hidden version and a new
   default one; wf_copy needs memcpy (GLIBC_2.14 on x86_64, GLIBC_2.17 on aarch64)
   and wf_hypot needs sqrt from libm. */
#include <math.h>
#include <string.h>

double wf_hypot(double a, double b) { return sqrt(a * a + b * b); }

void *wf_copy(void *dst, const void *src, size_t n) { return memcpy(dst, src, n); }

int wf_api_old(void) { return 1; }
int wf_api_new(void) { return 2; }
__asm__(".symver wf_api_old, wf_api@VERS_1.0");
__asm__(".symver wf_api_new, wf_api@@VERS_2.0");

int wf_counter = 42;
