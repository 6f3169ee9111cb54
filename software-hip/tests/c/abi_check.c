// Drives libamdhip64.so from C, compiled against the HIP 6 headers IREE uses, the way a
// HIP driver does: designated-initializer structs, by-value dim3, output pointers.
#define __HIP_PLATFORM_AMD__
#include <hip/hip_runtime_api.h>
#include <hip/hip_deprecated.h>
#include "software_hip.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    hipError_t status_ = (call);                                                 \
    if (status_ != hipSuccess) {                                                 \
      fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #call,             \
              hipGetErrorName(status_));                                         \
      return 1;                                                                  \
    }                                                                            \
  } while (0)
#define EXPECT(condition)                                                        \
  do {                                                                           \
    if (!(condition)) {                                                          \
      fprintf(stderr, "%s:%d expected %s\n", __FILE__, __LINE__, #condition);    \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

static void bump(void* user_data) { ++*(int*)user_data; }

int main(void) {
  CHECK(hipInit(0));
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  EXPECT(count == 2);

  hipDeviceProp_tR0000 props;
  memset(&props, 0, sizeof(props));
  CHECK(hipGetDevicePropertiesR0000(&props, 1));
  EXPECT(strcmp(props.name, "Software HIP Device 1") == 0);
  EXPECT(strcmp(props.gcnArchName, "gfx942:sramecc+:xnack-") == 0);
  EXPECT(props.warpSize == 64 && props.maxThreadsPerBlock == 1024);
  EXPECT(props.sharedMemPerBlock == 65536 && props.major == 9 && props.minor == 4);
  EXPECT(props.managedMemory == 1 && props.pageableMemoryAccessUsesHostPageTables == 1);

  hipUUID uuid;
  CHECK(hipDeviceGetUuid(&uuid, 0));
  EXPECT(memcmp(uuid.bytes, "softhip-dev-0000", 16) == 0);

  hipCtx_t context = NULL;
  CHECK(hipDevicePrimaryCtxRetain(&context, 0));
  CHECK(hipCtxSetCurrent(context));

  hipStream_t stream = NULL;
  CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
  void* a = NULL;
  void* b = NULL;
  CHECK(hipMalloc(&a, 1024));
  CHECK(hipMallocAsync(&b, 1024, stream));
  CHECK(hipMemsetD32Async(a, 0x01020304, 256, stream));

  // A graph like IREE's: memset node, then a device-to-device HIP_MEMCPY3D node.
  hipGraph_t graph = NULL;
  CHECK(hipGraphCreate(&graph, 0));
  hipMemsetParams fill = {.dst = b, .elementSize = 1, .height = 1, .pitch = 0, .value = 0x7f, .width = 1024};
  hipGraphNode_t fill_node = NULL;
  CHECK(hipGraphAddMemsetNode(&fill_node, graph, NULL, 0, &fill));
  HIP_MEMCPY3D copy = {
      .srcMemoryType = hipMemoryTypeDevice,
      .srcDevice = a,
      .srcXInBytes = 16,
      .dstMemoryType = hipMemoryTypeDevice,
      .dstDevice = b,
      .dstXInBytes = 8,
      .WidthInBytes = 8,
      .Height = 1,
      .Depth = 1,
  };
  hipGraphNode_t copy_node = NULL;
  CHECK(hipDrvGraphAddMemcpyNode(&copy_node, graph, &fill_node, 1, &copy, context));
  hipGraphExec_t exec = NULL;
  CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
  CHECK(hipGraphLaunch(exec, stream));
  int callbacks = 0;
  CHECK(hipLaunchHostFunc(stream, bump, &callbacks));
  hipEvent_t done = NULL;
  CHECK(hipEventCreateWithFlags(&done, hipEventDisableTiming));
  CHECK(hipEventRecord(done, stream));
  CHECK(hipEventSynchronize(done));
  EXPECT(callbacks == 1);

  unsigned char host[24];
  CHECK(hipMemcpy(host, b, sizeof(host), hipMemcpyDeviceToHost));
  for (int i = 0; i < 8; ++i) EXPECT(host[i] == 0x7f);
  EXPECT(host[8] == 0x04 && host[9] == 0x03 && host[10] == 0x02 && host[11] == 0x01);
  EXPECT(host[16] == 0x7f);

  // By-value dim3 through the C calling convention: an unknown function is rejected.
  dim3 one = {1, 1, 1};
  EXPECT(hipLaunchKernel((const void*)0x1234, one, one, NULL, 0, stream) == hipErrorInvalidDeviceFunction);
  EXPECT(hipGetLastError() == hipErrorInvalidDeviceFunction);
  EXPECT(strcmp(hipGetErrorString(hipErrorNotReady), "device not ready") == 0);

  hipMemPool_t pool = NULL;
  hipMemPoolProps pool_props = {.allocType = hipMemAllocationTypePinned, .location = {.type = hipMemLocationTypeDevice, .id = 0}};
  CHECK(hipMemPoolCreate(&pool, &pool_props));
  uint64_t threshold = UINT64_MAX;
  CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &threshold));
  void* pooled = NULL;
  CHECK(hipMallocFromPoolAsync(&pooled, 4096, pool, stream));
  CHECK(hipFreeAsync(pooled, stream));
  CHECK(hipStreamSynchronize(stream));
  uint64_t reserved = 0;
  CHECK(hipMemPoolGetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &reserved));
  EXPECT(reserved == 4096);
  CHECK(hipMemPoolTrimTo(pool, 0));
  CHECK(hipMemPoolGetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &reserved));
  EXPECT(reserved == 0);
  CHECK(hipMemPoolDestroy(pool));

  // Stream memory operations through the C prototypes: 32- and 64-bit values and masks.
  int can_wait = 0;
  CHECK(hipDeviceGetAttribute(&can_wait, hipDeviceAttributeCanUseStreamWaitValue, 0));
  EXPECT(can_wait == 1);
  uint64_t* signal = NULL;
  CHECK(hipHostMalloc((void**)&signal, 2 * sizeof(uint64_t), 0));
  signal[0] = 0;
  signal[1] = 0;
  uint32_t* signal32 = (uint32_t*)&signal[1];
  CHECK(hipStreamWriteValue64(stream, &signal[0], 0x100000005ull, 0));
  CHECK(hipStreamWaitValue64(stream, &signal[0], 0x100000000ull, hipStreamWaitValueEq, 0xffffffff00000000ull));
  CHECK(hipStreamWriteValue32(stream, &signal32[1], 0x80000007u, 0));
  CHECK(hipStreamWaitValue32(stream, &signal32[1], 0x80000000u, hipStreamWaitValueGte, 0xffffffffu));
  EXPECT(hipStreamWaitValue32(stream, signal32, 0, 4, 0xffffffffu) == hipErrorInvalidValue);
  EXPECT(hipStreamWriteValue64(stream, signal32 + 1, 0, 0) == hipErrorInvalidValue);
  // Bounded: a value or mask passed wrongly would leave the wait blocked, not hang the check.
  hipError_t query = hipErrorNotReady;
  for (int i = 0; i < 10000 && query == hipErrorNotReady; ++i) {
    query = hipStreamQuery(stream);
    if (query == hipErrorNotReady) usleep(1000);
  }
  CHECK(query);
  EXPECT(signal[0] == 0x100000005ull && signal32[0] == 0 && signal32[1] == 0x80000007u);
  CHECK(hipHostFree(signal));

  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(graph));
  CHECK(hipEventDestroy(done));
  CHECK(hipFreeAsync(b, stream));
  CHECK(hipStreamSynchronize(stream));
  softhip_memory_usage_t usage;
  CHECK((hipError_t)softhip_device_memory_usage(0, &usage));
  EXPECT(usage.allocated_bytes == 1024 && usage.limit_bytes == 4ull << 30);
  CHECK(hipFree(a));
  CHECK((hipError_t)softhip_device_memory_usage(0, &usage));
  EXPECT(usage.allocated_bytes == 0);
  CHECK(hipStreamDestroy(stream));
  CHECK(hipDevicePrimaryCtxRelease(0));
  printf("c abi check passed\n");
  return 0;
}
