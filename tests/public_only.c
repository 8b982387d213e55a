/* public_only.c — must NOT compile: it includes a component's private header (PRIVATE_HEADER,
 * defined by fastsmt_private_headers in the top CMakeLists.txt) while linked with the component's
 * library only, as a tool or benchmark is. The test passes when the compiler cannot find it. */
#include PRIVATE_HEADER

int main(void) { return 0; }
