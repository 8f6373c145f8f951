/* libwfapp.so: needs libwfdep (NEEDED by its old SONAME libwfdep.so.1). */
int wf_dep_value(void);
int wf_app_value(void) { return wf_dep_value() + 2; }
