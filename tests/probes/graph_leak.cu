// Probe: does memcheck report the last replay's allocation of an
// auto-free-on-launch graph as leaked, whatever the order of frees?
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#define CK(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char* s; cuGetErrorName(r, &s); printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, s); exit(2);} } while (0)
int main(int argc, char** argv) {
  int variant = argc > 1 ? atoi(argv[1]) : 0;
  CK(cuInit(0));
  CUdevice dev; CK(cuDeviceGet(&dev, 0));
  CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  CUstream s; CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUgraph g; CK(cuGraphCreate(&g, 0));
  CUDA_MEM_ALLOC_NODE_PARAMS p = {};
  p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.poolProps.location.id = 0;
  p.bytesize = 4 << 20;
  CUgraphNode an; CK(cuGraphAddMemAllocNode(&an, g, NULL, 0, &p));
  CUdeviceptr ptr = p.dptr;
  CUDA_MEMSET_NODE_PARAMS m = {}; m.dst = ptr; m.value = 0x3f800000; m.elementSize = 4; m.width = 1 << 20; m.height = 1;
  CUgraphNode mn; CK(cuGraphAddMemsetNode(&mn, g, &an, 1, &m, ctx));
  if (variant == 3) { CUgraphNode fn; CK(cuGraphAddMemFreeNode(&fn, g, &mn, 1, ptr)); }
  CUgraphExec e;
  CK(cuGraphInstantiateWithFlags(&e, g, variant == 3 ? 0 : CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
  for (int i = 0; i < 5; i++) CK(cuGraphLaunch(e, s));
  CK(cuStreamSynchronize(s));
  switch (variant) {
    case 0: CK(cuMemFree(ptr)); CK(cuGraphExecDestroy(e)); CK(cuDeviceGraphMemTrim(dev)); break;
    case 1: CK(cuGraphExecDestroy(e)); CK(cuMemFree(ptr)); CK(cuDeviceGraphMemTrim(dev)); break;
    case 2: CK(cuMemFreeAsync(ptr, s)); CK(cuStreamSynchronize(s)); CK(cuGraphExecDestroy(e)); CK(cuDeviceGraphMemTrim(dev)); break;
    case 3: CK(cuGraphExecDestroy(e)); CK(cuDeviceGraphMemTrim(dev)); break;
    case 4: CK(cuMemFree(ptr)); CK(cuGraphExecDestroy(e)); break;
  }
  CK(cuGraphDestroy(g));
  CK(cuStreamDestroy(s));
  CK(cuDevicePrimaryCtxRelease(dev));
  printf("variant %d done\n", variant);
  return 0;
}
