//! Calls into HAL objects of any origin (IREE's own C objects, or ours) through their
//! vtables, the way IREE's `iree_hal_*` wrapper functions make them: a live object, its
//! vtable entry (a missing entry is UNIMPLEMENTED), and the returned status taken over.
//! Driver factories, C objects with a table of callbacks but no resource header, are called
//! here too (`FactoryRef`).

use super::thunk::Borrowed;
use super::{Resource, Retained};
use crate::abi::*;
use crate::status::{Result, Status};

/// Something that holds a live HAL object for as long as it is borrowed.
pub trait LiveObject<R: Resource> {
    fn live_pointer(&self) -> *mut R;
}

impl<R: Resource> LiveObject<R> for Retained<R> {
    fn live_pointer(&self) -> *mut R {
        self.as_ptr()
    }
}

impl<R: Resource> LiveObject<R> for Borrowed<'_, R> {
    fn live_pointer(&self) -> *mut R {
        self.as_ptr()
    }
}

/// The vtable of a live object.
fn vtable_of<R: Resource, V>(object: &(impl LiveObject<R> + ?Sized)) -> &V {
    let header = object.live_pointer().cast::<iree_hal_resource_t>();
    // SAFETY: live while borrowed; `V` is the vtable type of `R` (callers below pair them).
    unsafe { &*(*header).vtable.cast::<V>() }
}

fn missing(kind: &str, entry: &str) -> Status {
    crate::status!(Unimplemented, "the {kind} has no {entry} entry")
}

/// `iree_hal_allocator_*` on an allocator of any origin.
pub trait AllocatorCalls: LiveObject<iree_hal_allocator_t> {
    /// `iree_hal_allocator_trim`; an allocator without the entry has nothing to trim.
    fn trim(&self) -> Result<()> {
        let vtable: &iree_hal_allocator_vtable_t = vtable_of(self);
        match vtable.trim {
            // SAFETY: the allocator's own entry on the live allocator.
            Some(trim) => unsafe { Status::from_raw(trim(self.live_pointer())) },
            None => Ok(()),
        }
    }

    /// `iree_hal_allocator_allocate_buffer` with the parameters as given (callers apply
    /// IREE's defaults first).
    fn allocate_buffer(&self, params: &iree_hal_buffer_params_t, allocation_size: u64) -> Result<Retained<iree_hal_buffer_t>> {
        let vtable: &iree_hal_allocator_vtable_t = vtable_of(self);
        let allocate = vtable.allocate_buffer.ok_or_else(|| missing("device allocator", "allocate_buffer"))?;
        let mut buffer: *mut iree_hal_buffer_t = core::ptr::null_mut();
        // SAFETY: the allocator's own entry; `params` and `buffer` are valid for the call.
        unsafe { Status::from_raw(allocate(self.live_pointer(), params, allocation_size, &mut buffer)) }?;
        // SAFETY: a successful allocation hands us its one reference.
        unsafe { Retained::adopt(buffer) }.ok_or_else(|| crate::status!(Internal, "allocate_buffer returned OK and no buffer"))
    }
}

impl<T: LiveObject<iree_hal_allocator_t>> AllocatorCalls for T {}

/// `iree_hal_driver_*` on a driver of any origin.
pub trait DriverCalls: LiveObject<iree_hal_driver_t> {
    /// `create_device_by_path` of the driver's vtable, with the views and pairs borrowed for
    /// the call; the new device's reference is the caller's.
    // The create params are only passed on to the driver (which reads them under IREE's
    // contract), never read here.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn create_device_by_path(
        &self,
        driver_name: &[u8],
        device_path: &[u8],
        params: &[iree_string_pair_t],
        create_params: DeviceCreateParams,
        host_allocator: crate::iree_core::host_allocator::HostAllocator,
    ) -> Result<*mut iree_hal_device_t> {
        let vtable: &iree_hal_driver_vtable_t = vtable_of(self);
        let create = vtable.create_device_by_path.ok_or_else(|| crate::status!(Unimplemented, "driver has no create_device_by_path"))?;
        let mut device: *mut iree_hal_device_t = core::ptr::null_mut();
        let params_ptr = if params.is_empty() { core::ptr::null() } else { params.as_ptr() };
        // SAFETY: the driver's own entry on the live driver, with views, pairs and create
        // params valid for the call.
        #[cfg(not(feature = "iree-3-13"))]
        let status = unsafe {
            let () = create_params;
            create(self.live_pointer(), view_of(driver_name), view_of(device_path), params.len(), params_ptr, host_allocator.0, &mut device)
        };
        // SAFETY: as above.
        #[cfg(feature = "iree-3-13")]
        let status = unsafe {
            create(self.live_pointer(), view_of(driver_name), view_of(device_path), params.len(), params_ptr, create_params, host_allocator.0, &mut device)
        };
        // SAFETY: the driver's status, now ours.
        unsafe { Status::from_raw(status) }?;
        Ok(device)
    }
}

impl<T: LiveObject<iree_hal_driver_t>> DriverCalls for T {}

/// `iree_hal_channel_provider_*` on a channel provider (always the application's).
pub trait ChannelProviderCalls: LiveObject<iree_hal_channel_provider_t> {
    /// `iree_hal_channel_provider_query_default_rank_and_count`: (rank, count), each
    /// `IREE_HAL_CHANNEL_RANK_DEFAULT` / `COUNT_DEFAULT` unless the provider wrote it.
    fn query_default_rank_and_count(&self) -> Result<(i32, i32)> {
        let vtable: &iree_hal_channel_provider_vtable_t = vtable_of(self);
        let query = vtable.query_default_rank_and_count.ok_or_else(|| missing("channel provider", "query_default_rank_and_count"))?;
        let (mut rank, mut count) = (IREE_HAL_CHANNEL_RANK_DEFAULT, IREE_HAL_CHANNEL_COUNT_DEFAULT);
        // SAFETY: the provider's own entry on the live provider; both outputs are valid for
        // the call; the returned status is ours.
        unsafe { Status::from_raw(query(self.live_pointer(), &mut rank, &mut count)) }?;
        Ok((rank, count))
    }

