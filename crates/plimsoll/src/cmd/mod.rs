//! One module per subcommand: its arguments (clap derive) and the call into the crate
//! that does the work. Each returns the process's exit code.

pub mod bench;
pub mod compare;
pub mod demo;
pub mod floor;
pub mod history;
pub mod mock;
pub mod ramp;
pub mod run;

/// A multi-threaded tokio runtime for a subcommand.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}

/// `--cpus` and `--mem` as a cap, defaults filled in.
pub fn cap_spec(cpus: Option<f64>, mem: Option<&str>) -> Result<cap::CapSpec, String> {
    let d = cap::CapSpec::default();
    let cpus = cpus.unwrap_or(d.cpus);
    if cpus.is_nan() || cpus <= 0.0 {
        return Err(format!("--cpus {cpus}: must be more than 0"));
    }
    Ok(cap::CapSpec {
        cpus,
        mem_bytes: mem.map(cap::parse_mem).transpose()?.unwrap_or(d.mem_bytes),
    })
}
