//! Helper threads that run a launch's workgroups beside the thread that
//! launched it (a stream's thread). They are started once and kept for the
//! process: starting a thread for every launch cost tens of microseconds,
//! which only large grids could pay for.
//!
//! One launch at a time has the helpers; a launch that finds them busy runs
//! on its own thread alone (as when `SOFTWARE_HIP_KERNEL_THREADS` is 1).

use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};

/// The work of one launch, shared by the launching thread and its helpers.
type Work<'a> = dyn Fn() + Sync + 'a;

/// The launch the helpers are asked to join.
struct Job {
    /// Points to the launching thread's `Work`, which outlives the job: the
    /// launching thread closes the job and waits for `active` to reach 0
    /// before it returns (`run`).
    work: *const Work<'static>,
    /// Helpers still wanted; a helper takes one before it runs `work`.
    wanted: usize,
    /// Helpers running `work` now.
    active: usize,
}

// SAFETY: `work` points to a `Sync` closure, only called while the job is
// posted and never after the launching thread saw `active == 0` with the job
// taken down.
unsafe impl Send for Job {}

#[derive(Default)]
struct State {
    job: Option<Job>,
    /// Helper threads started so far.
    started: usize,
}

struct Helpers {
    state: Mutex<State>,
    /// A job was posted.
    posted: Condvar,
    /// A helper left a job.
    left: Condvar,
}

fn helpers() -> &'static Helpers {
    static HELPERS: OnceLock<Helpers> = OnceLock::new();
    HELPERS.get_or_init(|| Helpers {
        state: Mutex::new(State::default()),
        posted: Condvar::new(),
        left: Condvar::new(),
    })
}

impl Helpers {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent under a panic: no code here panics while
        // holding the lock with a half-done update.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A helper's life: join each posted job while it still wants helpers.
    fn serve(&'static self) {
        let mut state = self.lock();
        loop {
            let work = match state.job.as_mut() {
                Some(job) if job.wanted > 0 => {
                    job.wanted -= 1;
                    job.active += 1;
                    job.work
                }
                _ => {
                    state = self.posted.wait(state).unwrap_or_else(PoisonError::into_inner);
                    continue;
                }
            };
            drop(state);
            // SAFETY: the job is posted and counts this helper as active, so
            // the launching thread is still inside `run` and `work` is live.
            let work = unsafe { &*work };
            // The launch's work records its own failures; a panic must not
            // leave the launching thread waiting for this helper for ever.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            state = self.lock();
            if let Some(job) = state.job.as_mut() {
                job.active -= 1;
            }
            self.left.notify_all();
        }
    }

    /// Posts a job for up to `extra` helpers, starting helper threads up to
    /// that many; false when another launch holds the helpers.
    fn post(&'static self, extra: usize, work: *const Work<'static>) -> bool {
        let mut state = self.lock();
        if state.job.is_some() {
            return false;
        }
        while state.started < extra {
            let spawned = std::thread::Builder::new()
                .name("software-hip-kernel".into())
                .spawn(move || self.serve());
            if spawned.is_err() {
                // Fewer helpers only cost parallelism.
                break;
            }
            state.started += 1;
        }
        if state.started == 0 {
            return false;
        }
        state.job = Some(Job { work, wanted: extra.min(state.started), active: 0 });
        drop(state);
        self.posted.notify_all();
        true
    }

    /// Takes the job down: no helper joins it any more; returns once every
    /// helper that joined has left.
    fn close(&self) {
        let mut state = self.lock();
        if let Some(job) = state.job.as_mut() {
            job.wanted = 0;
        }
        while state.job.as_ref().is_some_and(|job| job.active > 0) {
            state = self.left.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.job = None;
    }
}

/// Runs `work` on this thread and on up to `extra` helper threads at once
/// (helpers that wake after this thread's call returned do not join); returns
/// once every call has returned. `work` must share its work out itself (a
/// counter of workgroups).
pub fn run(extra: usize, work: &Work<'_>) {
    if extra == 0 {
        work();
        return;
    }
    let helpers = helpers();
    // SAFETY (lifetime): the job is closed, and every helper that joined it has
    // returned from `work`, before this function returns.
    let erased: *const Work<'static> = unsafe { core::mem::transmute(work as *const Work<'_>) };
    let posted = helpers.post(extra, erased);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    if posted {
        helpers.close();
    }
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

#[cfg(test)]
mod tests {
    use super::run;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Shares `items` out through a counter, as a launch shares its workgroups;
    /// returns how often each was taken.
    fn share(extra: usize, items: usize) -> Vec<usize> {
        let next = AtomicUsize::new(0);
        let taken: Vec<AtomicUsize> = (0..items).map(|_| AtomicUsize::new(0)).collect();
        let inside = AtomicUsize::new(0);
        run(extra, &|| {
            inside.fetch_add(1, Ordering::SeqCst);
            loop {
                let item = next.fetch_add(1, Ordering::Relaxed);
                if item >= items {
                    break;
                }
                taken[item].fetch_add(1, Ordering::Relaxed);
                // Long enough for helpers to wake and join.
                std::thread::sleep(Duration::from_micros(20));
            }
            inside.fetch_sub(1, Ordering::SeqCst);
        });
        // Every call that joined has returned once `run` returns.
        assert_eq!(inside.load(Ordering::SeqCst), 0);
        taken.iter().map(|t| t.load(Ordering::Relaxed)).collect()
    }

    #[test]
    fn every_item_runs_once_and_no_helper_outlives_the_call() {
        for extra in [0, 1, 3] {
            for _ in 0..20 {
                assert!(share(extra, 200).iter().all(|&n| n == 1), "{extra} helpers");
            }
        }
    }

    #[test]
    fn launches_from_several_threads_at_once_all_complete() {
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..20 {
                        assert!(share(2, 100).iter().all(|&n| n == 1));
                    }
                });
            }
        });
    }
}
