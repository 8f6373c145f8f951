/* An unversioned library linked against zlib, for RUNPATH and DT_HASH. */
extern const char *zlibVersion(void);
const char *wf_zlib_version(void) { return zlibVersion(); }
