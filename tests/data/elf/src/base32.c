/* Freestanding ELF32 library (no 32-bit libc here) that defines versioned symbols. */
int wf_base_value(void) { return 7; }
int wf_base_twice(int x) { return 2 * x; }
