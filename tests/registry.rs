//! The driver registry through its C entry points, as C callers use it.

mod common;

use common::*;
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::exports::*;
use iree_hal_hip_rs::status::StatusCode;
use std::sync::atomic::Ordering;

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

fn new_registry() -> *mut iree_hal_driver_registry_t {
    let mut registry = core::ptr::null_mut();
    assert_ok(unsafe { iree_hal_driver_registry_allocate(ALLOCATOR.as_iree(), &mut registry) });
    registry
}

fn names(registry: *mut iree_hal_driver_registry_t) -> Vec<(String, String)> {
    let allocator: &'static CountingAllocator = Box::leak(Box::new(CountingAllocator::new()));
    let mut count = 99usize;
    let mut infos = core::ptr::null_mut();
    assert_ok(unsafe {
        iree_hal_driver_registry_enumerate(registry, allocator.as_iree(), &mut count, &mut infos)
    });
    let list: Vec<(String, String)> = (0..count)
        .map(|i| unsafe { &*infos.add(i) })
        .map(|info| {
            (
                view_to_string(info.driver_name),
                view_to_string(info.full_name),
            )
        })
        .collect();
    if count > 0 {
        // One allocation holds the infos and every string.
        assert_eq!(allocator.live(), 1);
        let start = infos as usize;
        let end = start
            + count * core::mem::size_of::<iree_hal_driver_info_t>()
            + list.iter().map(|(a, b)| a.len() + b.len()).sum::<usize>();
        for i in 0..count {
            let info = unsafe { &*infos.add(i) };
            for v in [info.driver_name, info.full_name] {
                if v.size > 0 {
                    assert!(
                        (v.data as usize) >= start && (v.data as usize) + v.size <= end,
                        "string outside the allocation"
                    );
                }
            }
        }
        unsafe {
            iree_hal_hip_rs::iree_core::host_allocator::HostAllocator(allocator.as_iree()).free(infos.cast())
        };
    } else {
        assert!(infos.is_null());
    }
    assert_eq!(allocator.live(), 0);
    list
}

fn try_create_tag(
    registry: *mut iree_hal_driver_registry_t,
    name: &'static str,
) -> Result<String, (StatusCode, String)> {
    let mut driver = core::ptr::null_mut();
    let status = unsafe {
        iree_hal_driver_registry_try_create(registry, sv(name), ALLOCATOR.as_iree(), &mut driver)
    };
    if let Some(err) = take_status(status) {
        assert!(driver.is_null());
        return Err(err);
    }
    let tag = unsafe { (*(driver as *const FakeDriver)).tag }.to_string();
    release_driver(driver);
    Ok(tag)
}

#[test]
fn enumerate_keeps_registration_order_and_copies_strings() {
    let registry = new_registry();
    let a = FakeFactory::leak("A", &["alpha", "beta"]);
    let b = FakeFactory::leak("B", &["gamma"]);
    assert_ok(unsafe { iree_hal_driver_registry_register_factory(registry, a.ptr()) });
    assert_ok(unsafe { iree_hal_driver_registry_register_factory(registry, b.ptr()) });
    assert_eq!(
        names(registry),
        vec![
            ("alpha".into(), "A".into()),
            ("beta".into(), "A".into()),
            ("gamma".into(), "B".into())
        ]
    );
    unsafe { iree_hal_driver_registry_free(registry) };
}

#[test]
fn enumerate_of_an_empty_registry_allocates_nothing() {
    let registry = new_registry();
    assert!(names(registry).is_empty());
    unsafe { iree_hal_driver_registry_free(registry) };
}

#[test]
fn duplicate_registration_is_already_exists() {
    let registry = new_registry();
    let a = FakeFactory::leak("A", &["alpha"]);
    assert_ok(unsafe { iree_hal_driver_registry_register_factory(registry, a.ptr()) });
    let text = assert_code(
        unsafe { iree_hal_driver_registry_register_factory(registry, a.ptr()) },
        StatusCode::AlreadyExists,
    );
    assert!(text.contains("already been registered"), "{text}");
    assert_eq!(names(registry).len(), 1);
    unsafe { iree_hal_driver_registry_free(registry) };
}