    /// `iree_hal_channel_provider_exchange_default_id`: the provider reads and may replace
    /// `id` (the root's id reaches every participant); blocks for as long as it does.
    fn exchange_default_id(&self, id: &mut [u8]) -> Result<()> {
        let vtable: &iree_hal_channel_provider_vtable_t = vtable_of(self);
        let exchange = vtable.exchange_default_id.ok_or_else(|| missing("channel provider", "exchange_default_id"))?;
        let span = iree_byte_span_t { data: id.as_mut_ptr(), data_length: id.len() };
        // SAFETY: the provider's own entry on the live provider; the span is the caller's
        // exclusive borrow for the call; the returned status is ours.
        unsafe { Status::from_raw(exchange(self.live_pointer(), span)) }
    }
}

impl<T: LiveObject<iree_hal_channel_provider_t>> ChannelProviderCalls for T {}

/// A view of bytes borrowed for a call.
pub fn view_of(bytes: &[u8]) -> iree_string_view_t {
    iree_string_view_t { data: bytes.as_ptr().cast(), size: bytes.len() }
}

/// A driver factory C registered (`iree_hal_driver_factory_t`, not a HAL object): borrowed
/// by address, which its registrant keeps alive until it unregisters it. Holding or
/// comparing the address is harmless; calling the factory needs it still registered.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FactoryRef(pub(crate) core::ptr::NonNull<iree_hal_driver_factory_t>);

// SAFETY: IREE requires factories to be callable from any thread; holding the address is
// harmless (see above).
unsafe impl Send for FactoryRef {}
unsafe impl Sync for FactoryRef {}

/// One driver a factory offers (`iree_hal_driver_info_t`), borrowed from the factory.
#[repr(transparent)]
pub struct DriverInfo(iree_hal_driver_info_t);

impl DriverInfo {
    /// The bytes of the driver's name; `what` names the view in a refusal.
    pub fn driver_name(&self, what: &str) -> Result<&[u8]> {
        // SAFETY: a `DriverInfo` is only borrowed from a factory's list (`enumerate`), whose
        // views stay valid while the factory is registered (IREE's contract).
        unsafe { crate::boundary::view_bytes(self.0.driver_name, what) }
    }

    /// The bytes of the driver's full name.
    pub fn full_name(&self, what: &str) -> Result<&[u8]> {
        // SAFETY: as `driver_name`.
        unsafe { crate::boundary::view_bytes(self.0.full_name, what) }
    }

    /// How many bytes both names hold (as the factory says).
    pub fn text_size(&self) -> usize {
        self.0.driver_name.size + self.0.full_name.size
    }
}

impl FactoryRef {
    fn factory(&self) -> &iree_hal_driver_factory_t {
        // SAFETY: only called from the methods below, whose callers vouch for the factory.
        unsafe { self.0.as_ref() }
    }

    /// The drivers the factory offers, borrowed from it for `'a`.
    ///
    /// # Safety
    /// The factory must stay registered (alive, its infos unchanged) for `'a`, and calls
    /// into it be serialised as IREE's registry does.
    pub unsafe fn enumerate<'a>(self) -> Result<&'a [DriverInfo]> {
        let factory = self.factory();
        let enumerate = factory.enumerate.ok_or_else(|| crate::boundary::missing_callback("factory enumerate"))?;
        let mut count: iree_host_size_t = 0;
        let mut infos: *const iree_hal_driver_info_t = core::ptr::null();
        // SAFETY: IREE's factory contract, per the caller.
        unsafe { Status::from_raw(enumerate(factory.self_, &mut count, &mut infos)) }?;
        if count == 0 {
            return Ok(&[]);
        }
        if infos.is_null() {
            return Err(crate::status!(InvalidArgument, "factory enumerated {count} drivers but returned no infos"));
        }
        // SAFETY: the factory's `count` infos stay immutable while it is registered (IREE's
        // contract); `DriverInfo` has their layout.
        Ok(unsafe { core::slice::from_raw_parts(infos.cast::<DriverInfo>(), count) })
    }

    /// Asks the factory for the driver `driver_name`, which becomes the caller's.
    ///
    /// # Safety
    /// As `enumerate`, for the call.
    pub unsafe fn try_create(self, driver_name: &[u8], host_allocator: crate::iree_core::host_allocator::HostAllocator) -> Result<Retained<iree_hal_driver_t>> {
        let factory = self.factory();
        let try_create = factory.try_create.ok_or_else(|| crate::boundary::missing_callback("factory try_create"))?;
        let mut driver: *mut iree_hal_driver_t = core::ptr::null_mut();
        // SAFETY: IREE's factory contract, per the caller; the name is valid for the call.
        unsafe { Status::from_raw(try_create(factory.self_, view_of(driver_name), host_allocator.0, &mut driver)) }?;
        // SAFETY: a factory that succeeded hands us one reference to a valid driver.
        unsafe { Retained::adopt(driver) }
            .ok_or_else(|| crate::status!(Internal, "factory for '{}' returned no driver", String::from_utf8_lossy(driver_name)))
    }
}
