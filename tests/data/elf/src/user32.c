/* Freestanding ELF32 library that needs versioned symbols of libwfbase32. */
extern int wf_base_value(void);
extern int wf_base_twice(int);
int wf_user(void) { return wf_base_twice(wf_base_value()); }