#[test]
fn unknown_driver_is_not_found_naming_it() {
    let registry = new_registry();
    let a = FakeFactory::leak("A", &["alpha"]);
    assert_ok(unsafe { iree_hal_driver_registry_register_factory(registry, a.ptr()) });
    let (code, text) = try_create_tag(registry, "nonesuch").unwrap_err();
    assert_eq!(code, StatusCode::NotFound);
    assert!(text.contains("no driver 'nonesuch' registered"), "{text}");
    unsafe { iree_hal_driver_registry_free(registry) };
}

#[test]
fn most_recent_factory_wins_a_name_clash() {
    let registry = new_registry();
    let old = FakeFactory::leak("old", &["hip"]);
    let new = FakeFactory::leak("new", &["hip"]);
    assert_ok(unsafe { iree_hal_driver_registry_register_factory(registry, old.ptr()) });
    assert_eq!(try_create_tag(registry, "hip").unwrap(), "old");
    assert_ok(unsafe { iree_hal_driver_registry_register_factory(registry, new.ptr()) });
    assert_eq!(try_create_tag(registry, "hip").unwrap(), "new");
    assert_ok(unsafe { iree_hal_driver_registry_unregister_factory(registry, new.ptr()) });
    assert_eq!(try_create_tag(registry, "hip").unwrap(), "old");
    unsafe { iree_hal_driver_registry_free(registry) };
}

/// IREE's C registry moves `count - index - 1` *bytes* instead of pointers when a factory
/// other than the last is removed, corrupting the ones after it.
#[test]
fn unregistering_a_middle_factory_keeps_the_others_intact() {
    let registry = new_registry();
    let factories: Vec<_> = ["f0", "f1", "f2", "f3", "f4"]
        .iter()
        .map(|t| FakeFactory::leak(t, &[t]))
        .collect();
    for f in &factories {
        assert_ok(unsafe { iree_hal_driver_registry_register_factory(registry, f.ptr()) });
    }
    assert_ok(unsafe { iree_hal_driver_registry_unregister_factory(registry, factories[1].ptr()) });
    assert_ok(unsafe { iree_hal_driver_registry_unregister_factory(registry, factories[0].ptr()) });
    let listed: Vec<String> = names(registry).into_iter().map(|(n, _)| n).collect();
    assert_eq!(listed, vec!["f2", "f3", "f4"]);
    for tag in ["f2", "f3", "f4"] {
        assert_eq!(try_create_tag(registry, tag).unwrap(), tag);
    }
    assert_code(
        unsafe { iree_hal_driver_registry_unregister_factory(registry, factories[1].ptr()) },
        StatusCode::NotFound,
    );
    unsafe { iree_hal_driver_registry_free(registry) };
}

/// IREE's C check refuses the 16th factory while its message promises 16.
#[test]
fn capacity_is_sixteen_factories() {
    let registry = new_registry();
    let factories: Vec<_> = (0..17).map(|_| FakeFactory::leak("x", &["x"])).collect();
    for f in &factories[..16] {
        assert_ok(unsafe { iree_hal_driver_registry_register_factory(registry, f.ptr()) });
    }
    let text = assert_code(
        unsafe { iree_hal_driver_registry_register_factory(registry, factories[16].ptr()) },
        StatusCode::ResourceExhausted,
    );
    assert!(text.contains("(16)"), "{text}");
    assert_eq!(names(registry).len(), 16);
    unsafe { iree_hal_driver_registry_free(registry) };
}

