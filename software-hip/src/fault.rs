//! Fault injection: `SOFTWARE_HIP_FAIL=hipMalloc:3:hipErrorOutOfMemory[,name:N:error...]`
//! makes the Nth call (1-based) of the named entry point fail with the given error: a HIP
//! error name or number, or for an RCCL entry point (`nccl...`) an NCCL result name or number
//! (`ncclAllReduce:1:ncclRemoteError`).
//!
//! The variable is read once, the first time any entry point runs.
//!
//! `SOFTWARE_HIP_CALL_COUNTS=<file>` writes, when the process exits, how many times each
//! entry point was called (`name count` per line): what a fault sweep needs to know which
//! calls a program makes (iree-harness/faults/sweep.py). `%p` in the path is replaced by the
//! process id, so that the ranks of an MPI job each write their own file.
//!
//! Every call is also counted for `SOFTWARE_HIP_STATS` (crate::stats) when that is set.

use crate::errors::{parse_error, HipResult};
use crate::types::hipError_t;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::OnceLock;

/// One `name:N:error` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailRule {
    pub function: String,
    pub call_number: u64,
    pub error: hipError_t,
}

/// Parses the `SOFTWARE_HIP_FAIL` syntax; malformed rules are reported, not ignored silently.
pub fn parse_fail_rules(spec: &str) -> Result<Vec<FailRule>, String> {
    spec.split(',')
        .map(str::trim)
        .filter(|rule| !rule.is_empty())
        .map(|rule| {
            let parts: Vec<&str> = rule.split(':').collect();
            let [function, nth, error] = parts[..] else {
                return Err(format!("rule '{rule}' is not name:N:error"));
            };
            let call_number: u64 = nth
                .trim()
                .parse()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| format!("rule '{rule}': N must be a number >= 1"))?;
            let function = function.trim();
            let error = if function.starts_with("nccl") { parse_nccl_result(error) } else { parse_error(error) }
                .ok_or_else(|| format!("rule '{rule}': unknown error '{error}'"))?;
            Ok(FailRule { function: function.to_string(), call_number, error })
        })
        .collect()
}

/// An NCCL result by name (`ncclRemoteError`) or number; RCCL entry points return it as is.
fn parse_nccl_result(text: &str) -> Option<hipError_t> {
    use crate::rccl::types::*;
    const NAMES: &[(&str, ncclResult_t)] = &[
        ("ncclUnhandledCudaError", ncclUnhandledCudaError),
        ("ncclSystemError", ncclSystemError),
        ("ncclInternalError", ncclInternalError),
        ("ncclInvalidArgument", ncclInvalidArgument),
        ("ncclInvalidUsage", ncclInvalidUsage),
        ("ncclRemoteError", ncclRemoteError),
        ("ncclInProgress", ncclInProgress),
    ];
    crate::errors::parse_code(text, NAMES.iter().copied())
}

struct FaultState {
    rules: Vec<FailRule>,
    calls: Mutex<HashMap<&'static str, u64>>,
    counts_file: Option<String>,
    /// `SOFTWARE_HIP_STATS` is set: every call is counted for its samples.
    stats: bool,
}

/// Writes the call counts to `SOFTWARE_HIP_CALL_COUNTS` (registered with atexit; C calls
/// it, so no panic may leave it).
extern "C" fn write_call_counts() {
    let _ = std::panic::catch_unwind(|| {
        let state = state();
        let Some(path) = &state.counts_file else { return };
        let mut lines: Vec<String> =
            state.calls.lock().iter().map(|(name, count)| format!("{name} {count}\n")).collect();
        lines.sort();
        if let Err(error) = std::fs::write(path, lines.concat()) {
            eprintln!("software-hip: cannot write SOFTWARE_HIP_CALL_COUNTS file {path}: {error}");
        }
    });
}

fn state() -> &'static FaultState {
    static STATE: OnceLock<FaultState> = OnceLock::new();
    STATE.get_or_init(|| {
        let rules = match std::env::var("SOFTWARE_HIP_FAIL") {
            Ok(spec) => parse_fail_rules(&spec).unwrap_or_else(|message| {
                eprintln!("software-hip: ignoring SOFTWARE_HIP_FAIL: {message}");
                Vec::new()
            }),
            Err(_) => Vec::new(),
        };
        let counts_file = crate::runtime::output_path("SOFTWARE_HIP_CALL_COUNTS");
        if counts_file.is_some() {
            // SAFETY: registers a plain extern "C" function without arguments.
            unsafe { libc::atexit(write_call_counts) };
        }
        let stats = crate::stats::enabled();
        if stats {
            crate::stats::start();
        }
        FaultState { rules, calls: Mutex::new(HashMap::new()), counts_file, stats }
    })
}

/// Counts a call of `function` and fails it when a rule names this call.
pub fn check(function: &'static str) -> HipResult<()> {
    let state = state();
    if state.stats {
        crate::stats::count_call();
    }
    if state.counts_file.is_none() && !state.rules.iter().any(|rule| rule.function == function) {
        return Ok(());
    }
    let call_number = {
        let mut calls = state.calls.lock();
        let count = calls.entry(function).or_insert(0);
        *count += 1;
        *count
    };
    match state.rules.iter().find(|rule| rule.function == function && rule.call_number == call_number) {
        Some(rule) => Err(rule.error),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::*;

    #[test]
    fn parses_rules_with_names_and_numbers() {
        let rules = parse_fail_rules("hipMalloc:3:hipErrorOutOfMemory, hipFree:1:1").unwrap();
        assert_eq!(rules[0], FailRule { function: "hipMalloc".into(), call_number: 3, error: hipErrorOutOfMemory });
        assert_eq!(rules[1].error, hipErrorInvalidValue);
    }

    #[test]
    fn rccl_rules_take_nccl_result_names() {
        let rules = parse_fail_rules("ncclAllReduce:2:ncclRemoteError,ncclCommInitRank:1:2").unwrap();
        assert_eq!(rules[0].error, crate::rccl::types::ncclRemoteError);
        assert_eq!(rules[1].error, crate::rccl::types::ncclSystemError);
        // A HIP name is not an NCCL result (the codes differ), nor the reverse.
        assert!(parse_fail_rules("ncclAllReduce:1:hipErrorOutOfMemory").is_err());
        assert!(parse_fail_rules("hipMalloc:1:ncclRemoteError").is_err());
    }

    #[test]
    fn rejects_malformed_rules() {
        assert!(parse_fail_rules("hipMalloc:0:hipErrorOutOfMemory").is_err());
        assert!(parse_fail_rules("hipMalloc:2").is_err());
        assert!(parse_fail_rules("hipMalloc:2:hipErrorNoSuchThing").is_err());
    }
}
