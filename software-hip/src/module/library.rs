//! A code object loaded with the dynamic loader, and lookups inside it that
//! refuse symbols belonging to any other loaded object.

use super::image_file::ImageFile;
use core::ffi::{c_void, CStr};
use std::ffi::CString;

/// `RTLD_DL_SYMENT` from <dlfcn.h>: ask `dladdr1` for the ELF symbol entry.
const RTLD_DL_SYMENT: libc::c_int = 1;
const STT_OBJECT: u8 = 1;

/// A loaded shared object; `dlclose`d on drop.
pub struct Library {
    handle: *mut c_void,
    /// The file the object was loaded from. Held open while loaded so that
    /// the `/proc/self/fd/N` name stays unique to this object.
    file: Option<ImageFile>,
}

// SAFETY: the dynamic loader's handles and lookups are thread-safe in glibc;
// the handle is only used for dlsym/dladdr (read-only) and dlclose on drop.
unsafe impl Send for Library {}
unsafe impl Sync for Library {}

/// What `dladdr1` knows about an address.
struct AddressInfo {
    object_path: *const libc::c_char,
    symbol_address: *mut c_void,
    symbol: *const libc::Elf64_Sym,
}

fn address_info(address: *const c_void) -> Option<AddressInfo> {
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    let mut symbol: *mut c_void = core::ptr::null_mut();
    // SAFETY: dladdr1 only inspects the loader's tables; out-pointers valid.
    let found = unsafe {
        libc::dladdr1(
            address,
            &mut info,
            &mut symbol as *mut *mut c_void,
            RTLD_DL_SYMENT,
        )
    };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    Some(AddressInfo {
        object_path: info.dli_fname,
        symbol_address: info.dli_saddr,
        symbol: symbol as *const libc::Elf64_Sym,
    })
}

fn last_loader_error() -> String {
    // SAFETY: dlerror returns a thread-local message or NULL.
    let message = unsafe { libc::dlerror() };
    if message.is_null() {
        String::new()
    } else {
        // SAFETY: non-null dlerror results are NUL-terminated strings.
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    }
}

impl Library {
    /// Loads the object whose bytes `file` holds.
    pub fn open(mut file: ImageFile) -> Result<Library, String> {
        // SAFETY: the path names a complete ELF image that passed header
        // validation; running its constructors is inherent to loading code.
        let handle =
            unsafe { libc::dlopen(file.path().as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        file.forget_path();
        if handle.is_null() {
            return Err(last_loader_error());
        }
        Ok(Library {
            handle,
            file: Some(file),
        })
    }

    fn path(&self) -> &CString {
        self.file.as_ref().expect("file present until drop").path()
    }

    /// True when `address` lies in a segment of this object.
    pub fn contains(&self, address: *const c_void) -> bool {
        match address_info(address) {
            Some(info) => {
                // SAFETY: dladdr1 gives a valid NUL-terminated path.
                let object = unsafe { CStr::from_ptr(info.object_path) };
                object == self.path().as_c_str()
            }
            None => false,
        }
    }

    /// Address of the data object `name` defined by this object itself (not
    /// by a dependency such as libc), at least `min_size` bytes long.
    pub fn data_symbol(&self, name: &CStr, min_size: usize) -> Option<*const c_void> {
        self.data_object(name)
            .and_then(|(address, size)| (size >= min_size).then_some(address))
    }

    /// Address and size (`st_size`) of the data object `name` defined by this
    /// object itself. Functions, thread-locals and symbols of other objects
    /// are not data objects of this one.
    pub fn data_object(&self, name: &CStr) -> Option<(*const c_void, usize)> {
        // SAFETY: handle is live; name is NUL-terminated.
        let address = unsafe { libc::dlsym(self.handle, name.as_ptr()) } as *const c_void;
        if address.is_null() {
            return None;
        }
        let info = address_info(address)?;
        // SAFETY: valid NUL-terminated strings.
        let ours = unsafe { CStr::from_ptr(info.object_path) } == self.path().as_c_str();
        if !ours
            || !core::ptr::eq(info.symbol_address as *const c_void, address)
            || info.symbol.is_null()
        {
            return None;
        }
        // SAFETY: dladdr1 returned a pointer to the object's symbol entry.
        let symbol = unsafe { &*info.symbol };
        let is_object = symbol.st_info & 0xf == STT_OBJECT;
        is_object.then_some((address, symbol.st_size as usize))
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        // SAFETY: handle came from dlopen and is closed exactly once.
        unsafe { libc::dlclose(self.handle) };
        let Some(file) = self.file.take() else { return };
        // Some objects cannot be unloaded (e.g. with unique symbols). If the
        // loader still knows this name, keep the descriptor so that no later
        // code object is ever given the same /proc/self/fd/N name.
        // SAFETY: RTLD_NOLOAD never loads anything; the path is valid.
        let still_loaded =
            unsafe { libc::dlopen(file.path().as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
        if still_loaded.is_null() {
            drop(file);
        } else {
            // SAFETY: balances the reference the probe just took.
            unsafe { libc::dlclose(still_loaded) };
            file.leak();
        }
    }
}