#[test]
fn null_arguments_are_invalid_argument() {
    let registry = new_registry();
    let a = FakeFactory::leak("A", &["alpha"]);
    let mut count = 0usize;
    let mut infos = core::ptr::null_mut();
    let mut driver = core::ptr::null_mut();
    let mut device = core::ptr::null_mut();
    assert_code(
        unsafe { iree_hal_driver_registry_allocate(ALLOCATOR.as_iree(), core::ptr::null_mut()) },
        StatusCode::InvalidArgument,
    );
    assert_code(
        unsafe { iree_hal_driver_registry_register_factory(core::ptr::null_mut(), a.ptr()) },
        StatusCode::InvalidArgument,
    );
    assert_code(
        unsafe { iree_hal_driver_registry_register_factory(registry, core::ptr::null()) },
        StatusCode::InvalidArgument,
    );
    assert_code(
        unsafe { iree_hal_driver_registry_unregister_factory(registry, core::ptr::null()) },
        StatusCode::InvalidArgument,
    );
    assert_code(
        unsafe {
            iree_hal_driver_registry_enumerate(
                core::ptr::null_mut(),
                ALLOCATOR.as_iree(),
                &mut count,
                &mut infos,
            )
        },
        StatusCode::InvalidArgument,
    );
    assert_code(
        unsafe {
            iree_hal_driver_registry_enumerate(
                registry,
                ALLOCATOR.as_iree(),
                core::ptr::null_mut(),
                &mut infos,
            )
        },
        StatusCode::InvalidArgument,
    );
    assert_code(
        unsafe {
            iree_hal_driver_registry_enumerate(
                registry,
                ALLOCATOR.as_iree(),
                &mut count,
                core::ptr::null_mut(),
            )
        },
        StatusCode::InvalidArgument,
    );
    assert_code(
        unsafe {
            iree_hal_driver_registry_try_create(
                registry,
                sv("alpha"),
                ALLOCATOR.as_iree(),
                core::ptr::null_mut(),
            )
        },
        StatusCode::InvalidArgument,
    );
    assert_code(
        unsafe {
            iree_hal_driver_registry_try_create(
                core::ptr::null_mut(),
                sv("alpha"),
                ALLOCATOR.as_iree(),
                &mut driver,
            )
        },
        StatusCode::InvalidArgument,
    );
    let null_view = iree_string_view_t {
        data: core::ptr::null(),
        size: 4,
    };
    assert_code(
        unsafe {
            iree_hal_driver_registry_try_create(
                registry,
                null_view,
                ALLOCATOR.as_iree(),
                &mut driver,
            )
        },
        StatusCode::InvalidArgument,
    );
    assert_code(
        unsafe {
            iree_hal_create_device(
                registry,
                sv("alpha://"),
                ALLOCATOR.as_iree(),
                core::ptr::null_mut(),
            )
        },
        StatusCode::InvalidArgument,
    );
    assert_code(
        unsafe {
            iree_hal_create_device(
                core::ptr::null_mut(),
                sv("alpha://"),
                ALLOCATOR.as_iree(),
                &mut device,
            )
        },
        StatusCode::InvalidArgument,
    );
    unsafe { iree_hal_driver_registry_free(core::ptr::null_mut()) };
    unsafe { iree_hal_driver_registry_free(registry) };
}

#[test]
fn a_null_allocator_fails_cleanly() {
    let mut registry = core::ptr::null_mut();
    let null_allocator = iree_allocator_t {
        self_: core::ptr::null_mut(),
        ctl: None,
    };
    let text = assert_code(
        unsafe { iree_hal_driver_registry_allocate(null_allocator, &mut registry) },
        StatusCode::InvalidArgument,
    );
    assert!(text.contains("no control routine"), "{text}");
    assert!(registry.is_null());
}

#[test]
fn registry_memory_comes_from_the_host_allocator() {
    let allocator: &'static CountingAllocator = Box::leak(Box::new(CountingAllocator::new()));
    let mut registry = core::ptr::null_mut();
    assert_ok(unsafe { iree_hal_driver_registry_allocate(allocator.as_iree(), &mut registry) });
    assert_eq!(allocator.live(), 1);
    unsafe { iree_hal_driver_registry_free(registry) };
    assert_eq!(allocator.live(), 0);
}

#[test]
fn default_registry_is_one_process_wide_singleton() {
    let first = iree_hal_driver_registry_default() as usize;
    let seen: Vec<usize> = (0..8)
        .map(|_| std::thread::spawn(|| iree_hal_driver_registry_default() as usize))
        .map(|t| t.join().unwrap())
        .collect();
    assert!(first != 0 && seen.iter().all(|p| *p == first));
    // Freeing the default registry is ignored; it stays usable.
    unsafe { iree_hal_driver_registry_free(first as *mut _) };
    let f = FakeFactory::leak("default", &["default-only"]);
    assert_ok(unsafe { iree_hal_driver_registry_register_factory(first as *mut _, f.ptr()) });
    assert_eq!(
        try_create_tag(first as *mut _, "default-only").unwrap(),
        "default"
    );
    assert_ok(unsafe { iree_hal_driver_registry_unregister_factory(first as *mut _, f.ptr()) });
}

