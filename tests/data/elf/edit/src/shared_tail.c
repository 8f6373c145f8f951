/* Strings the linker tail-merges in .dynstr: the RPATH "tail_of_symbol" is the
   tail of the symbol name "wf_data_tail_of_symbol", and the NEEDED "libz.so.1"
   the tail of the symbol name "wf_helper_libz.so.1". An editor that overwrote
   the RPATH or NEEDED string in place would corrupt those symbol names. */
int wf_data_tail_of_symbol = 1;
int wf_read(void) { return wf_data_tail_of_symbol; }

int wf_helper(void) __asm__("wf_helper_libz.so.1");
int wf_helper(void) { return 7; }

extern const char *zlibVersion(void);
const char *wf_zlib(void) { return zlibVersion(); }
