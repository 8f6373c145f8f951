/* A non-PIE executable: `environ` is copy-relocated, so it is a defined dynamic
   symbol that carries a verneed version (GLIBC_2.2.5). */
extern char **environ;
int main(void) { return environ == 0; }
