/* A shared object an attacker would put in a package: its ELF constructor
   runs the moment a dynamic loader maps it, before any function of it is
   called, and leaves a visible trace (the file named by $IPU_TEST_MARKER). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void attack(void) {
  const char *marker = getenv("IPU_TEST_MARKER");
  if (!marker)
    return;
  int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0) {
    (void)write(fd, "constructor ran\n", 16);
    close(fd);
  }
}

/* Exported under the names ipu-run's kernels have had. */
void ipu_kernel_0(unsigned char *const *operands, const long *params) {}
