/* libwfdep: built with SONAME libwfdep.so.1, shipped as libwfdep.so.2. */
int wf_dep_value(void) { return 40; }
