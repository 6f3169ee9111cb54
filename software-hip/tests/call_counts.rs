//! SOFTWARE_HIP_CALL_COUNTS: at exit, the number of calls of each entry point is written to
//! the file (what iree-harness/faults/sweep.py reads). The calls run in a child process (this
//! test binary again), whose exit writes the file.
#[macro_use]
mod common;
use common::*;

const CHILD: &str = "SOFTWARE_HIP_CALL_COUNTS_TEST_CHILD";

#[test]
fn child_makes_calls() {
    if std::env::var_os(CHILD).is_none() {
        return; // only as the child of the test below
    }
    init();
    let mut pointers = Vec::new();
    for _ in 0..3 {
        let mut pointer = std::ptr::null_mut();
        hip_ok!(hipMalloc(&mut pointer, 64));
        pointers.push(pointer);
    }
    for pointer in pointers {
        hip_ok!(hipFree(pointer));
    }
    let mut stream = std::ptr::null_mut();
    hip_ok!(hipStreamCreate(&mut stream));
    hip_ok!(hipStreamDestroy(stream));
}

#[test]
fn counts_are_written_when_the_process_exits() {
    let path = std::env::temp_dir().join(format!("softhip-call-counts-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_makes_calls", "--test-threads=1"])
        .env(CHILD, "1")
        .env("SOFTWARE_HIP_CALL_COUNTS", &path)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&path).expect("the counts file is written at exit");
    let _ = std::fs::remove_file(&path);
    let count = |name: &str| {
        text.lines().find_map(|line| line.strip_prefix(name).and_then(|rest| rest.trim().parse::<u64>().ok()))
    };
    assert_eq!(count("hipMalloc "), Some(3), "{text}");
    assert_eq!(count("hipFree "), Some(3), "{text}");
    assert_eq!(count("hipStreamCreate "), Some(1), "{text}");
    assert_eq!(count("hipMemcpy "), None, "a function never called is not listed: {text}");
}
