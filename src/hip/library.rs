//! Opening a runtime library the way IREE's HIP driver searches for it: with no search
//! paths, the platform name through the system loader; otherwise each entry in turn, an
//! entry starting with `file:` being an exact file and any other a directory holding the
//! platform name. A failure lists every path tried and why each failed.

use crate::status::Result;
use std::path::{Path, PathBuf};

/// A loaded library and the file it came from.
pub struct LoadedLibrary {
    pub library: libloading::Library,
    /// What was handed to the loader (a bare name when the system loader searched).
    pub requested: String,
}

/// The candidate files for `search_paths`, in order.
pub fn candidates(file_name: &str, search_paths: &[String]) -> Vec<String> {
    if search_paths.is_empty() {
        return vec![file_name.to_owned()];
    }
    search_paths
        .iter()
        .map(|entry| match entry.strip_prefix("file:") {
            Some(exact) => exact.to_owned(),
            None => Path::new(entry).join(file_name).display().to_string(),
        })
        .collect()
}

/// Opens the first candidate that loads. UNAVAILABLE lists every attempt.
pub fn open_first(what: &str, file_name: &str, search_paths: &[String]) -> Result<LoadedLibrary> {
    let mut tried = String::new();
    for candidate in candidates(file_name, search_paths) {
        // SAFETY: loading a library runs its initialisers; the HIP and RCCL runtimes are
        // the libraries this driver exists to load.
        match unsafe { libloading::Library::new(&candidate) } {
            Ok(library) => return Ok(LoadedLibrary { library, requested: candidate }),
            Err(error) => tried.push_str(&format!("\n  tried: {candidate}\n    {error}")),
        }
    }
    Err(crate::status!(
        Unavailable,
        "{what} runtime library '{file_name}' not available: please ensure it is installed and in the \
         dynamic library search path, or give its location{tried}"
    ))
}

/// The file a loaded function lives in (the resolved path even when the system loader
/// searched by name).
// dladdr only compares the address with the loader's tables; it never reads through it.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn file_of_address(address: *const core::ffi::c_void) -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    // SAFETY: dladdr only reads the address and fills `info` with pointers into the
    // loader's own tables, which outlive this call.
    if unsafe { libc::dladdr(address, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated string owned by the loader.
    let name = unsafe { core::ffi::CStr::from_ptr(info.dli_fname) };
    Some(PathBuf::from(name.to_string_lossy().into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_order_follows_the_options() {
        assert_eq!(candidates("libamdhip64.so", &[]), vec!["libamdhip64.so"]);
        let paths = vec!["file:/opt/x/libhip.so.6".to_owned(), "/opt/rocm/lib".to_owned()];
        assert_eq!(candidates("libamdhip64.so", &paths), vec!["/opt/x/libhip.so.6", "/opt/rocm/lib/libamdhip64.so"]);
    }

    #[test]
    fn a_missing_library_is_unavailable_listing_every_attempt() {
        let paths = vec!["/nonexistent/a".to_owned(), "file:/nonexistent/b.so".to_owned()];
        let status = open_first("HIP", "libamdhip64.so", &paths).err().unwrap();
        assert_eq!(status.code(), crate::status::StatusCode::Unavailable);
        let text = status.to_string();
        assert!(text.contains("tried: /nonexistent/a/libamdhip64.so"), "{text}");
        assert!(text.contains("tried: /nonexistent/b.so"), "{text}");
    }
}
