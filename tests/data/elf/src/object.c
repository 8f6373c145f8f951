/* An object file: no program headers, no dynamic section. */
int wf_object_function(int x) { return x + 1; }
