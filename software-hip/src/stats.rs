//! `SOFTWARE_HIP_STATS=<file>`: what the software device holds, sampled over time, for
//! soaks that show nothing grows per call (iree-harness/faults/soak.py), and for the fault
//! sweep's MPI runs, what it still holds at exit (`%p` in the path: the process id).
//!
//! From the first HIP call on, a thread appends one line every
//! `SOFTWARE_HIP_STATS_INTERVAL_MS` (default 50 ms), and one more when the process exits:
//! the columns of [`HEADER`], the first being milliseconds since the first call and the
//! number of HIP calls made so far (the soak's measure of progress); the process's resident
//! memory, open files and threads come last, so one series holds both, whatever driver
//! runs above.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub const HEADER: &str = "ms hip_calls device_bytes device_allocations host_pinned_bytes pool_reserved_bytes \
                          pools streams events modules functions graphs graph_nodes graph_execs comms rss_bytes open_files threads";

/// HIP calls made so far; counted only while `SOFTWARE_HIP_STATS` is set.
static CALLS: AtomicU64 = AtomicU64::new(0);

pub fn count_call() {
    CALLS.fetch_add(1, Ordering::Relaxed);
}

struct Sampler {
    path: String,
    started: Instant,
    /// Set once the exit sample is written. Held while a sample is taken and appended, so
    /// that no periodic sample taken before the exit one lands after it.
    closed: parking_lot::Mutex<bool>,
}

fn sampler() -> Option<&'static Sampler> {
    static SAMPLER: OnceLock<Option<Sampler>> = OnceLock::new();
    SAMPLER
        .get_or_init(|| {
            let path = crate::runtime::output_path("SOFTWARE_HIP_STATS")?;
            Some(Sampler { path, started: Instant::now(), closed: parking_lot::Mutex::new(false) })
        })
        .as_ref()
}

/// Whether `SOFTWARE_HIP_STATS` is set (read once).
pub fn enabled() -> bool {
    sampler().is_some()
}

/// Starts the sampling thread and the exit line; called once, when the fault state is made.
pub fn start() {
    let Some(sampler) = sampler() else { return };
    if let Err(error) = std::fs::write(&sampler.path, format!("{HEADER}\n")) {
        eprintln!("software-hip: cannot write SOFTWARE_HIP_STATS file {}: {error}", sampler.path);
        return;
    }
    let interval = std::env::var("SOFTWARE_HIP_STATS_INTERVAL_MS")
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .unwrap_or(50)
        .max(1);
    let spawned = std::thread::Builder::new().name("software-hip-stats".into()).spawn(move || loop {
        std::thread::sleep(Duration::from_millis(interval));
        if !append_sample(sampler, false) {
            return;
        }
    });
    if let Err(error) = spawned {
        eprintln!("software-hip: SOFTWARE_HIP_STATS: cannot start the sampling thread: {error}");
    }
    // SAFETY: registers a plain extern "C" function without arguments.
    unsafe { libc::atexit(append_exit_sample) };
}

/// The last line, at exit (C calls it, so no panic may leave it).
extern "C" fn append_exit_sample() {
    let _ = std::panic::catch_unwind(|| {
        if let Some(sampler) = sampler() {
            append_sample(sampler, true);
        }
    });
}

/// Appends a sample unless the exit sample was written; `last` writes the exit sample.
/// Returns whether sampling goes on.
fn append_sample(sampler: &Sampler, last: bool) -> bool {
    let mut closed = sampler.closed.lock();
    if *closed {
        return false;
    }
    *closed = last;
    let line = sample_line(sampler.started.elapsed());
    let written = std::fs::OpenOptions::new()
        .append(true)
        .open(&sampler.path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(error) = written {
        eprintln!("software-hip: cannot append to SOFTWARE_HIP_STATS file {}: {error}", sampler.path);
    }
    !last
}

/// One line of the columns in [`HEADER`].
pub fn sample_line(elapsed: Duration) -> String {
    let (mut device_bytes, mut device_allocations) = (0, 0);
    for device in crate::runtime::devices() {
        let usage = device.memory_usage();
        device_bytes += usage.allocated_bytes;
        device_allocations += usage.allocation_count;
    }
    let pools = crate::pool::pools().values();
    let pool_reserved: u64 = pools.iter().map(|pool| pool.usage().reserved_current).sum();
    let columns = [
        elapsed.as_millis() as u64,
        CALLS.load(Ordering::Relaxed),
        device_bytes,
        device_allocations,
        crate::memory::host_pinned_bytes(),
        pool_reserved,
        pools.len() as u64,
        crate::stream::streams().len() as u64,
        crate::event::events().len() as u64,
        crate::launch::modules().len() as u64,
        crate::launch::functions().len() as u64,
        crate::graph::graphs().len() as u64,
        crate::graph::nodes().len() as u64,
        crate::graph::execs().len() as u64,
        crate::rccl::comms().len() as u64,
        resident_bytes(),
        entries_in("/proc/self/fd"),
        entries_in("/proc/self/task"),
    ];
    let text: Vec<String> = columns.iter().map(u64::to_string).collect();
    text.join(" ") + "\n"
}

/// Resident set size from /proc/self/statm (pages; 0 where there is no /proc).
fn resident_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|text| text.split_whitespace().nth(1).and_then(|field| field.parse::<u64>().ok()))
        .unwrap_or(0);
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64;
    pages * page
}

fn entries_in(directory: &str) -> u64 {
    std::fs::read_dir(directory).map_or(0, |entries| entries.count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_has_every_column_of_the_header() {
        let line = sample_line(Duration::from_millis(7));
        let values: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(values.len(), HEADER.split_whitespace().count());
        assert_eq!(values[0], "7");
        let column = |name: &str| -> u64 {
            let index = HEADER.split_whitespace().position(|header| header == name).unwrap();
            values[index].parse().unwrap()
        };
        assert!(column("rss_bytes") > 1 << 20, "a test process holds more than 1 MiB");
        assert!(column("threads") >= 1);
        assert!(column("open_files") >= 3, "stdin, stdout and stderr at least");
    }
}
