//! Allocation kinds, per-device accounting, limits, copies, fills and memory pools.
//! Tests that read device 1's accounting hold ACCOUNTING so they do not see each other, and
//! so do tests that synchronize every device (`hipHostFree`, `hipHostUnregister`): that
//! gives back what device 1's pools cache, which a pool test may be counting on.
#[macro_use]
mod common;
use common::*;
use core::ffi::c_int;
use std::sync::Mutex;

static ACCOUNTING: Mutex<()> = Mutex::new(());

fn usage(device: c_int) -> softhip_memory_usage_t {
    let mut usage = softhip_memory_usage_t::default();
    hip_ok!(softhip_device_memory_usage(device, &mut usage));
    usage
}

fn on_device<R: Send>(device: c_int, body: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                hip_ok!(hipSetDevice(device));
                body()
            })
            .join()
            .unwrap()
    })
}

#[test]
fn device_allocations_are_charged_and_returned() {
    init();
    let _lock = ACCOUNTING.lock().unwrap();
    on_device(1, || {
        let before = usage(1);
        let pointer = device_malloc(1 << 20);
        assert_eq!(pointer as usize % 256, 0);
        assert_eq!(usage(1).allocated_bytes, before.allocated_bytes + (1 << 20));
        let mut free = 0;
        let mut total = 0;
        hip_ok!(hipMemGetInfo(&mut free, &mut total));
        assert_eq!(total as u64, usage(1).limit_bytes);
        assert_eq!(free as u64, total as u64 - usage(1).allocated_bytes);
        let mut attributes: hipPointerAttribute_t = unsafe { std::mem::zeroed() };
        hip_ok!(hipPointerGetAttributes(&mut attributes, pointer.cast::<u8>().wrapping_add(100).cast()));
        assert_eq!((attributes.type_, attributes.device), (hipMemoryTypeDevice, 1));
        hip_ok!(hipFree(pointer));
        assert_eq!(usage(1).allocated_bytes, before.allocated_bytes);
        assert_eq!(hip_code!(hipFree(pointer)), hipErrorInvalidValue, "double free");
        hip_ok!(hipFree(std::ptr::null_mut()));
        let mut zero = std::ptr::dangling_mut::<c_void>();
        hip_ok!(hipMalloc(&mut zero, 0));
        assert!(zero.is_null());
        assert_eq!(hip_code!(hipMalloc(std::ptr::null_mut(), 16)), hipErrorInvalidValue);
    });
}

#[test]
fn the_device_memory_limit_gives_out_of_memory() {
    init();
    let _lock = ACCOUNTING.lock().unwrap();
    on_device(1, || {
        let base = usage(1).allocated_bytes;
        hip_ok!(softhip_set_device_memory_limit(1, base + (3 << 20)));
        let first = device_malloc(2 << 20);
        let mut second = std::ptr::null_mut();
        assert_eq!(hip_code!(hipMalloc(&mut second, 2 << 20)), hipErrorOutOfMemory);
        assert_eq!(hip_code!(hipMallocManaged(&mut second, 2 << 20, hipMemAttachGlobal)), hipErrorOutOfMemory);
        hip_ok!(hipFree(first));
        let again = device_malloc(3 << 20);
        hip_ok!(hipFree(again));
        hip_ok!(softhip_set_device_memory_limit(1, amdhip64::runtime::DEFAULT_DEVICE_MEMORY_BYTES));
        // The default limit (4 GiB) rejects bigger requests without touching memory.
        assert_eq!(hip_code!(hipMalloc(&mut second, 5 << 30)), hipErrorOutOfMemory);
    });
}

