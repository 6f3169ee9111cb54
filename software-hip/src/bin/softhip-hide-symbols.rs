//! softhip-hide-symbols INPUT.so OUTPUT.so [NAME...]
//!
//! Writes a copy of a libamdhip64.so in which the named exported symbols cannot be found by
//! dlsym. Names come from the arguments, or else from SOFTWARE_HIP_HIDE_SYMBOLS=a,b,c.

use amdhip64::hide_symbols::{names_from_env, write_copy_with_hidden_symbols, HIDE_SYMBOLS_ENV};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 || args.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!("usage: softhip-hide-symbols INPUT.so OUTPUT.so [NAME...]  (or names in {HIDE_SYMBOLS_ENV})");
        return ExitCode::from(2);
    }
    let (input, output) = (PathBuf::from(&args[0]), PathBuf::from(&args[1]));
    let names: Vec<String> = if args.len() > 2 { args[2..].to_vec() } else { names_from_env() };
    if names.is_empty() {
        eprintln!("softhip-hide-symbols: no symbol names given (arguments or {HIDE_SYMBOLS_ENV})");
        return ExitCode::from(2);
    }
    match write_copy_with_hidden_symbols(&input, &output, &names) {
        Ok(()) => {
            println!("wrote {} with {} symbol(s) hidden: {}", output.display(), names.len(), names.join(","));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("softhip-hide-symbols: {message}");
            ExitCode::FAILURE
        }
    }
}