#[test]
fn create_device_passes_path_and_params_and_releases_the_driver() {
    let registry = new_registry();
    let f = FakeFactory::leak("uri", &["fake"]);
    assert_ok(unsafe { iree_hal_driver_registry_register_factory(registry, f.ptr()) });
    let mut device = core::ptr::null_mut();
    assert_ok(unsafe {
        iree_hal_create_device(
            registry,
            sv("fake://GPU-1,2?queue_count=2&async_allocations=false&flag"),
            ALLOCATOR.as_iree(),
            &mut device,
        )
    });
    let record = unsafe { Box::from_raw(device as *mut FakeDevice) };
    assert_eq!(record.0, "uri");
    assert_eq!(record.1, "GPU-1,2");
    assert_eq!(
        record.2,
        vec![
            ("queue_count".into(), "2".into()),
            ("async_allocations".into(), "false".into()),
            ("flag".into(), "".into())
        ]
    );
    assert_eq!(f.creates.load(Ordering::SeqCst), 1, "one temporary driver was made");
    assert_eq!(f.live.load(Ordering::SeqCst), 0, "the temporary driver was not released");

    let text = assert_code(
        unsafe {
            iree_hal_create_device(
                registry,
                sv("fake://fail"),
                ALLOCATOR.as_iree(),
                &mut device,
            )
        },
        StatusCode::NotFound,
    );
    assert!(
        text.contains("no such fake device") && text.contains("creating device 'fake://fail'"),
        "{text}"
    );
    assert!(device.is_null());
    let text = assert_code(
        unsafe {
            iree_hal_create_device(registry, sv("other://0"), ALLOCATOR.as_iree(), &mut device)
        },
        StatusCode::NotFound,
    );
    assert!(
        text.contains("no driver 'other' registered")
            && text.contains("creating driver for device 'other://0'"),
        "{text}"
    );
    unsafe { iree_hal_driver_registry_free(registry) };
}

#[test]
fn too_many_uri_params_are_rejected() {
    let registry = new_registry();
    let f = FakeFactory::leak("many", &["many"]);
    assert_ok(unsafe { iree_hal_driver_registry_register_factory(registry, f.ptr()) });
    let uri: &'static str =
        Box::leak(format!("many://0?{}", vec!["k=v"; 129].join("&")).into_boxed_str());
    let mut device = core::ptr::null_mut();
    let text = assert_code(
        unsafe { iree_hal_create_device(registry, sv(uri), ALLOCATOR.as_iree(), &mut device) },
        StatusCode::InvalidArgument,
    );
    assert!(text.contains("(129)"), "{text}");
    unsafe { iree_hal_driver_registry_free(registry) };
}

/// Many threads register, enumerate, create through and unregister their own factories on
/// one registry at once; every thread always sees its own driver and nothing is lost.
#[test]
fn concurrent_use_loses_nothing() {
    let registry = new_registry() as usize;
    let shared = FakeFactory::leak("shared", &["shared"]);
    assert_ok(unsafe {
        iree_hal_driver_registry_register_factory(registry as *mut _, shared.ptr())
    });
    let threads: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                let registry = registry as *mut iree_hal_driver_registry_t;
                let name: &'static str = Box::leak(format!("thread{t}").into_boxed_str());
                let factory = FakeFactory::leak(name, &[name]);
                for _ in 0..1000 {
                    assert_ok(unsafe {
                        iree_hal_driver_registry_register_factory(registry, factory.ptr())
                    });
                    let listed = names(registry);
                    assert!(listed.iter().any(|(n, _)| n == name));
                    assert!(listed.iter().any(|(n, _)| n == "shared"));
                    assert_eq!(try_create_tag(registry, name).unwrap(), name);
                    assert_eq!(try_create_tag(registry, "shared").unwrap(), "shared");
                    assert_ok(unsafe {
                        iree_hal_driver_registry_unregister_factory(registry, factory.ptr())
                    });
                    assert_eq!(
                        try_create_tag(registry, name).unwrap_err().0,
                        StatusCode::NotFound
                    );
                }
                factory.creates.load(Ordering::SeqCst)
            })
        })
        .collect();
    let creates: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(creates, 8 * 1000);
    assert_eq!(shared.creates.load(Ordering::SeqCst), 8 * 1000);
    assert_eq!(
        names(registry as *mut _),
        vec![("shared".to_string(), "shared".to_string())]
    );
    unsafe { iree_hal_driver_registry_free(registry as *mut _) };
}