#[test]
fn host_pinned_registered_and_managed_memory() {
    init();
    let _lock = ACCOUNTING.lock().unwrap();
    let mut host = std::ptr::null_mut();
    hip_ok!(hipHostMalloc(&mut host, 4096, hipHostMallocMapped));
    assert!(amdhip64::accounting::host_pinned_bytes() >= 4096);
    let mut mapped = std::ptr::null_mut();
    hip_ok!(hipHostGetDevicePointer(&mut mapped, host, 0));
    assert_eq!(mapped, host);
    let mut attributes: hipPointerAttribute_t = unsafe { std::mem::zeroed() };
    hip_ok!(hipPointerGetAttributes(&mut attributes, host));
    assert_eq!(attributes.type_, hipMemoryTypeHost);
    assert_eq!(hip_code!(hipFree(host)), hipErrorInvalidValue, "hipFree does not take host memory");
    hip_ok!(hipHostFree(host));

    let mut buffer = vec![0u8; 8192];
    let address = buffer.as_mut_ptr().cast();
    hip_ok!(hipHostRegister(address, buffer.len(), hipHostRegisterDefault));
    assert_eq!(hip_code!(hipHostRegister(address, 16, 0)), hipErrorHostMemoryAlreadyRegistered);
    hip_ok!(hipHostGetDevicePointer(&mut mapped, address, 0));
    assert_eq!(mapped, address);
    hip_ok!(hipHostUnregister(address));
    assert_eq!(hip_code!(hipHostUnregister(address)), hipErrorHostMemoryNotRegistered);
    assert_eq!(hip_code!(hipHostGetDevicePointer(&mut mapped, address, 0)), hipErrorInvalidValue);

    let mut managed = std::ptr::null_mut();
    hip_ok!(hipMallocManaged(&mut managed, 1024, hipMemAttachGlobal));
    hip_ok!(hipPointerGetAttributes(&mut attributes, managed));
    assert_eq!((attributes.type_, attributes.isManaged), (hipMemoryTypeManaged, 1));
    hip_ok!(hipMemPrefetchAsync(managed, 1024, 0, std::ptr::null_mut()));
    hip_ok!(hipMemPrefetchAsync(managed, 1024, hipCpuDeviceId, std::ptr::null_mut()));
    assert_eq!(hip_code!(hipMemPrefetchAsync(managed, 1024, 7, std::ptr::null_mut())), hipErrorInvalidDevice);
    // Managed memory is directly usable from the host.
    unsafe { managed.cast::<u8>().write(42) };
    hip_ok!(hipFree(managed));
}

#[test]
fn copies_and_fills_in_every_form() {
    init();
    let device = device_malloc(64);
    let stream = create_stream(hipStreamDefault);
    hip_ok!(hipMemset(device, 0xAB, 64));
    assert_eq!(read_back(device, 64), vec![0xAB; 64]);
    hip_ok!(hipMemsetAsync(device, 0x11, 8, stream));
    hip_ok!(hipMemsetD16Async(device.cast::<u8>().wrapping_add(8).cast(), 0x2233, 4, stream));
    hip_ok!(hipMemsetD32Async(device.cast::<u8>().wrapping_add(16).cast(), 0x4455_6677, 2, stream));
    hip_ok!(hipMemsetD8Async(device.cast::<u8>().wrapping_add(24).cast(), 0x7F, 8, stream));
    hip_ok!(hipStreamSynchronize(stream));
    let bytes = read_back(device, 32);
    assert_eq!(&bytes[..8], &[0x11; 8]);
    assert_eq!(&bytes[8..12], &[0x33, 0x22, 0x33, 0x22]);
    assert_eq!(&bytes[16..24], &[0x77, 0x66, 0x55, 0x44, 0x77, 0x66, 0x55, 0x44]);
    assert_eq!(&bytes[24..32], &[0x7F; 8]);

    let source: Vec<u8> = (0..64).collect();
    hip_ok!(hipMemcpyHtoDAsync(device, source.as_ptr() as *mut c_void, 64, stream));
    let other = device_malloc(64);
    hip_ok!(hipMemcpyAsync(other, device, 64, hipMemcpyDeviceToDevice, stream));
    let mut result = vec![0u8; 64];
    hip_ok!(hipMemcpyAsync(result.as_mut_ptr().cast(), other, 64, hipMemcpyDefault, stream));
    hip_ok!(hipStreamSynchronize(stream));
    assert_eq!(result, source);
    assert_eq!(hip_code!(hipMemcpy(other, device, 64, 77)), hipErrorInvalidMemcpyDirection);
    assert_eq!(hip_code!(hipMemcpy(std::ptr::null_mut(), device, 64, hipMemcpyDefault)), hipErrorInvalidValue);
    hip_ok!(hipMemcpy(std::ptr::null_mut(), std::ptr::null(), 0, hipMemcpyDefault));
    hip_ok!(hipStreamDestroy(stream));
    hip_ok!(hipFree(device));
    hip_ok!(hipFree(other));
}

