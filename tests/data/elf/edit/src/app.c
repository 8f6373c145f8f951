/* The program of the relink fixtures: prints the value its library computes
   with the help of the library's own dependency (40 + 2). */
#include <stdio.h>

int wf_app_value(void);

int main(void) {
    printf("wheelfix-edit-app %d\n", wf_app_value());
    return wf_app_value() == 42 ? 0 : 1;
}
