// Probe: what a forked child sees of memory CUDA allocated in the parent.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#define CK(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char* s; cuGetErrorName(r, &s); printf("%s -> %s\n", #x, s); exit(2);} } while (0)
static void child_test(const char* what, volatile unsigned char* p) {
  pid_t pid = fork();
  if (pid == 0) { unsigned s = 0; for (int i = 0; i < 4096; i++) s += p[i]; printf("child read %s: ok sum %u\n", what, s); fflush(stdout);
    p[0] = 7; printf("child wrote %s: ok\n", what); fflush(stdout); _exit(0); }
  int st; waitpid(pid, &st, 0);
  if (WIFSIGNALED(st)) printf("child on %s: killed by signal %d\n", what, WTERMSIG(st));
  else printf("child on %s: exit %d\n", what, WEXITSTATUS(st));
}
int main() {
  CK(cuInit(0));
  CUdevice dev; CK(cuDeviceGet(&dev, 0));
  CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  void* pinned; CK(cuMemHostAlloc(&pinned, 1 << 20, 0)); memset(pinned, 1, 1 << 20);
  void* mapped; CK(cuMemHostAlloc(&mapped, 1 << 20, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE)); memset(mapped, 1, 1 << 20);
  CUdeviceptr managed; CK(cuMemAllocManaged(&managed, 1 << 20, CU_MEM_ATTACH_GLOBAL)); memset((void*)managed, 1, 1 << 20);
  void* reg = aligned_alloc(4096, 1 << 20); memset(reg, 1, 1 << 20); CK(cuMemHostRegister(reg, 1 << 20, 0));
  child_test("cuMemHostAlloc", (unsigned char*)pinned);
  child_test("cuMemHostAlloc mapped", (unsigned char*)mapped);
  child_test("cuMemAllocManaged", (unsigned char*)managed);
  child_test("cuMemHostRegister", (unsigned char*)reg);
  pid_t pid = fork();
  if (pid == 0) {
    CUcontext cur = 0; CUresult r = cuCtxGetCurrent(&cur); printf("child cuCtxGetCurrent -> %d (ctx %p)\n", r, cur);
    r = cuInit(0); printf("child cuInit -> %d\n", r);
    CUdeviceptr d; r = cuMemAlloc(&d, 1024); printf("child cuMemAlloc -> %d\n", r); fflush(stdout); _exit(0);
  }
  int st; waitpid(pid, &st, 0); printf("driver child: %s %d\n", WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  printf("parent pinned[0]=%d managed[0]=%d\n", ((unsigned char*)pinned)[0], ((unsigned char*)managed)[0]);
  return 0;
}