#[test]
fn synchronous_copy_waits_for_earlier_null_stream_work() {
    init();
    let device = device_malloc(16);
    hip_ok!(hipLaunchHostFunc(std::ptr::null_mut(), Some(sleep_millis), 30 as *mut c_void));
    hip_ok!(hipMemsetAsync(device, 9, 16, std::ptr::null_mut()));
    // Queued behind the sleep and the fill on the null stream; must see the fill.
    assert_eq!(read_back(device, 16), vec![9u8; 16]);
    hip_ok!(hipFree(device));
}

fn pool_attribute(pool: hipMemPool_t, attribute: hipMemPoolAttr) -> u64 {
    let mut value = 0u64;
    hip_ok!(hipMemPoolGetAttribute(pool, attribute, (&mut value as *mut u64).cast()));
    value
}

#[test]
fn stream_ordered_allocation_returns_memory_to_the_device() {
    init();
    let _lock = ACCOUNTING.lock().unwrap();
    on_device(1, || {
        let stream = create_stream(hipStreamNonBlocking);
        let before = usage(1).allocated_bytes;
        let mut pointer = std::ptr::null_mut();
        hip_ok!(hipMallocAsync(&mut pointer, 1 << 20, stream));
        assert!(!pointer.is_null());
        assert_eq!(usage(1).allocated_bytes, before + (1 << 20));
        hip_ok!(hipMemsetAsync(pointer, 1, 1 << 20, stream));
        hip_ok!(hipFreeAsync(pointer, stream));
        assert_eq!(hip_code!(hipFreeAsync(pointer, stream)), hipErrorInvalidValue, "double free");
        hip_ok!(hipStreamSynchronize(stream));
        // Default release threshold is 0: the memory went back to the device.
        assert_eq!(usage(1).allocated_bytes, before);
        hip_ok!(hipStreamDestroy(stream));
    });
}

/// HIP's `hipMemPoolAttrReleaseThreshold`: memory a pool holds over its threshold goes back
/// "on the next call to stream, event or context synchronize", not as a block is freed.
/// Until then a free followed by an allocation of the same size reuses the block (a
/// program's per-call buffers no longer fault in fresh host memory every call); each kind of
/// synchronization then releases it.
#[test]
fn a_pool_releases_memory_over_its_threshold_at_the_next_synchronization() {
    init();
    let _lock = ACCOUNTING.lock().unwrap();
    on_device(1, || {
        let stream = create_stream(hipStreamNonBlocking);
        let mut event = std::ptr::null_mut();
        hip_ok!(hipEventCreate(&mut event));
        let before = usage(1).allocated_bytes;
        let size = 1 << 20;
        let syncs: [(&str, &dyn Fn()); 3] = [
            ("stream", &|| hip_ok!(hipStreamSynchronize(stream))),
            ("event", &|| {
                hip_ok!(hipEventRecord(event, stream));
                hip_ok!(hipEventSynchronize(event));
            }),
            ("device", &|| hip_ok!(hipDeviceSynchronize())),
        ];
        for (kind, synchronize) in syncs {
            let mut first = std::ptr::null_mut();
            hip_ok!(hipMallocAsync(&mut first, size, stream));
            hip_ok!(hipFreeAsync(first, stream));
            // The free has run (a host function behind it on the stream has returned)...
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            extern "C" fn notify(data: *mut core::ffi::c_void) {
                // SAFETY: `data` is the boxed sender below, taken back exactly once.
                let tx = unsafe { Box::from_raw(data.cast::<std::sync::mpsc::Sender<()>>()) };
                let _ = tx.send(());
            }
            hip_ok!(hipLaunchHostFunc(stream, Some(notify), Box::into_raw(Box::new(tx)).cast()));
            rx.recv().unwrap();
            // ...but without a synchronization the pool keeps the block: the device is still
            // charged, and the next allocation of that size gets the same memory.
            assert_eq!(usage(1).allocated_bytes, before + size as u64, "{kind}: released before a synchronization");
            let mut second = std::ptr::null_mut();
            hip_ok!(hipMallocAsync(&mut second, size, stream));
            assert_eq!(second, first, "{kind}: the cached block was not reused");
            hip_ok!(hipFreeAsync(second, stream));
            synchronize();
            assert_eq!(usage(1).allocated_bytes, before, "{kind} synchronization left the cache over the threshold (0)");
        }
        hip_ok!(hipEventDestroy(event));
        hip_ok!(hipStreamDestroy(stream));
    });
}

