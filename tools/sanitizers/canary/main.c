// The C half of the sanitizer canary (tools/sanitizers/canary.sh).
// usage: canary overflow|leak
#include <stdint.h>
#include <stdio.h>
#include <string.h>

uint8_t sanitizer_canary_overflow(size_t index);
void sanitizer_canary_leak(void);

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "overflow") == 0) {
    printf("%d\n", sanitizer_canary_overflow(8));
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "leak") == 0) {
    sanitizer_canary_leak();
    return 0;
  }
  fprintf(stderr, "usage: %s overflow|leak\n", argv[0]);
  return 2;
}
