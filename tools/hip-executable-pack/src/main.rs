//! hip-executable-pack: writes an IREE HIP1 executable from software HIP
//! code objects. Run with --help for the command line.

use hip_executable_pack::{
    check_kernels, has_file_header, Executable, Export, BINDING_INDIRECT, BINDING_READ_ONLY,
};
use std::process::ExitCode;

const USAGE: &str = "\
usage: hip-executable-pack -o OUT.bin --module CODE.so [--module ...] EXPORT...
       hip-executable-pack -o OUT.bin --module CODE.so [--module ...] --exports-from IREE.bin
       hip-executable-pack --dump FILE.bin

Each EXPORT starts with --export NAME and takes these options (defaults in
brackets); exports are numbered in command-line order (entry point ordinals):
  --block X,Y,Z          workgroup size [1,1,1]
  --constants N          number of 32-bit push constants [0]
  --bindings F,F,...     one entry per binding: rw, ro, indirect or ro+indirect
                         [no bindings]
  --shared-memory BYTES  dynamic shared memory per workgroup [0]
  --module-ordinal N     module holding the kernel [the last --module before
                         this --export]
  --debug-name NAME      name in the export's debug info [the kernel name];
                         '-' omits the debug info

--exports-from IREE.bin takes every export (names, block sizes, bindings,
constants, shared memory, module ordinals, debug names) from an existing HIP1
executable, such as the one iree-compile wrote for a GPU, and packs them with
the given modules instead of its own (one --module per module it had).

Other options:
  --no-kernel-check      do not check that each module exports the kernels
                         with bindings+constants parameters
  --file-header          write the 64-byte iree_flatbuffer_file_header_t that
                         IREE 3.13 executables start with (IREE v3.3.0 reads
                         bare flatbuffers); --dump and --exports-from read both
";

fn parse_u32(flag: &str, text: &str) -> Result<u32, String> {
    text.parse::<u32>()
        .map_err(|_| format!("{flag}: expected a non-negative integer, got `{text}`"))
}

fn parse_binding(text: &str) -> Result<u64, String> {
    let mut flags = 0u64;
    for word in text.split('+') {
        flags |= match word {
            "rw" => 0,
            "ro" => BINDING_READ_ONLY,
            "indirect" => BINDING_INDIRECT,
            _ => {
                return Err(format!(
                    "--bindings: unknown binding flag `{word}` (rw, ro, indirect)"
                ))
            }
        };
    }
    Ok(flags)
}

/// The export that per-export options apply to: the last one started.
fn current<'a>(exports: &'a mut [Export], flag: &str) -> Result<&'a mut Export, String> {
    exports
        .last_mut()
        .ok_or_else(|| format!("{flag} must follow an --export"))
}

struct Command {
    output: Option<String>,
    dump: Option<String>,
    module_paths: Vec<String>,
    exports: Vec<Export>,
    exports_from: Option<String>,
    check_kernels: bool,
    file_header: bool,
}

fn parse_command_line(args: &[String]) -> Result<Command, String> {
    let mut command = Command {
        output: None,
        dump: None,
        module_paths: Vec::new(),
        exports: Vec::new(),
        exports_from: None,
        check_kernels: true,
        file_header: false,
    };
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        let mut value = || {
            iter.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "-o" | "--output" => command.output = Some(value()?),
            "--dump" => command.dump = Some(value()?),
            "--module" => command.module_paths.push(value()?),
            "--exports-from" => command.exports_from = Some(value()?),
            "--no-kernel-check" => command.check_kernels = false,
            "--file-header" => command.file_header = true,
            "--export" => {
                let name = value()?;
                // The last module so far; validation reports a missing one.
                let module_ordinal = command.module_paths.len().saturating_sub(1) as u32;
                command.exports.push(Export {
                    kernel_name: name.clone(),
                    module_ordinal,
                    block_dims: [1, 1, 1],
                    block_shared_memory_size: 0,
                    constant_count: 0,
                    binding_flags: Vec::new(),
                    debug_name: Some(name),
                });
            }
            "--block" => {
                let text = value()?;
                let dims: Vec<u32> = text
                    .split(',')
                    .map(|d| parse_u32("--block", d))
                    .collect::<Result<_, _>>()?;
                let dims: [u32; 3] = dims
                    .try_into()
                    .map_err(|_| format!("--block: expected X,Y,Z, got `{text}`"))?;
                current(&mut command.exports, flag)?.block_dims = dims;
            }
            "--constants" => {
                let n = parse_u32(flag, &value()?)?;
                current(&mut command.exports, flag)?.constant_count = n;
            }
            "--bindings" => {
                let flags = value()?
                    .split(',')
                    .map(parse_binding)
                    .collect::<Result<_, _>>()?;
                current(&mut command.exports, flag)?.binding_flags = flags;
            }
            "--shared-memory" => {
                let n = parse_u32(flag, &value()?)?;
                current(&mut command.exports, flag)?.block_shared_memory_size = n;
            }
            "--module-ordinal" => {
                let n = parse_u32(flag, &value()?)?;
                current(&mut command.exports, flag)?.module_ordinal = n;
            }
            "--debug-name" => {
                let name = value()?;
                current(&mut command.exports, flag)?.debug_name = (name != "-").then_some(name);
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(command)
}

fn dump(path: &str) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let executable = Executable::parse(&bytes).map_err(|e| format!("{path}: {}", e.0))?;
    let header = if has_file_header(&bytes) { " (IREE 3.13 file header)" } else { "" };
    println!("{path}: HIP1{header}, {} bytes", bytes.len());
    for (i, module) in executable.modules.iter().enumerate() {
        println!("  module {i}: {} bytes", module.len());
    }
    for (i, e) in executable.exports.iter().enumerate() {
        println!(
            "  export {i}: {} module={} block={:?} shared={} constants={} bindings={:?} debug_name={:?}",
            e.kernel_name,
            e.module_ordinal,
            e.block_dims,
            e.block_shared_memory_size,
            e.constant_count,
            e.binding_flags,
            e.debug_name
        );
    }
    Ok(())
}

fn run(args: &[String]) -> Result<(), String> {
    let command = parse_command_line(args)?;
    if let Some(path) = &command.dump {
        return dump(path);
    }
    let output = command.output.ok_or("missing -o OUT.bin")?;
    let mut modules = Vec::new();
    for path in &command.module_paths {
        modules.push(std::fs::read(path).map_err(|e| format!("{path}: {e}"))?);
    }
    let exports = match &command.exports_from {
        None => command.exports,
        Some(_) if !command.exports.is_empty() => {
            return Err("--exports-from replaces every --export: give one or the other".into())
        }
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
            let original = Executable::parse(&bytes).map_err(|e| format!("{path}: {}", e.0))?;
            if original.modules.len() != modules.len() {
                return Err(format!(
                    "{path} has {} modules; give as many --module files (got {})",
                    original.modules.len(),
                    modules.len()
                ));
            }
            original.exports
        }
    };
    let executable = Executable { modules, exports };
    if command.check_kernels {
        check_kernels(&executable)?;
    }
    let bytes = if command.file_header {
        executable.pack_with_file_header()?
    } else {
        executable.pack()?
    };
    std::fs::write(&output, bytes).map_err(|e| format!("{output}: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) if message.is_empty() => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("hip-executable-pack: {message}");
            ExitCode::FAILURE
        }
    }
}
