/* Force-included (-include) into every file of the traced IREE build (build_traced_iree.sh):
 * IREE's tracing mode 2 (device instrumentation) with our recording provider instead of
 * Tracy, so that the build needs no Tracy sources and the zones can be checked. */
#define IREE_TRACING_MODE 2
#define IREE_TRACING_PROVIDER_H "hip_rs_recording_provider.h"