#[test]
fn pools_cache_up_to_the_threshold_and_trim_releases() {
    init();
    let _lock = ACCOUNTING.lock().unwrap();
    on_device(1, || {
        let stream = create_stream(hipStreamNonBlocking);
        let mut properties: hipMemPoolProps = unsafe { std::mem::zeroed() };
        properties.allocType = hipMemAllocationTypePinned;
        properties.location = hipMemLocation { type_: hipMemLocationTypeDevice, id: 1 };
        let mut pool = std::ptr::null_mut();
        hip_ok!(hipMemPoolCreate(&mut pool, &properties));
        let mut threshold = u64::MAX;
        hip_ok!(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, (&mut threshold as *mut u64).cast()));
        assert_eq!(pool_attribute(pool, hipMemPoolAttrReleaseThreshold), u64::MAX);

        let before = usage(1).allocated_bytes;
        let mut a = std::ptr::null_mut();
        let mut b = std::ptr::null_mut();
        hip_ok!(hipMallocFromPoolAsync(&mut a, 4096, pool, stream));
        hip_ok!(hipMallocFromPoolAsync(&mut b, 8192, pool, stream));
        assert_eq!(pool_attribute(pool, hipMemPoolAttrUsedMemCurrent), 12288);
        assert_eq!(pool_attribute(pool, hipMemPoolAttrReservedMemCurrent), 12288);
        hip_ok!(hipFreeAsync(a, stream));
        hip_ok!(hipFreeAsync(b, stream));
        hip_ok!(hipStreamSynchronize(stream));
        assert_eq!(pool_attribute(pool, hipMemPoolAttrUsedMemCurrent), 0);
        assert_eq!(pool_attribute(pool, hipMemPoolAttrUsedMemHigh), 12288);
        assert_eq!(pool_attribute(pool, hipMemPoolAttrReservedMemCurrent), 12288, "cached below the threshold");
        assert_eq!(usage(1).allocated_bytes, before + 12288);

        // A same-sized request reuses the cached block.
        let mut c = std::ptr::null_mut();
        hip_ok!(hipMallocFromPoolAsync(&mut c, 4096, pool, stream));
        assert_eq!(c, a);
        assert_eq!(pool_attribute(pool, hipMemPoolAttrReservedMemCurrent), 12288);
        hip_ok!(hipFreeAsync(c, stream));
        hip_ok!(hipStreamSynchronize(stream));

        hip_ok!(hipMemPoolTrimTo(pool, 4096));
        assert!(pool_attribute(pool, hipMemPoolAttrReservedMemCurrent) <= 4096);
        assert_eq!(usage(1).allocated_bytes, before + pool_attribute(pool, hipMemPoolAttrReservedMemCurrent));
        hip_ok!(hipMemPoolTrimTo(pool, 0));
        assert_eq!(pool_attribute(pool, hipMemPoolAttrReservedMemCurrent), 0);
        assert_eq!(usage(1).allocated_bytes, before);

        let mut zero = 0u64;
        hip_ok!(hipMemPoolSetAttribute(pool, hipMemPoolAttrReservedMemHigh, (&mut zero as *mut u64).cast()));
        assert_eq!(pool_attribute(pool, hipMemPoolAttrReservedMemHigh), 0);
        let mut nonzero = 5u64;
        assert_eq!(
            hip_code!(hipMemPoolSetAttribute(pool, hipMemPoolAttrUsedMemCurrent, (&mut nonzero as *mut u64).cast())),
            hipErrorInvalidValue
        );
        hip_ok!(hipMemPoolDestroy(pool));
        assert_eq!(hip_code!(hipMemPoolTrimTo(pool, 0)), hipErrorInvalidValue);
        let mut default_pool = std::ptr::null_mut();
        hip_ok!(hipDeviceGetDefaultMemPool(&mut default_pool, 1));
        assert_eq!(hip_code!(hipMemPoolDestroy(default_pool)), hipErrorInvalidValue);
        properties.location.id = 9;
        assert_eq!(hip_code!(hipMemPoolCreate(&mut pool, &properties)), hipErrorInvalidValue);
        hip_ok!(hipStreamDestroy(stream));
    });
}

