//! One macro for the tables of C functions the driver loads at run time (HIP, RCCL): each
//! function listed once as required or optional, turned into a struct of function pointers
//! that lives together with the library they point into, and its loader. A missing required
//! symbol fails the load naming the symbol and the library file; a missing optional one
//! leaves `None`, and whatever needs it reports a clear error instead of calling NULL.

/// `symbol_table! { struct HipSymbols, "HIP", hipError_t, located by hipDeviceGet; required f(args) -> ret; ... }`
/// (functions without `-> ret` return the table's status type).
macro_rules! symbol_table {
    (@field required $ty:ty) => { $ty };
    (@field optional $ty:ty) => { Option<$ty> };
    (@load required $what:literal, $lib:ident, $file:expr, $name:ident, $ty:ty) => {{
        // SAFETY: the symbol is the function of this name, whose C signature the table
        // states; the pointer is only used while the library (kept in the same struct) lives.
        match unsafe { $lib.get::<$ty>(concat!(stringify!($name), "\0").as_bytes()) } {
            Ok(symbol) => *symbol,
            Err(_) => {
                return Err(crate::status!(NotFound, "required {} symbol '{}' not found in {}", $what, stringify!($name), $file))
            }
        }
    }};
    (@load optional $what:literal, $lib:ident, $file:expr, $name:ident, $ty:ty) => {{
        // SAFETY: as for required symbols.
        unsafe { $lib.get::<$ty>(concat!(stringify!($name), "\0").as_bytes()) }.ok().map(|s| *s)
    }};
    (@ret $status:ty;) => { $status };
    (@ret $status:ty; $ret:ty) => { $ret };
    (@is_required required) => { true };
    (@is_required optional) => { false };
    (
        $(#[$meta:meta])*
        struct $table:ident, $what:literal, $status:ty, located by $anchor:ident;
        $( $kind:ident $name:ident ( $($arg:ty),* ) $(-> $ret:ty)? ; )*
    ) => {
        $(#[$meta])*
        #[allow(non_snake_case)]
        pub struct $table {
            $( pub $name: $crate::hip::symbol_table::symbol_table!(@field $kind unsafe extern "C" fn($($arg),*) -> $crate::hip::symbol_table::symbol_table!(@ret $status; $($ret)?)), )*
            /// The file the functions were loaded from.
            pub library_path: std::path::PathBuf,
            /// The search paths the library was looked up with.
            pub search_paths: Vec<String>,
            /// The library's version as its loader asks for it (HIP: `hipRuntimeGetVersion`);
            /// zero where the loader does not.
            pub runtime_version: $crate::hip::version::HipVersion,
            /// Keeps the functions above loaded; dropped last.
            _library: libloading::Library,
        }

        impl $table {
            fn resolve(loaded: super::library::LoadedLibrary, search_paths: &[String]) -> crate::status::Result<$table> {
                let lib = &loaded.library;
                let file = loaded.requested.clone();
                $( let $name = $crate::hip::symbol_table::symbol_table!(@load $kind $what, lib, file, $name, unsafe extern "C" fn($($arg),*) -> $crate::hip::symbol_table::symbol_table!(@ret $status; $($ret)?)); )*
                let mut symbols = $table {
                    $($name,)*
                    library_path: std::path::PathBuf::from(&loaded.requested),
                    search_paths: search_paths.to_vec(),
                    runtime_version: $crate::hip::version::HipVersion(0),
                    _library: loaded.library,
                };
                if let Some(path) = super::library::file_of_address(symbols.$anchor as *const core::ffi::c_void) {
                    symbols.library_path = path;
                }
                Ok(symbols)
            }

            /// The names of every function in the table and whether it is required.
            pub const TABLE: &'static [(&'static str, bool)] = &[
                $( (stringify!($name), $crate::hip::symbol_table::symbol_table!(@is_required $kind)), )*
            ];
        }
    };
}

pub(crate) use symbol_table;