#[test]
fn a_pool_gives_back_its_cache_before_reporting_out_of_memory() {
    init();
    let _lock = ACCOUNTING.lock().unwrap();
    on_device(1, || {
        let stream = create_stream(hipStreamNonBlocking);
        let mut pool = std::ptr::null_mut();
        hip_ok!(hipDeviceGetMemPool(&mut pool, 1));
        let mut keep_everything = u64::MAX;
        hip_ok!(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, (&mut keep_everything as *mut u64).cast()));
        let base = usage(1).allocated_bytes;
        hip_ok!(softhip_set_device_memory_limit(1, base + (4 << 20)));
        let mut small = std::ptr::null_mut();
        hip_ok!(hipMallocAsync(&mut small, 3 << 20, stream));
        hip_ok!(hipFreeAsync(small, stream));
        hip_ok!(hipStreamSynchronize(stream));
        assert_eq!(usage(1).allocated_bytes, base + (3 << 20), "cached in the pool");
        // 4 MiB only fits once the cached 3 MiB block is released.
        let mut large = std::ptr::null_mut();
        hip_ok!(hipMallocAsync(&mut large, 4 << 20, stream));
        assert_eq!(usage(1).allocated_bytes, base + (4 << 20));
        let mut more = std::ptr::null_mut();
        assert_eq!(hip_code!(hipMallocAsync(&mut more, 1 << 20, stream)), hipErrorOutOfMemory);
        hip_ok!(hipFreeAsync(large, stream));
        hip_ok!(hipStreamSynchronize(stream));
        hip_ok!(hipMemPoolTrimTo(pool, 0));
        assert_eq!(usage(1).allocated_bytes, base);
        let mut zero = 0u64;
        hip_ok!(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, (&mut zero as *mut u64).cast()));
        hip_ok!(softhip_set_device_memory_limit(1, amdhip64::runtime::DEFAULT_DEVICE_MEMORY_BYTES));
        hip_ok!(hipStreamDestroy(stream));
    });
}

#[test]
fn a_released_large_block_backs_the_next_allocation_of_its_size() {
    init();
    let _lock = ACCOUNTING.lock().unwrap();
    on_device(1, || {
        // An unusual size, so no other test's allocation takes the kept block.
        let size = (40 << 20) + 3 * 256;
        let before = usage(1).allocated_bytes;
        let first = device_malloc(size);
        hip_ok!(hipMemset(first, 0x5a, size));
        assert_eq!(usage(1).allocated_bytes, before + size as u64);
        hip_ok!(hipFree(first));
        assert_eq!(usage(1).allocated_bytes, before, "the device got the bytes back at once");
        let second = device_malloc(size);
        // Fresh host memory would read as zeroes: the old bytes show the block was kept.
        let mut head = [0u8; 4];
        hip_ok!(hipMemcpy(head.as_mut_ptr().cast(), second, 4, hipMemcpyDeviceToHost));
        assert_eq!((second, head), (first, [0x5a; 4]), "the host memory of the released block was reused");
        assert_eq!(usage(1).allocated_bytes, before + size as u64);
        // The reused block is an ordinary allocation: writable, readable, freed once.
        hip_ok!(hipMemset(second, 0x11, size));
        let mut tail = [0u8; 4];
        hip_ok!(hipMemcpy(tail.as_mut_ptr().cast(), second.cast::<u8>().add(size - 4).cast(), 4, hipMemcpyDeviceToHost));
        assert_eq!(tail, [0x11; 4]);
        hip_ok!(hipFree(second));
        assert_eq!(hip_code!(hipFree(second)), hipErrorInvalidValue);
        assert_eq!(usage(1).allocated_bytes, before);
    });
}
